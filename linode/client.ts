/**
 * The Linode API as the controllers use it: every call the CCM makes, declared once in the tables below (see
 * endpoint.ts for what an entry says and how it runs), and `LinodeClient`, one object per table
 * (`client.nodeBalancers.get(id, options?)`), all sending through one `ApiCaller` (so one call count, one
 * concurrency limit, one rate-limit state). `linode/` is the only runtime importer of `@linode/api-v4`.
 */
import * as api from "@linode/api-v4";
import type {
  CreateFirewallPayload,
  CreateNodeBalancerConfig,
  CreateNodeBalancerConfigNode,
  CreateNodeBalancerPayload,
  Filter,
  FirewallDevice,
  FirewallDevicePayload,
  FirewallRules,
  Interface,
  LinodeInterface,
  NodeBalancerConfig,
  NodeBalancerConfigNode,
  UpdateNodeBalancerConfigNode,
  VPCIP,
} from "@linode/api-v4";
import type { Profile } from "@linode/api-v4";
import { ApiCaller, type CallerOptions, type CallOptions } from "./caller.ts";
import { ANY_OBJECT, type Api, bind, call, collection, list, raw, remove, shapeOf } from "./endpoint.ts";
import { rawRequest } from "./transport.ts";

export type { CallOptions, Filter };

/** Options of `LinodeClient` (see `CallerOptions`). */
export type LinodeClientOptions = CallerOptions;

/** The `ip_ranges` write of the route controller on a legacy configuration-profile interface. */
export interface IpRangesUpdate {
  ip_ranges: string[];
}

/** The body of a routed-range update: `vpc.ipv4.ranges` only; the subnet and the rest are kept. */
export interface VpcRangesUpdate {
  vpc: { ipv4: { ranges: { range: string }[] } };
}

/** A create body: api-v4's payload plus the fields it does not type yet (plan type, reserved IPv4, frontend VPCs). */
export type CreateNodeBalancerRequest = CreateNodeBalancerPayload & {
  type?: string;
  ipv4?: string;
  frontend_vpcs?: CreateNodeBalancerPayload["vpcs"];
};

/** A rebuild body: config settings plus the full node list, existing nodes identified by `id`. */
export type RebuildConfigBody = CreateNodeBalancerConfig & {
  nodes: Array<CreateNodeBalancerConfigNode & { id?: number }>;
};

// ---- What each answer must look like: the fields the CCM reads to identify and match objects.

const PROFILE = shapeOf("a profile", { username: "string" });
const LINODE = shapeOf("a Linode", { id: "number", label: "string", region: "string", ipv4: "array" });
const CONFIG = shapeOf("a configuration profile", { id: "number", interfaces: "array" });
const CONFIG_IFACE = shapeOf("a configuration profile interface", { id: "number", purpose: "string" });
const IFACE = shapeOf("a Linode interface", { id: "number" });
const IFACES = shapeOf("a list of Linode interfaces", { interfaces: "array" });
const VPC = shapeOf("a VPC", { id: "number", label: "string", subnets: "array" });
const VPC_IP = shapeOf("a VPC address", { vpc_id: "number", subnet_id: "number" });
const NB = shapeOf("a NodeBalancer", { id: "number", label: "string", region: "string" });
const NB_CONFIG = shapeOf("a NodeBalancer config", { id: "number", port: "number", protocol: "string" });
const NB_NODE = shapeOf("a NodeBalancer node", { id: "number", address: "string" });
const FW = shapeOf("a firewall", { id: "number", label: "string", status: "string" });
const FW_DEVICE = shapeOf("a firewall device", { id: "number", entity: "object" });
const FW_RULES = shapeOf("firewall rules", { inbound_policy: "string", outbound_policy: "string" });

// ---- The calls.

/** The token's own profile. */
const PROFILE_CALLS = {
  /** The user behind the token: the cheapest call that proves the token is accepted (401 when not). */
  getProfile: call("GET /profile", "GetProfile", "read the profile of the API token", PROFILE)(() =>
    api.getProfile()
  ),
};

