/**
 * The Linode API as the controllers use it. The only runtime importer of `@linode/api-v4`: typed with
 * its models, sent through its axios instance, paged, retried, fenced and counted by `ApiCaller`.
 */
import {
  deleteFirewall,
  deleteFirewallDevice,
  deleteNodeBalancer,
  deleteNodeBalancerConfig,
  deleteNodeBalancerConfigNode,
  type Filter,
  getFirewall,
  getFirewallDevices,
  getFirewalls,
  getLinode,
  getLinodeConfigs,
  getLinodes,
  getNodeBalancer,
  getNodeBalancerConfigs,
  getNodeBalancerFirewalls,
  getNodeBalancers,
  getVPC,
  getVPCIPs,
  getVPCs,
  getVPCsIPs,
  type Params,
  type ResourcePage,
  updateConfigInterface,
  updateFirewall,
  updateFirewallRules,
  updateNodeBalancer,
} from "@linode/api-v4";
import type {
  Config,
  CreateFirewallPayload,
  CreateNodeBalancerConfig,
  CreateNodeBalancerConfigNode,
  CreateNodeBalancerPayload,
  Firewall,
  FirewallDevice,
  FirewallDevicePayload,
  FirewallRules,
  Interface,
  Linode,
  NodeBalancer,
  NodeBalancerConfig,
  NodeBalancerConfigNode,
  UpdateFirewallPayload,
  UpdateFirewallRules,
  UpdateNodeBalancerConfigNode,
  VPC,
  VPCIP,
} from "@linode/api-v4";
import { ApiCaller, type CallerOptions, type CallSpec } from "./caller.ts";
import { LinodeApiError } from "./errors.ts";
import { collectPages, PAGE_SIZE, PagingError } from "./paging.ts";
import { type HttpMethod, rawRequest } from "./transport.ts";

export type { Filter };

/** Options of `LinodeClient` (see `CallerOptions`). */
export type LinodeClientOptions = CallerOptions;

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call, including its retry sleeps; the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** The `ip_ranges` write of the route controller. */
export interface IpRangesUpdate {
  ip_ranges: string[];
}

type Paged<T> = (params: Params) => Promise<ResourcePage<T>>;

function spec(method: HttpMethod, route: string, action: string, options?: CallOptions): CallSpec {
  return { method, route, action, signal: options?.signal };
}

/** Linode API client: base URL and token per instance, paging at 500, retries, fence, metrics. */
export class LinodeClient {
  readonly #caller: ApiCaller;

  constructor(options: LinodeClientOptions) {
    this.#caller = new ApiCaller(options);
  }

  /** Requests sent by this client, keyed `"GET /linode/instances"`; every attempt counts. */
  callCounts(): Record<string, number> {
    return this.#caller.callCounts();
  }

  // ---- instances -------------------------------------------------------------------------------

  /** All Linodes matching `filter` (X-Filter), every page. */
  listInstances(filter?: Filter, options?: CallOptions): Promise<Linode[]> {
    const s = spec("GET", "/linode/instances", "list linode instances", options);
    return this.#list(s, (p) => getLinodes(p, filter));
  }

  /** One Linode; 404 → `LinodeApiError` with kind `not_found`. */
  getInstance(linodeId: number, options?: CallOptions): Promise<Linode> {
    const s = spec("GET", "/linode/instances/{id}", `get linode ${linodeId}`, options);
    return this.#caller.run(s, () => getLinode(linodeId));
  }

  /** The configuration profiles of a Linode (with their interfaces). */
  listInstanceConfigs(linodeId: number, options?: CallOptions): Promise<Config[]> {
    const s = spec("GET", "/linode/instances/{id}/configs", `list configs of linode ${linodeId}`, options);
    return this.#list(s, (p) => getLinodeConfigs(linodeId, p));
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
    return this.#caller.run(s, () => updateConfigInterface(linodeId, configId, interfaceId, body));
  }

  // ---- VPCs ------------------------------------------------------------------------------------

  /** All VPCs matching `filter`. */
  listVPCs(filter?: Filter, options?: CallOptions): Promise<VPC[]> {
    return this.#list(spec("GET", "/vpcs", "list vpcs", options), (p) => getVPCs(p, filter));
  }

