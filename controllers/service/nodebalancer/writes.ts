/**
 * The NodeBalancer writes of the service controller (`NodeBalancerAction`, what `diffNodeBalancer` decides):
 * their request bodies, how they are carried out, and how they show on `/plan`.
 *
 * Request bodies are built from the desired state: a config, a node, a whole new NodeBalancer. Key material
 * stays a `SecretPem` inside them (so logging a body or an action prints `<REDACTED>`); `revealConfigBody`
 * and `revealCreateBody` give the plain JSON to send, and are the only place the key comes out.
 *
 * A NodeBalancer diff is carried out through the Linode client and every result recorded in the cache, so the
 * next reconcile of the Service reads nothing. A failed write drops the NodeBalancer's cached details: its
 * state is then in doubt (a timeout may have acted, a 400 or 404 says the cache was wrong) and the next
 * reconcile reads it again before deciding anything.
 *
 * On `/plan` (`controllers/loop/shadow.ts`), a NodeBalancer created, adopted or updated (each field old and
 * new, config and node changes included), or released, names the Service as its object (`default/web`) and
 * the NodeBalancer as its target.
 */
import type {
  Algorithm,
  CreateNodeBalancerConfig,
  CreateNodeBalancerConfigNode,
  NodeBalancer,
  NodeBalancerProxyProtocol,
  Protocol,
  Stickiness,
} from "@linode/api-v4";
import type { V1Service } from "@kubernetes/client-node";
import type { NodeBalancerCache } from "../../../cache/nodebalancers.ts";
import type { NodeBalancerConfigState, NodeBalancerNodeState } from "../../../cache/types.ts";
import { objectKey } from "../../../kube/keys.ts";
import type { NodeBalancerApi } from "../../../linode/client.ts";
import type { ActionSpec, PlanChange } from "../../loop/shadow.ts";
import type { CheckType, PortFamily } from "../annotations/spec.ts";
import type { DesiredFirewall } from "../firewall/rules.ts";
import type { DesiredConfig, DesiredNode, DesiredNodeBalancer, DesiredVpc, SecretPem } from "./desired.ts";

// ---------------------------------------------------------------------------------------------------------
// The writes, and their request bodies.

/** Where an action applies, for logs: the NodeBalancer and, for config and node actions, the port. */
interface Target {
  readonly nodeBalancerId: number;
}
interface ConfigTarget extends Target {
  readonly port: number;
  readonly family: PortFamily;
}

/** One API write bringing the NodeBalancer closer to the plan. Bodies keep keys as `SecretPem`. */
export type NodeBalancerAction =
  | Target & {
    readonly kind: "updateNodeBalancer";
    readonly body: { client_conn_throttle?: number; tags?: string[] };
  }
  | ConfigTarget & { readonly kind: "createConfig"; readonly body: ConfigWithNodesBody }
  | ConfigTarget & { readonly kind: "updateConfig"; readonly configId: number; readonly body: ConfigBody }
  | ConfigTarget & { readonly kind: "deleteConfig"; readonly configId: number }
  | ConfigTarget & { readonly kind: "createNode"; readonly configId: number; readonly body: NodeBody }
  | ConfigTarget & {
    readonly kind: "updateNode";
    readonly configId: number;
    readonly nodeId: number;
    readonly body: Partial<NodeBody>;
  }
  | ConfigTarget & { readonly kind: "deleteNode"; readonly configId: number; readonly nodeId: number };

/** A value shown in a change (never key material). */
export type ChangeValue = string | number | boolean | null | readonly string[];

/** One field that differs, for the Normal Event naming what changed. */
export interface FieldChange {
  /** `client_conn_throttle`, `configs[80/tcp].check_passive`, `configs[80/tcp].nodes[n1].address`. */
  readonly field: string;
  readonly old: ChangeValue;
  readonly new: ChangeValue;
}

/** A config's settable fields, the key still wrapped. */
export interface ConfigBody {
  port?: number;
  protocol?: Protocol;
  proxy_protocol?: NodeBalancerProxyProtocol;
  algorithm?: Algorithm;
  stickiness?: Stickiness;
  check?: CheckType;
  check_interval?: number;
  check_timeout?: number;
  check_attempts?: number;
  check_passive?: boolean;
  check_path?: string;
  check_body?: string;
  udp_check_port?: number;
  ssl_cert?: string;
  ssl_key?: SecretPem;
}

