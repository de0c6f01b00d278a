/**
 * The Linode API as the controllers use it. `linode/` is the only runtime importer of `@linode/api-v4`:
 * calls are typed with its models, sent through its axios instance, and paged, retried, fenced and
 * counted by `ApiCaller`. NodeBalancer calls live in `nodebalancers.ts`.
 */
import {
  deleteFirewall,
  deleteFirewallDevice,
  type Filter,
  getFirewall,
  getFirewallDevices,
  getFirewalls,
  getLinode,
  getLinodeConfigs,
  getLinodes,
  getProfile,
  getVPC,
  getVPCIPs,
  getVPCs,
  getVPCsIPs,
  updateConfigInterface,
  updateFirewall,
  updateFirewallRules,
} from "@linode/api-v4";
import type {
  Config,
  CreateFirewallPayload,
  Firewall,
  FirewallDevice,
  FirewallDevicePayload,
  FirewallRules,
  Interface,
  Linode,
  Profile,
  UpdateFirewallPayload,
  UpdateFirewallRules,
  VPC,
  VPCIP,
} from "@linode/api-v4";
import { ApiCaller, type CallerOptions, type CallOptions, callSpec as spec } from "./caller.ts";
import { NodeBalancerApi } from "./nodebalancers.ts";
import { rawRequest } from "./transport.ts";

export type { CallOptions, Filter };

/** Options of `LinodeClient` (see `CallerOptions`). */
export type LinodeClientOptions = CallerOptions;

/** The `ip_ranges` write of the route controller. */
export interface IpRangesUpdate {
  ip_ranges: string[];
}

/** Linode API client: base URL and token per instance, paging at 500, retries, fence, metrics. */
export class LinodeClient extends NodeBalancerApi {
  constructor(options: LinodeClientOptions) {
    super(new ApiCaller(options));
  }

  /** Requests sent by this client, keyed `"GET /linode/instances"`; every attempt counts. */
  callCounts(): Record<string, number> {
    return this.caller.callCounts();
  }

  /** All Linodes matching `filter` (X-Filter), every page. */
  listInstances(filter?: Filter, options?: CallOptions): Promise<Linode[]> {
    const s = spec("GET", "/linode/instances", "list linode instances", options);
    return this.caller.list(s, (p) => getLinodes(p, filter));
  }

  /** One Linode; 404 → `LinodeApiError` with kind `not_found`. */
  getInstance(linodeId: number, options?: CallOptions): Promise<Linode> {
    const s = spec("GET", "/linode/instances/{id}", `get linode ${linodeId}`, options);
    return this.caller.run(s, () => getLinode(linodeId));
  }

  /** The configuration profiles of a Linode (with their interfaces). */
  listInstanceConfigs(linodeId: number, options?: CallOptions): Promise<Config[]> {
    const s = spec("GET", "/linode/instances/{id}/configs", `list configs of linode ${linodeId}`, options);
    return this.caller.list(s, (p) => getLinodeConfigs(linodeId, p));
  }

  /** Replaces the routed `ip_ranges` of a VPC interface (idempotent, so retried). */
  updateConfigInterface(
    linodeId: number,
    configId: number,
    interfaceId: number,
    body: IpRangesUpdate,
    options?: CallOptions,
  ): Promise<Interface> {
    const route = "/linode/instances/{id}/configs/{id}/interfaces/{id}";
    const s = spec("PUT", route, `update ip_ranges on linode ${linodeId}`, options);
    return this.caller.run(s, () => updateConfigInterface(linodeId, configId, interfaceId, body));
  }

  /** The user behind the token: the cheapest call that proves the token is accepted (401 when not). */
  getProfile(options?: CallOptions): Promise<Profile> {
    const s = spec("GET", "/profile", "read the profile of the API token", options);
    return this.caller.run(s, () => getProfile());
  }

  /** All VPCs matching `filter`. */
  listVPCs(filter?: Filter, options?: CallOptions): Promise<VPC[]> {
    return this.caller.list(spec("GET", "/vpcs", "list vpcs", options), (p) => getVPCs(p, filter));
  }

  /** One VPC with its subnets. */
  getVPC(vpcId: number, options?: CallOptions): Promise<VPC> {
    return this.caller.run(spec("GET", "/vpcs/{id}", `get vpc ${vpcId}`, options), () => getVPC(vpcId));
  }