  /** One VPC with its subnets. */
  getVPC(vpcId: number, options?: CallOptions): Promise<VPC> {
    return this.#caller.run(spec("GET", "/vpcs/{id}", `get vpc ${vpcId}`, options), () => getVPC(vpcId));
  }

  /** Every address and routed range of one VPC. */
  listVPCIPs(vpcId: number, filter?: Filter, options?: CallOptions): Promise<VPCIP[]> {
    const s = spec("GET", "/vpcs/{id}/ips", `list ips of vpc ${vpcId}`, options);
    return this.#list(s, (p) => getVPCIPs(vpcId, p, filter));
  }

  /** Every VPC address of the account. */
  listAllVPCIPs(filter?: Filter, options?: CallOptions): Promise<VPCIP[]> {
    return this.#list(spec("GET", "/vpcs/ips", "list vpc ips", options), (p) => getVPCsIPs(p, filter));
  }

  // ---- NodeBalancers ---------------------------------------------------------------------------

  /** All NodeBalancers matching `filter`. */
  listNodeBalancers(filter?: Filter, options?: CallOptions): Promise<NodeBalancer[]> {
    const s = spec("GET", "/nodebalancers", "list nodebalancers", options);
    return this.#list(s, (p) => getNodeBalancers(p, filter));
  }

  /** One NodeBalancer. */
  getNodeBalancer(nodeBalancerId: number, options?: CallOptions): Promise<NodeBalancer> {
    const s = spec("GET", "/nodebalancers/{id}", `get nodebalancer ${nodeBalancerId}`, options);
    return this.#caller.run(s, () => getNodeBalancer(nodeBalancerId));
  }

  /** Creates a NodeBalancer (sent as is: api-v4 would reject zero-node configs). Not retried after a timeout. */
  createNodeBalancer(body: CreateNodeBalancerPayload, options?: CallOptions): Promise<NodeBalancer> {
    const s = spec("POST", "/nodebalancers", "create nodebalancer", options);
    return this.#caller.run(s, () => rawRequest<NodeBalancer>("POST", "/nodebalancers", { data: body }));
  }

  /** Updates label, tags or throttles of a NodeBalancer. */
  updateNodeBalancer(
    nodeBalancerId: number,
    body: Partial<NodeBalancer>,
    options?: CallOptions,
  ): Promise<NodeBalancer> {
    const s = spec("PUT", "/nodebalancers/{id}", `update nodebalancer ${nodeBalancerId}`, options);
    return this.#caller.run(s, () => updateNodeBalancer(nodeBalancerId, body));
  }

  /** Deletes a NodeBalancer; a retry that finds it gone counts as done. */
  deleteNodeBalancer(nodeBalancerId: number, options?: CallOptions): Promise<void> {
    const s = spec("DELETE", "/nodebalancers/{id}", `delete nodebalancer ${nodeBalancerId}`, options);
    return this.#delete(s, () => deleteNodeBalancer(nodeBalancerId));
  }

  /** The configs (ports) of a NodeBalancer. */
  listNodeBalancerConfigs(nodeBalancerId: number, options?: CallOptions): Promise<NodeBalancerConfig[]> {
    const action = `list configs of nodebalancer ${nodeBalancerId}`;
    const s = spec("GET", "/nodebalancers/{id}/configs", action, options);
    return this.#list(s, (p) => getNodeBalancerConfigs(nodeBalancerId, p));
  }