/** A node body (create, or the changed fields of an update). */
export type NodeBody = CreateNodeBalancerConfigNode;

/** A config body with its nodes, for a new config or a new NodeBalancer. */
export type ConfigWithNodesBody = ConfigBody & { nodes: NodeBody[] };

/** The body of `POST /nodebalancers`, the keys still wrapped. */
export interface CreateNodeBalancerBody {
  label: string;
  region: string;
  type: string;
  tags: string[];
  client_conn_throttle: number;
  configs: ConfigWithNodesBody[];
  ipv4?: string;
  firewall_id?: number;
  vpcs?: VpcBody[];
  /** Named as the Go CCM's client (linodego) sends it. */
  frontend_vpcs?: VpcBody[];
}

/** One VPC attachment on create. */
export interface VpcBody {
  subnet_id: number;
  ipv4_range?: string;
  ipv6_range?: string;
  ipv4_range_auto_assign?: boolean;
}

/** The node body of a desired node. */
export function nodeBody(node: DesiredNode): NodeBody {
  const body: NodeBody = { address: node.address, label: node.label, weight: node.weight };
  if (node.mode !== undefined) body.mode = node.mode;
  if (node.subnet_id !== undefined) body.subnet_id = node.subnet_id;
  return body;
}

/** Every managed field of a desired config (TLS included for https). */
export function configBody(config: DesiredConfig): ConfigBody {
  const body: ConfigBody = {
    port: config.port,
    protocol: config.protocol,
    proxy_protocol: config.proxy_protocol,
    algorithm: config.algorithm,
    check: config.check,
    check_interval: config.check_interval,
    check_timeout: config.check_timeout,
    check_attempts: config.check_attempts,
    check_passive: config.check_passive,
  };
  if (config.stickiness !== null) body.stickiness = config.stickiness;
  if (config.check_path !== null) body.check_path = config.check_path;
  if (config.check_body !== null) body.check_body = config.check_body;
  if (config.udp_check_port !== null) body.udp_check_port = config.udp_check_port;
  if (config.tls !== null) {
    body.ssl_cert = config.tls.ssl_cert;
    body.ssl_key = config.tls.ssl_key;
  }
  return body;
}

function vpcBody(vpc: DesiredVpc): VpcBody {
  const body: VpcBody = { subnet_id: vpc.subnet_id };
  if (vpc.ipv4_range !== null) body.ipv4_range = vpc.ipv4_range;
  if (vpc.ipv6_range !== null) body.ipv6_range = vpc.ipv6_range;
  if (vpc.ipv4_range_auto_assign) body.ipv4_range_auto_assign = true;
  return body;
}

/** The body creating the desired NodeBalancer; `firewallId` is the firewall to attach (from the ID or ACL). */
export function createNodeBalancerBody(
  desired: DesiredNodeBalancer,
  firewallId?: number,
): CreateNodeBalancerBody {
  const body: CreateNodeBalancerBody = {
    label: desired.label,
    region: desired.region,
    type: desired.type,
    tags: [...desired.tags],
    client_conn_throttle: desired.client_conn_throttle,
    configs: desired.configs.map((c) => ({ ...configBody(c), nodes: c.nodes.map(nodeBody) })),
  };
  if (desired.ipv4 !== null) body.ipv4 = desired.ipv4;
  if (firewallId !== undefined) body.firewall_id = firewallId;
  if (desired.backendVpc !== null) body.vpcs = [vpcBody(desired.backendVpc)];
  if (desired.frontendVpc !== null) body.frontend_vpcs = [vpcBody(desired.frontendVpc)];
  return body;
}

/** The plain JSON of a config body, key revealed: only for the request itself. */
export function revealConfigBody(body: ConfigBody & { nodes?: NodeBody[] }): CreateNodeBalancerConfig {
  const { ssl_key, ...rest } = body;
  return ssl_key === undefined ? rest : { ...rest, ssl_key: ssl_key.reveal() };
}