/** Linode instance calls: listing, one instance, its configuration profiles and their VPC `ip_ranges`. */
const INSTANCE_CALLS = {
  /** All Linodes matching `filter` (X-Filter), every page. */
  list: list("GET /linode/instances", "ListInstances", "list linode instances", LINODE)(api.getLinodes),
  /** One Linode; 404 → `LinodeApiError` with kind `not_found`. */
  get: call("GET /linode/instances/{id}", "GetInstance", "get linode {0}", LINODE)(api.getLinode),
  /** The configuration profiles of a Linode (with their interfaces). */
  listConfigs: list(
    "GET /linode/instances/{id}/configs",
    "ListInstanceConfigs",
    "list configs of linode {0}",
    CONFIG,
  )((p, linodeId: number) => api.getLinodeConfigs(linodeId, p)),
  /**
   * Replaces the routed `ip_ranges` of a VPC interface (the whole list; idempotent, so retried). Sent raw:
   * api-v4's schema allows at most one range per interface; the API takes a list of them.
   */
  updateConfigInterface: call(
    "PUT /linode/instances/{id}/configs/{id}/interfaces/{id}",
    "UpdateInstanceConfigInterface",
    "update ip_ranges on linode {0}",
    CONFIG_IFACE,
  )(raw<[linodeId: number, configId: number, interfaceId: number, body: IpRangesUpdate], Interface>()),
};

/**
 * Linode interfaces (`interface_generation: "linode"`): interfaces attached to the Linode itself rather than
 * to a configuration profile. The route controller replaces the routed `vpc.ipv4.ranges` of a VPC one.
 */
const INTERFACE_CALLS = {
  /** Every Linode interface of one Linode (the API answers `{interfaces: [...]}`, not a page). */
  list: call(
    "GET /linode/instances/{id}/interfaces",
    "ListInterfaces",
    "list interfaces of linode {0}",
    IFACES,
  )(
    api.getLinodeInterfaces,
    (body) => body.interfaces,
  ),
  /** One Linode interface. */
  get: call(
    "GET /linode/instances/{id}/interfaces/{id}",
    "GetInterface",
    "get interface {1} of linode {0}",
    IFACE,
  )(api.getLinodeInterface),
  /**
   * Replaces the routed IPv4 ranges of a VPC interface (the whole list; `[]` removes the last one). The
   * body leaves out `vpc.subnet_id`: the API does not let an update change it, and linodego's update
   * options no longer carry it. Sent as is, without api-v4's body rewriting. A PUT, so retried.
   */
  updateVpcRanges: call(
    "PUT /linode/instances/{id}/interfaces/{id}",
    "UpdateInterface",
    "update vpc ranges on linode {0}",
    IFACE,
  )(
    (linodeId: number, interfaceId: number, update: { ranges: readonly string[] }) => {
      const body: VpcRangesUpdate = { vpc: { ipv4: { ranges: update.ranges.map((range) => ({ range })) } } };
      return rawRequest<LinodeInterface>("PUT", `/linode/instances/${linodeId}/interfaces/${interfaceId}`, {
        data: body,
      });
    },
  ),
};

/** VPC calls: VPCs with their subnets, and the addresses and routed ranges in them. */
const VPC_CALLS = {
  /** All VPCs matching `filter`. */
  list: list("GET /vpcs", "ListVPCs", "list vpcs", VPC)(api.getVPCs),
  /** One VPC with its subnets. */
  get: call("GET /vpcs/{id}", "GetVPC", "get vpc {0}", VPC)(api.getVPC),
  /** Every address and routed range of one VPC. */
  listIps: list("GET /vpcs/{id}/ips", "ListVPCIPAddresses", "list ips of vpc {0}", VPC_IP)(
    (p, vpcId: number, filter?: Filter) => api.getVPCIPs(vpcId, p, filter),
  ),
  /**
   * Every VPC IPv6 (SLAAC) address of one VPC (api-v4 does not wrap this one): one entry per interface, the
   * addresses under `ipv6_addresses`.
   */
  listIpv6s: list("GET /vpcs/{id}/ipv6s", "ListVPCIPv6Addresses", "list ipv6s of vpc {0}", ANY_OBJECT)(
    raw<[vpcId: number], VPCIP>(),
  ),
  /** Every VPC address of the account. */
  listAllIps: list("GET /vpcs/ips", "ListAllVPCIPAddresses", "list vpc ips", VPC_IP)(api.getVPCsIPs),
};

/** Reserved IPv4 addresses (`/networking/reserved/ips`): released when a Service says not to retain one. */
const RESERVED_IP_CALLS = {
  /** Releases a reserved IPv4 address (sent raw); one already released (with its NodeBalancer) counts as done. */
  deleteReservedIpv4: remove(
    "DELETE /networking/reserved/ips/{address}",
    "DeleteReservedIPAddress",
    "release reserved ip {0}",
    { goneIsDone: true },
  )(raw<[address: string], unknown>()),
};