  /** Every address and routed range of one VPC. */
  listVPCIPs(vpcId: number, filter?: Filter, options?: CallOptions): Promise<VPCIP[]> {
    const s = spec("GET", "/vpcs/{id}/ips", `list ips of vpc ${vpcId}`, options);
    return this.caller.list(s, (p) => getVPCIPs(vpcId, p, filter));
  }

  /** Every VPC address of the account. */
  listAllVPCIPs(filter?: Filter, options?: CallOptions): Promise<VPCIP[]> {
    return this.caller.list(spec("GET", "/vpcs/ips", "list vpc ips", options), (p) => getVPCsIPs(p, filter));
  }

  /** All Cloud Firewalls matching `filter`. */
  listFirewalls(filter?: Filter, options?: CallOptions): Promise<Firewall[]> {
    const s = spec("GET", "/networking/firewalls", "list firewalls", options);
    return this.caller.list(s, (p) => getFirewalls(p, filter));
  }

  /** One firewall. */
  getFirewall(firewallId: number, options?: CallOptions): Promise<Firewall> {
    const s = spec("GET", "/networking/firewalls/{id}", `get firewall ${firewallId}`, options);
    return this.caller.run(s, () => getFirewall(firewallId));
  }

  /** Creates a firewall (sent as is). Not retried after a timeout. */
  createFirewall(body: CreateFirewallPayload, options?: CallOptions): Promise<Firewall> {
    const s = spec("POST", "/networking/firewalls", "create firewall", options);
    return this.caller.run(s, () => rawRequest<Firewall>("POST", "/networking/firewalls", { data: body }));
  }

  /** Updates a firewall's label, tags or status. */
  updateFirewall(firewallId: number, body: UpdateFirewallPayload, options?: CallOptions): Promise<Firewall> {
    const s = spec("PUT", "/networking/firewalls/{id}", `update firewall ${firewallId}`, options);
    return this.caller.run(s, () => updateFirewall(firewallId, body));
  }

  /** Deletes a firewall; a retry that finds it gone counts as done. */
  deleteFirewall(firewallId: number, options?: CallOptions): Promise<void> {
    const s = spec("DELETE", "/networking/firewalls/{id}", `delete firewall ${firewallId}`, options);
    return this.caller.remove(s, () => deleteFirewall(firewallId));
  }

  /** A firewall's rules (a single object, though api-v4 types it as a page). */
  getFirewallRules(firewallId: number, options?: CallOptions): Promise<FirewallRules> {
    const path = `/networking/firewalls/${firewallId}/rules`;
    const s = spec("GET", "/networking/firewalls/{id}/rules", `get rules of firewall ${firewallId}`, options);
    return this.caller.run(s, () => rawRequest<FirewallRules>("GET", path));
  }

  /** Replaces a firewall's rules. */
  updateFirewallRules(
    firewallId: number,
    rules: UpdateFirewallRules,
    options?: CallOptions,
  ): Promise<FirewallRules> {
    const s = spec(
      "PUT",
      "/networking/firewalls/{id}/rules",
      `update rules of firewall ${firewallId}`,
      options,
    );
    return this.caller.run(s, () => updateFirewallRules(firewallId, rules));
  }

  /** Devices (Linodes, NodeBalancers) a firewall protects. */
  listFirewallDevices(firewallId: number, options?: CallOptions): Promise<FirewallDevice[]> {
    const action = `list devices of firewall ${firewallId}`;
    const s = spec("GET", "/networking/firewalls/{id}/devices", action, options);
    return this.caller.list(s, (p) => getFirewallDevices(firewallId, p));
  }

  /** Attaches a device to a firewall. */
  createFirewallDevice(
    firewallId: number,
    body: FirewallDevicePayload,
    options?: CallOptions,
  ): Promise<FirewallDevice> {
    const path = `/networking/firewalls/${firewallId}/devices`;
    const s = spec(
      "POST",
      "/networking/firewalls/{id}/devices",
      `attach device to firewall ${firewallId}`,
      options,
    );
    return this.caller.run(s, () => rawRequest<FirewallDevice>("POST", path, { data: body }));
  }

  /** Detaches a device from a firewall. */
  deleteFirewallDevice(firewallId: number, deviceId: number, options?: CallOptions): Promise<void> {
    const action = `detach device ${deviceId} from firewall ${firewallId}`;
    const s = spec("DELETE", "/networking/firewalls/{id}/devices/{id}", action, options);
    return this.caller.remove(s, () => deleteFirewallDevice(firewallId, deviceId));
  }
}