/** The plain JSON of a create body, keys revealed: only for the request itself. */
export function revealCreateBody(
  body: CreateNodeBalancerBody,
): Omit<CreateNodeBalancerBody, "configs"> & { configs: CreateNodeBalancerConfig[] } {
  return { ...body, configs: body.configs.map(revealConfigBody) };
}

// ---------------------------------------------------------------------------------------------------------
// Carrying the writes out.

/** The NodeBalancer calls the service controller makes. `LinodeClient.nodeBalancers` implements it. */
export type NodeBalancerWrites = Pick<
  NodeBalancerApi,
  | "get"
  | "create"
  | "update"
  | "delete"
  | "listConfigs"
  | "listConfigNodes"
  | "createConfig"
  | "updateConfig"
  | "deleteConfig"
  | "createConfigNode"
  | "updateConfigNode"
  | "deleteConfigNode"
>;

/** What applying needs: the client to write through and the cache to record in. */
export interface ApplyDeps {
  nodeBalancers: NodeBalancerWrites;
  cache: Pick<NodeBalancerCache, "record" | "recordCreated" | "details">;
}

type ConfigResponse = Awaited<ReturnType<NodeBalancerWrites["createConfig"]>>;

/** The config a write answered with, its nodes taken from the answer when it has them, else listed. */
async function configState(
  deps: ApplyDeps,
  nbId: number,
  config: ConfigResponse,
  knownNodes?: readonly NodeBalancerNodeState[],
): Promise<NodeBalancerConfigState> {
  const answered: unknown = (config as { nodes?: unknown }).nodes;
  const nodes = Array.isArray(answered)
    ? answered as NodeBalancerNodeState[]
    : knownNodes ?? await deps.nodeBalancers.listConfigNodes(nbId, config.id);
  return { ...config, nodes };
}

function cachedConfig(deps: ApplyDeps, nbId: number, configId: number): NodeBalancerConfigState | undefined {
  return deps.cache.details.peekConfigs(nbId)?.find((c) => c.id === configId);
}

function withNodes(
  config: NodeBalancerConfigState | undefined,
  change: (nodes: readonly NodeBalancerNodeState[]) => readonly NodeBalancerNodeState[],
): NodeBalancerConfigState | undefined {
  return config ? { ...config, nodes: change(config.nodes) } : undefined;
}

async function applyNodeAction(deps: ApplyDeps, nbId: number, action: NodeBalancerAction): Promise<void> {
  const api = deps.nodeBalancers;
  let next: NodeBalancerConfigState | undefined;
  if (action.kind === "createNode") {
    const node = await api.createConfigNode(nbId, action.configId, action.body);
    next = withNodes(cachedConfig(deps, nbId, action.configId), (ns) => [...ns, node]);
  } else if (action.kind === "updateNode") {
    const node = await api.updateConfigNode(nbId, action.configId, action.nodeId, action.body);
    const replace = (ns: readonly NodeBalancerNodeState[]) => ns.map((n) => n.id === node.id ? node : n);
    next = withNodes(cachedConfig(deps, nbId, action.configId), replace);
  } else if (action.kind === "deleteNode") {
    await api.deleteConfigNode(nbId, action.configId, action.nodeId);
    const drop = (ns: readonly NodeBalancerNodeState[]) => ns.filter((n) => n.id !== action.nodeId);
    next = withNodes(cachedConfig(deps, nbId, action.configId), drop);
  }
  if (next) deps.cache.details.recordConfig(nbId, next);
}

async function applyOne(deps: ApplyDeps, nbId: number, action: NodeBalancerAction): Promise<void> {
  const api = deps.nodeBalancers;
  const details = deps.cache.details;
  switch (action.kind) {
    case "updateNodeBalancer":
      deps.cache.record(await api.update(nbId, action.body));
      return;
    case "createConfig": {
      const created = await api.createConfig(nbId, revealConfigBody(action.body));
      details.recordConfig(nbId, await configState(deps, nbId, created));
      return;
    }
    case "updateConfig": {
      const updated = await api.updateConfig(nbId, action.configId, revealConfigBody(action.body));
      const known = cachedConfig(deps, nbId, action.configId)?.nodes;
      details.recordConfig(nbId, await configState(deps, nbId, updated, known));
      return;
    }
    case "deleteConfig":
      await api.deleteConfig(nbId, action.configId);
      details.forgetConfig(nbId, action.configId);
      return;
    default:
      await applyNodeAction(deps, nbId, action);
  }
}