/** NodeBalancer calls: configs, nodes and attached firewalls. */
const NODEBALANCER_CALLS = {
  /** The configs (ports) of a NodeBalancer. */
  listConfigs: list(
    "GET /nodebalancers/{id}/configs",
    "ListNodeBalancerConfigs",
    "list configs of nodebalancer {0}",
    NB_CONFIG,
  )((p, nodeBalancerId: number) => api.getNodeBalancerConfigs(nodeBalancerId, p)),
  /** Adds a config (port), sent raw, as is. */
  createConfig: call(
    "POST /nodebalancers/{id}/configs",
    "CreateNodeBalancerConfig",
    "create config on nodebalancer {0}",
    NB_CONFIG,
  )(raw<[nodeBalancerId: number, body: CreateNodeBalancerConfig], NodeBalancerConfig>()),
  /** Updates a config's settings (not its nodes). */
  updateConfig: call(
    "PUT /nodebalancers/{id}/configs/{id}",
    "UpdateNodeBalancerConfig",
    "update config {1} of nodebalancer {0}",
    ANY_OBJECT,
  )(raw<[nodeBalancerId: number, configId: number, body: CreateNodeBalancerConfig], NodeBalancerConfig>()),
  /** Removes a config (port). */
  deleteConfig: remove(
    "DELETE /nodebalancers/{id}/configs/{id}",
    "DeleteNodeBalancerConfig",
    "delete config {1} of nodebalancer {0}",
  )(api.deleteNodeBalancerConfig),
  /**
   * Replaces a config's settings and whole node list in one call. Sent raw: nodes keep their `id`s (api-v4's
   * own rebuild drops them). Idempotent, so retried like a PUT.
   */
  rebuildConfig: call(
    "POST /nodebalancers/{id}/configs/{id}/rebuild",
    "RebuildNodeBalancerConfig",
    "rebuild config {1} of nodebalancer {0}",
    NB_CONFIG,
    { idempotent: true },
  )(raw<[nodeBalancerId: number, configId: number, body: RebuildConfigBody], NodeBalancerConfig>()),
  /** The backend nodes of a config (sent raw: api-v4's getNodeBalancerConfigNodes takes no paging parameters). */
  listConfigNodes: list(
    "GET /nodebalancers/{id}/configs/{id}/nodes",
    "ListNodeBalancerNodes",
    "list nodes of config {1} of nodebalancer {0}",
    NB_NODE,
  )(raw<[nodeBalancerId: number, configId: number], NodeBalancerConfigNode>()),
  /** Adds a backend node (sent raw: any label length; the API, not api-v4, validates). */
  createConfigNode: call(
    "POST /nodebalancers/{id}/configs/{id}/nodes",
    "CreateNodeBalancerNode",
    "create node on config {1} of nodebalancer {0}",
    NB_NODE,
  )(
    raw<
      [nodeBalancerId: number, configId: number, body: CreateNodeBalancerConfigNode],
      NodeBalancerConfigNode
    >(),
  ),
  /** Updates a backend node (sent raw, as it is created). */
  updateConfigNode: call(
    "PUT /nodebalancers/{id}/configs/{id}/nodes/{id}",
    "UpdateNodeBalancerNode",
    "update node {2} of nodebalancer {0}",
    NB_NODE,
  )(
    raw<
      [nodeBalancerId: number, configId: number, nodeId: number, body: UpdateNodeBalancerConfigNode],
      NodeBalancerConfigNode
    >(),
  ),
  /** Removes a backend node. */
  deleteConfigNode: remove(
    "DELETE /nodebalancers/{id}/configs/{id}/nodes/{id}",
    "DeleteNodeBalancerNode",
    "delete node {2} of nodebalancer {0}",
  )(api.deleteNodeBalancerConfigNode),
  /** Firewalls attached to a NodeBalancer. */
  listFirewalls: list(
    "GET /nodebalancers/{id}/firewalls",
    "ListNodeBalancerFirewalls",
    "list firewalls of nodebalancer {0}",
    FW,
  )((p, nodeBalancerId: number) => api.getNodeBalancerFirewalls(nodeBalancerId, p)),
  /** NodeBalancers themselves: list, get, create, update and delete. */
  ...collection<CreateNodeBalancerRequest>("/nodebalancers", "NodeBalancer", NB)(
    [api.getNodeBalancers, api.getNodeBalancer, api.updateNodeBalancer, api.deleteNodeBalancer],
  ),
};