  /** Adds a config (port); zero nodes allowed. */
  createNodeBalancerConfig(
    nodeBalancerId: number,
    body: CreateNodeBalancerConfig,
    options?: CallOptions,
  ): Promise<NodeBalancerConfig> {
    const s = spec(
      "POST",
      "/nodebalancers/{id}/configs",
      `create config on nodebalancer ${nodeBalancerId}`,
      options,
    );
    return this.#caller.run(
      s,
      () => rawRequest("POST", `/nodebalancers/${nodeBalancerId}/configs`, { data: body }),
    );
  }

  /** Updates a config's settings (not its nodes). */
  updateNodeBalancerConfig(
    nodeBalancerId: number,
    configId: number,
    body: CreateNodeBalancerConfig,
    options?: CallOptions,
  ): Promise<NodeBalancerConfig> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}`;
    const s = spec(
      "PUT",
      "/nodebalancers/{id}/configs/{id}",
      `update config ${configId} of nodebalancer ${nodeBalancerId}`,
      options,
    );
    return this.#caller.run(s, () => rawRequest("PUT", path, { data: body }));
  }

  /** Removes a config (port). */
  deleteNodeBalancerConfig(nodeBalancerId: number, configId: number, options?: CallOptions): Promise<void> {
    const action = `delete config ${configId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("DELETE", "/nodebalancers/{id}/configs/{id}", action, options);
    return this.#delete(s, () => deleteNodeBalancerConfig(nodeBalancerId, configId));
  }

  /**
   * Replaces a config's settings and whole node list in one call. Nodes keep their `id`s (api-v4's own
   * rebuild drops them). Idempotent, so retried like a PUT.
   */
  rebuildNodeBalancerConfig(
    nodeBalancerId: number,
    configId: number,
    body: RebuildConfigBody,
    options?: CallOptions,
  ): Promise<NodeBalancerConfig> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}/rebuild`;
    const action = `rebuild config ${configId} of nodebalancer ${nodeBalancerId}`;
    const s = {
      ...spec("POST", "/nodebalancers/{id}/configs/{id}/rebuild", action, options),
      idempotent: true,
    };
    return this.#caller.run(s, () => rawRequest("POST", path, { data: body }));
  }

  /** The backend nodes of a config. */
  listNodeBalancerConfigNodes(
    nodeBalancerId: number,
    configId: number,
    options?: CallOptions,
  ): Promise<NodeBalancerConfigNode[]> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}/nodes`;
    const action = `list nodes of config ${configId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("GET", "/nodebalancers/{id}/configs/{id}/nodes", action, options);
    // api-v4's getNodeBalancerConfigNodes takes no paging parameters.
    return this.#list(s, (p) => rawRequest("GET", path, { params: pageParams(p) }));
  }

  /** Adds a backend node (any label length: the API, not api-v4, validates). */
  createNodeBalancerConfigNode(
    nodeBalancerId: number,
    configId: number,
    body: CreateNodeBalancerConfigNode,
    options?: CallOptions,
  ): Promise<NodeBalancerConfigNode> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}/nodes`;
    const action = `create node on config ${configId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("POST", "/nodebalancers/{id}/configs/{id}/nodes", action, options);
    return this.#caller.run(s, () => rawRequest("POST", path, { data: body }));
  }

  /** Updates a backend node. */
  updateNodeBalancerConfigNode(
    nodeBalancerId: number,
    configId: number,
    nodeId: number,
    body: UpdateNodeBalancerConfigNode,
    options?: CallOptions,
  ): Promise<NodeBalancerConfigNode> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}/nodes/${nodeId}`;
    const action = `update node ${nodeId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("PUT", "/nodebalancers/{id}/configs/{id}/nodes/{id}", action, options);
    return this.#caller.run(s, () => rawRequest("PUT", path, { data: body }));
  }

  /** Removes a backend node. */
  deleteNodeBalancerConfigNode(
    nodeBalancerId: number,
    configId: number,
    nodeId: number,
    options?: CallOptions,
  ): Promise<void> {
    const action = `delete node ${nodeId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("DELETE", "/nodebalancers/{id}/configs/{id}/nodes/{id}", action, options);
    return this.#delete(s, () => deleteNodeBalancerConfigNode(nodeBalancerId, configId, nodeId));
  }

  /** Firewalls attached to a NodeBalancer. */
  listNodeBalancerFirewalls(nodeBalancerId: number, options?: CallOptions): Promise<Firewall[]> {
    const action = `list firewalls of nodebalancer ${nodeBalancerId}`;
    const s = spec("GET", "/nodebalancers/{id}/firewalls", action, options);
    return this.#list(s, (p) => getNodeBalancerFirewalls(nodeBalancerId, p));
  }

  // ---- firewalls -------------------------------------------------------------------------------

  /** All Cloud Firewalls matching `filter`. */
  listFirewalls(filter?: Filter, options?: CallOptions): Promise<Firewall[]> {
    const s = spec("GET", "/networking/firewalls", "list firewalls", options);
    return this.#list(s, (p) => getFirewalls(p, filter));
  }

  /** One firewall. */
  getFirewall(firewallId: number, options?: CallOptions): Promise<Firewall> {
    const s = spec("GET", "/networking/firewalls/{id}", `get firewall ${firewallId}`, options);
    return this.#caller.run(s, () => getFirewall(firewallId));
  }

  /** Creates a firewall (sent as is). Not retried after a timeout. */
  createFirewall(body: CreateFirewallPayload, options?: CallOptions): Promise<Firewall> {
    const s = spec("POST", "/networking/firewalls", "create firewall", options);
    return this.#caller.run(s, () => rawRequest<Firewall>("POST", "/networking/firewalls", { data: body }));
  }

  /** Updates a firewall's label, tags or status. */
  updateFirewall(firewallId: number, body: UpdateFirewallPayload, options?: CallOptions): Promise<Firewall> {
    const s = spec("PUT", "/networking/firewalls/{id}", `update firewall ${firewallId}`, options);
    return this.#caller.run(s, () => updateFirewall(firewallId, body));
  }

  /** Deletes a firewall; a retry that finds it gone counts as done. */
  deleteFirewall(firewallId: number, options?: CallOptions): Promise<void> {
    const s = spec("DELETE", "/networking/firewalls/{id}", `delete firewall ${firewallId}`, options);
    return this.#delete(s, () => deleteFirewall(firewallId));
  }

  /** A firewall's rules (a single object, though api-v4 types it as a page). */
  getFirewallRules(firewallId: number, options?: CallOptions): Promise<FirewallRules> {
    const path = `/networking/firewalls/${firewallId}/rules`;
    const s = spec("GET", "/networking/firewalls/{id}/rules", `get rules of firewall ${firewallId}`, options);
    return this.#caller.run(s, () => rawRequest<FirewallRules>("GET", path));
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
    return this.#caller.run(s, () => updateFirewallRules(firewallId, rules));
  }

  /** Devices (Linodes, NodeBalancers) a firewall protects. */
  listFirewallDevices(firewallId: number, options?: CallOptions): Promise<FirewallDevice[]> {
    const action = `list devices of firewall ${firewallId}`;
    const s = spec("GET", "/networking/firewalls/{id}/devices", action, options);
    return this.#list(s, (p) => getFirewallDevices(firewallId, p));
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
    return this.#caller.run(s, () => rawRequest<FirewallDevice>("POST", path, { data: body }));
  }

  /** Detaches a device from a firewall. */
  deleteFirewallDevice(firewallId: number, deviceId: number, options?: CallOptions): Promise<void> {
    const action = `detach device ${deviceId} from firewall ${firewallId}`;
    const s = spec("DELETE", "/networking/firewalls/{id}/devices/{id}", action, options);
    return this.#delete(s, () => deleteFirewallDevice(firewallId, deviceId));
  }

  // ---- helpers ---------------------------------------------------------------------------------

  async #list<T>(s: CallSpec, fetchPage: Paged<T>): Promise<T[]> {
    try {
      return await collectPages((page) =>
        this.#caller.run(s, () => fetchPage({ page, page_size: PAGE_SIZE }))
      );
    } catch (e) {
      if (!(e instanceof PagingError)) throw e;
      // Retryable ("server"): the listing moved while we walked it; a later walk will be consistent.
      throw new LinodeApiError(s.action, {
        status: 0,
        kind: "server",
        method: s.method,
        route: s.route,
        reasons: [{ reason: e.message }],
      });
    }
  }

  async #delete(s: CallSpec, send: () => Promise<unknown>): Promise<void> {
    await this.#caller.run(s, async () => {
      await send();
    }, () => undefined);
  }
}

/** A rebuild body: config settings plus the full node list, existing nodes identified by `id`. */
export type RebuildConfigBody = CreateNodeBalancerConfig & {
  nodes: Array<CreateNodeBalancerConfigNode & { id?: number }>;
};

function pageParams(p: Params): Record<string, number> {
  return { page: p.page ?? 1, page_size: p.page_size ?? PAGE_SIZE };
}