/** Applies `actions` in order; on the first failure forgets the NodeBalancer's details and rethrows. */
export async function applyActions(
  deps: ApplyDeps,
  nbId: number,
  actions: readonly NodeBalancerAction[],
): Promise<void> {
  try {
    for (const action of actions) await applyOne(deps, nbId, action);
  } catch (e) {
    deps.cache.details.forget(nbId);
    throw e;
  }
}

/**
 * Creates the NodeBalancer with every config and node in the one call the API allows (attached to
 * `firewallId` when given) and reads nothing back: the answer has no config or node ids, which only a later
 * change needs, so they are read when the plan first differs from this one (`isAsCreated`). One call per new
 * LoadBalancer Service, as the Go CCM's create.
 */
export async function createNodeBalancer(
  deps: ApplyDeps,
  plan: { readonly desired: DesiredNodeBalancer; readonly fingerprint: string },
  firewallId?: number,
): Promise<NodeBalancer> {
  const body = createNodeBalancerBody(plan.desired, firewallId);
  const nb = await deps.nodeBalancers.create(revealCreateBody(body));
  deps.cache.recordCreated(nb);
  deps.cache.details.recordCreated(nb.id, plan.fingerprint);
  return nb;
}

// ---------------------------------------------------------------------------------------------------------
// How the writes show on `/plan`.

/** The plan's name for a NodeBalancer written for a Service. */
export function nodeBalancerTarget(id: number): string {
  return `nodebalancer ${id}`;
}

/** The NodeBalancer id in a target made by `nodeBalancerTarget`. */
export function nodeBalancerIdOf(target: string | undefined): number | undefined {
  const m = /^nodebalancer (\d+)$/.exec(target ?? "");
  return m ? Number(m[1]) : undefined;
}

function showFirewall(firewall: DesiredFirewall): string[] {
  if (firewall.kind === "id") return [`firewall ${firewall.firewallId}`];
  return firewall.kind === "acl" ? [`new firewall ${firewall.label}`] : [];
}

/** Creating the Service's NodeBalancer: every field it is created with. */
export function createAction(svc: V1Service, desired: DesiredNodeBalancer): ActionSpec {
  const changes: PlanChange[] = [
    { field: "label", old: null, new: desired.label },
    { field: "type", old: null, new: desired.type },
    { field: "client_conn_throttle", old: null, new: desired.client_conn_throttle },
    { field: "tags", old: null, new: [...desired.tags].sort() },
  ];
  for (const c of desired.configs) {
    const field = `configs[${c.port}/${c.family}]`;
    changes.push({ field, old: null, new: c.protocol });
    changes.push({ field: `${field}.nodes`, old: null, new: c.nodes.map((n) => n.address).sort() });
  }
  const firewall = showFirewall(desired.firewall);
  if (firewall.length) changes.push({ field: "firewalls", old: null, new: firewall });
  return { action: "create-nodebalancer", object: objectKey(svc), changes };
}

/** How an existing NodeBalancer is brought in line. */
export type UpdateKind = "adopt-nodebalancer" | "update-backends" | "update-nodebalancer";

/** Updating (or adopting) the Service's NodeBalancer `nbId`. */
export function updateAction(
  svc: V1Service,
  nbId: number,
  update: { kind: UpdateKind; changes: readonly (FieldChange | PlanChange)[] },
): ActionSpec {
  return {
    action: update.kind,
    object: objectKey(svc),
    target: nodeBalancerTarget(nbId),
    changes: update.changes,
  };
}

/** Deleting (or, with `preserve`, untagging) NodeBalancer `nbId`, replaced or no longer wanted. */
export function releaseAction(
  svc: V1Service,
  nbId: number,
  release: { preserve: boolean; changes?: readonly PlanChange[] },
): ActionSpec {
  return {
    action: release.preserve ? "untag-nodebalancer" : "delete-nodebalancer",
    object: objectKey(svc),
    target: nodeBalancerTarget(nbId),
    changes: release.changes ?? [],
  };
}