/** Cloud Firewall calls: firewalls, their rules and the devices they protect. */
const FIREWALL_CALLS = {
  /** A firewall's rules (sent raw: a single object, though api-v4 types it as a page). */
  getRules: call(
    "GET /networking/firewalls/{id}/rules",
    "GetFirewallRules",
    "get rules of firewall {0}",
    FW_RULES,
  )(raw<[firewallId: number], FirewallRules>()),
  /** Replaces a firewall's rules. */
  updateRules: call(
    "PUT /networking/firewalls/{id}/rules",
    "UpdateFirewallRules",
    "update rules of firewall {0}",
    FW_RULES,
  )(api.updateFirewallRules),
  /** Devices (Linodes, NodeBalancers) a firewall protects. */
  listDevices: list(
    "GET /networking/firewalls/{id}/devices",
    "ListFirewallDevices",
    "list devices of firewall {0}",
    FW_DEVICE,
  )((p, firewallId: number) => api.getFirewallDevices(firewallId, p)),
  /** Attaches a device to a firewall (sent raw, as is). */
  createDevice: call(
    "POST /networking/firewalls/{id}/devices",
    "CreateFirewallDevice",
    "attach device to firewall {0}",
    FW_DEVICE,
  )(raw<[firewallId: number, body: FirewallDevicePayload], FirewallDevice>()),
  /** Detaches a device from a firewall. */
  deleteDevice: remove(
    "DELETE /networking/firewalls/{id}/devices/{id}",
    "DeleteFirewallDevice",
    "detach device {1} from firewall {0}",
  )(api.deleteFirewallDevice),
  /** Firewalls themselves: list, get, create, update and delete. */
  ...collection<CreateFirewallPayload>("/networking/firewalls", "Firewall", FW)(
    [api.getFirewalls, api.getFirewall, api.updateFirewall, api.deleteFirewall],
  ),
};

/** Every declared call, by the `LinodeClient` property that offers it (`profile`: `getProfile()`). */
export const LINODE_CALLS = {
  profile: PROFILE_CALLS,
  instances: INSTANCE_CALLS,
  interfaces: INTERFACE_CALLS,
  vpcs: VPC_CALLS,
  nodeBalancers: NODEBALANCER_CALLS,
  firewalls: FIREWALL_CALLS,
  reservedIps: RESERVED_IP_CALLS,
};

/** `/linode/instances` and below. */
export type InstanceApi = Api<typeof INSTANCE_CALLS>;
/** `/linode/instances/{id}/interfaces` and below. */
export type LinodeInterfaceApi = Api<typeof INTERFACE_CALLS>;
/** `/vpcs` and below. */
export type VpcApi = Api<typeof VPC_CALLS>;
/** `/nodebalancers` and below. */
export type NodeBalancerApi = Api<typeof NODEBALANCER_CALLS>;
/** `/networking/firewalls` and below. */
export type FirewallApi = Api<typeof FIREWALL_CALLS>;
/** `/networking/reserved/ips` and below. */
export type ReservedIpApi = Api<typeof RESERVED_IP_CALLS>;

/** Linode API client: base URL and token per instance, paging at 500, retries, fence, metrics. */
export class LinodeClient {
  readonly #caller: ApiCaller;
  readonly #options: LinodeClientOptions;
  readonly #profile: Api<typeof PROFILE_CALLS>;
  /** `/linode/instances`. */
  readonly instances: InstanceApi;
  /** `/linode/instances/{id}/interfaces`: Linode interfaces (`interface_generation: "linode"`). */
  readonly interfaces: LinodeInterfaceApi;
  /** `/vpcs`. */
  readonly vpcs: VpcApi;
  /** `/nodebalancers`. */
  readonly nodeBalancers: NodeBalancerApi;
  /** `/networking/firewalls`. */
  readonly firewalls: FirewallApi;
  /** `/networking/reserved/ips`. */
  readonly reservedIps: ReservedIpApi;

  /** A client over `options`; `caller` is for `withSignal` (a view sharing another client's caller). */
  constructor(options: LinodeClientOptions, caller?: ApiCaller) {
    this.#options = options;
    this.#caller = caller ?? new ApiCaller(options);
    this.#profile = bind(PROFILE_CALLS, this.#caller);
    this.instances = bind(INSTANCE_CALLS, this.#caller);
    this.interfaces = bind(INTERFACE_CALLS, this.#caller);
    this.vpcs = bind(VPC_CALLS, this.#caller);
    this.nodeBalancers = bind(NODEBALANCER_CALLS, this.#caller);
    this.firewalls = bind(FIREWALL_CALLS, this.#caller);
    this.reservedIps = bind(RESERVED_IP_CALLS, this.#caller);
  }

  /**
   * This client with `signal` on every call: a leadership term's controllers call through one bound to the
   * term, so a hand-over aborts their requests in flight and their retry sleeps. Counts and limits are shared.
   */
  withSignal(signal: AbortSignal): LinodeClient {
    return new LinodeClient(this.#options, this.#caller.bind(signal));
  }

  /** Requests sent by this client, keyed `"GET /linode/instances"`; every attempt counts. */
  callCounts(): Record<string, number> {
    return this.#caller.callCounts();
  }

  /** The user behind the token: the cheapest call that proves the token is accepted (401 when not). */
  getProfile(options?: CallOptions): Promise<Profile> {
    return this.#profile.getProfile(options);
  }
}
