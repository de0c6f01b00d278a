/**
 * `diffNodeBalancer`: the fewest API writes that turn a NodeBalancer as read (api-v4 shapes) into the
 * planned one, updating in place wherever the API allows (throttle, tags, config fields, node address,
 * label, weight and mode) so ids, the IP and node ids survive; an empty list when nothing differs. A field
 * the desired state marks `keep` (its annotation was read leniently) is left as it is. Configs
 * match by port and protocol family (tcp 53 and udp 53 are two configs), except that a kept protocol also
 * matches the port's config of the other family (see `matchConfig`). Nodes of one config match by address
 * first, then by label (a Node whose address changed is updated in place), so node ids survive every change
 * that the API can make with an update. Also lists each field that differs, old and new, for one Normal
 * Event, and what differs but cannot change in place. Pure.
 */
import type { NodeBalancer, NodeBalancerConfig, NodeBalancerConfigNode } from "@linode/api-v4";
import {
  type ChangeValue,
  type ConfigBody,
  configBody,
  type FieldChange,
  type NodeBalancerAction,
  type NodeBody,
  nodeBody,
} from "./writes.ts";
import type { DesiredConfig, DesiredNode, DesiredNodeBalancer } from "./desired.ts";
import type { PortFamily } from "../annotations/spec.ts";
import { isReservedTag } from "../annotations/table.ts";

// ---------------------------------------------------------------------------------------------------------
// What the diff reads and returns.

/** The fields of a NodeBalancer the diff reads (an api-v4 `NodeBalancer` fits). */
export type CurrentNodeBalancerFields =
  & Pick<NodeBalancer, "id" | "client_conn_throttle" | "ipv4">
  & { readonly tags: readonly string[] }
  & Partial<Pick<NodeBalancer, "type" | "frontend_address_type" | "frontend_vpc_subnet_id">>;

/** A config as `GET /nodebalancers/{id}/configs` returns it (nodes are listed apart). */
export type CurrentConfig = Omit<NodeBalancerConfig, "nodes" | "nodes_status">;

/** A NodeBalancer as read from the API: itself, its configs, and the nodes of each config by config id. */
export interface CurrentNodeBalancer {
  readonly nodeBalancer: CurrentNodeBalancerFields;
  readonly configs: readonly CurrentConfig[];
  readonly nodes: ReadonlyMap<number, readonly NodeBalancerConfigNode[]>;
}

/** What to do, what changes, and what differs but cannot change on an existing NodeBalancer. */
export interface NodeBalancerDiff {
  /** Ordered: NodeBalancer, new configs, config updates with their node changes, then removals. */
  readonly actions: readonly NodeBalancerAction[];
  readonly changes: readonly FieldChange[];
  /** E.g. `type` or `ipv4`: the API cannot change them in place (a Warning Event, no action). */
  readonly immutable: readonly FieldChange[];
}

// ---------------------------------------------------------------------------------------------------------
// The NodeBalancer and its configs.

/** The config fields compared one to one (TLS is compared by fingerprint). */
const CONFIG_FIELDS = [
  "protocol",
  "proxy_protocol",
  "algorithm",
  "stickiness",
  "check",
  "check_interval",
  "check_timeout",
  "check_attempts",
  "check_passive",
  "check_path",
  "check_body",
  "udp_check_port",
] as const;

function familyOf(protocol: string): PortFamily {
  return protocol === "udp" ? "udp" : "tcp";
}

function keyOf(port: number, family: PortFamily): string {
  return `configs[${port}/${family}]`;
}

/** Hex digits only, upper case: the API prints `AA:BB:…`; a caller may hand in `aabb…`. */
function normalFingerprint(fp: string): string {
  return fp.replace(/[^0-9a-fA-F]/g, "").toUpperCase();
}

/** True when an https config needs its certificate and key sent (new to https, or another certificate). */
function needsTls(desired: DesiredConfig, current: CurrentConfig): boolean {
  if (desired.tls === null) return false;
  if (current.protocol !== "https") return true;
  // Without a fingerprint the certificate cannot be compared (the API redacts it): leave it.
  return desired.tls.fingerprint !== null &&
    normalFingerprint(desired.tls.fingerprint) !== normalFingerprint(current.ssl_fingerprint ?? "");
}

/** The update body of a matched config (changed fields only) and the changes it makes. */
function configUpdate(desired: DesiredConfig, current: CurrentConfig, field: string) {
  const full = configBody(desired);
  const body: ConfigBody = {};
  const changes: FieldChange[] = [];
  for (const name of CONFIG_FIELDS) {
    if (desired.keep?.some((k) => k === name)) continue;
    const want = full[name];
    const have = current[name];
    if (want === undefined || want === have) continue;
    Object.assign(body, { [name]: want });
    changes.push({ field: `${field}.${name}`, old: have ?? null, new: want });
  }
  if (needsTls(desired, current)) {
    body.ssl_cert = full.ssl_cert;
    body.ssl_key = full.ssl_key;
    const old = current.ssl_fingerprint || null;
    changes.push({
      field: `${field}.ssl_fingerprint`,
      old,
      new: desired.tls?.fingerprint ?? "(new certificate)",
    });
  }
  return { body, changes };
}

/**
 * The index in `unmatched` of the config `want` updates: the one of its port and family; or, when its protocol
 * is kept (read leniently) and the Service has no port of the other family there, the port's config of the
 * other family, which the Go CCM made by applying such a protocol as it is (udp on a TCP port). -1: none.
 */
function matchConfig(
  unmatched: readonly CurrentConfig[],
  want: DesiredConfig,
  desired: DesiredNodeBalancer,
): number {
  const i = unmatched.findIndex((c) => c.port === want.port && familyOf(c.protocol) === want.family);
  if (i >= 0 || !want.keep?.includes("protocol")) return i;
  if (desired.configs.some((c) => c.port === want.port && c.family !== want.family)) return -1;
  return unmatched.findIndex((c) => c.port === want.port);
}

/**
 * A config kept in the other family: its settings stay (those of `want`'s family do not fit it), its
 * nodes follow the Nodes with the mode its family takes (udp nodes have none).
 */
function asOtherFamily(want: DesiredConfig, have: CurrentConfig): DesiredConfig {
  const udp = familyOf(have.protocol) === "udp";
  const nodes = want.nodes.map(({ mode: _, ...n }) => udp ? n : { ...n, mode: "accept" as const });
  return { ...want, nodes };
}

function sameTags(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((t) => set.has(t));
}

function nodeBalancerUpdate(current: CurrentNodeBalancer, desired: DesiredNodeBalancer) {
  const nb = current.nodeBalancer;
  const body: { client_conn_throttle?: number; tags?: string[] } = {};
  const changes: FieldChange[] = [];
  const keepThrottle = desired.keep?.includes("client_conn_throttle") ?? false;
  if (!keepThrottle && nb.client_conn_throttle !== desired.client_conn_throttle) {
    body.client_conn_throttle = desired.client_conn_throttle;
    changes.push({
      field: "client_conn_throttle",
      old: nb.client_conn_throttle,
      new: desired.client_conn_throttle,
    });
  }
  // Kept tags (a tag the API refuses was read leniently): none is removed, the planned ones are added; but
  // ownership and identity tags are only ever the planned ones (a kept one of another owner would make two).
  const keepTags = desired.keep?.includes("tags") ?? false;
  const kept = nb.tags.filter((t) => !isReservedTag(t));
  const tags = keepTags ? [...new Set([...kept, ...desired.tags])] : desired.tags;
  if (!sameTags(nb.tags, tags)) {
    body.tags = [...tags];
    changes.push({ field: "tags", old: [...nb.tags].sort(), new: [...tags].sort() });
  }
  return { body, changes };
}

/** What differs but the API keeps as created: type, reserved IPv4, frontend subnet. */
function immutableFields(current: CurrentNodeBalancer, desired: DesiredNodeBalancer): FieldChange[] {
  const nb = current.nodeBalancer;
  const out: FieldChange[] = [];
  const add = (field: string, old: ChangeValue, value: ChangeValue) => out.push({ field, old, new: value });
  const keepType = desired.keep?.includes("type") ?? false;
  if (!keepType && nb.type !== undefined && nb.type !== desired.type) add("type", nb.type, desired.type);
  if (desired.ipv4 !== null && nb.ipv4 !== desired.ipv4) add("ipv4", nb.ipv4, desired.ipv4);
  const frontend = desired.frontendVpc?.subnet_id ?? null;
  if (
    nb.frontend_vpc_subnet_id !== undefined && frontend !== null && nb.frontend_vpc_subnet_id !== frontend
  ) {
    add("frontend_vpc_subnet_id", nb.frontend_vpc_subnet_id, frontend);
  }
  return out;
}

/** The actions and changes turning `current` into `desired`; see the module comment. */
export function diffNodeBalancer(
  current: CurrentNodeBalancer,
  desired: DesiredNodeBalancer,
): NodeBalancerDiff {
  const nodeBalancerId = current.nodeBalancer.id;
  const actions: NodeBalancerAction[] = [];
  const changes: FieldChange[] = [];
  const nb = nodeBalancerUpdate(current, desired);
  if (nb.changes.length > 0) actions.push({ kind: "updateNodeBalancer", nodeBalancerId, body: nb.body });
  changes.push(...nb.changes);
  const unmatched = [...current.configs];
  const later: NodeBalancerAction[] = [];
  for (const want of desired.configs) {
    const field = keyOf(want.port, want.family);
    const i = matchConfig(unmatched, want, desired);
    const target = { nodeBalancerId, port: want.port, family: want.family };
    if (i < 0) {
      actions.push({
        kind: "createConfig",
        ...target,
        body: { ...configBody(want), nodes: want.nodes.map(nodeBody) },
      });
      changes.push({ field, old: null, new: want.protocol });
      continue;
    }
    const [have] = unmatched.splice(i, 1);
    if (have === undefined) continue;
    const fits = familyOf(have.protocol) === want.family ? want : asOtherFamily(want, have);
    const update = fits === want ? configUpdate(want, have, field) : { body: {}, changes: [] };
    if (update.changes.length > 0) {
      later.push({ kind: "updateConfig", ...target, configId: have.id, body: update.body });
    }
    const nodes = diffNodes(
      { ...target, configId: have.id, field },
      fits.nodes,
      current.nodes.get(have.id) ?? [],
    );
    later.push(...nodes.actions);
    changes.push(...update.changes, ...nodes.changes);
  }
  actions.push(...later);
  for (const stale of unmatched) {
    const family = familyOf(stale.protocol);
    actions.push({ kind: "deleteConfig", nodeBalancerId, port: stale.port, family, configId: stale.id });
    changes.push({ field: keyOf(stale.port, family), old: stale.protocol, new: null });
  }
  return { actions, changes, immutable: immutableFields(current, desired) };
}

/** One line for logs and Events: `check_passive: true → false; tags: [a] → [a, b]`. */
export function formatChanges(changes: readonly FieldChange[]): string {
  const show = (v: ChangeValue) => v === null ? "(none)" : Array.isArray(v) ? `[${v.join(", ")}]` : String(v);
  return changes.map((c) => `${c.field}: ${show(c.old)} → ${show(c.new)}`).join("; ");
}

/** An action in a few words, for logs (never a body). */
export function describeAction(action: NodeBalancerAction): string {
  const nb = `nodebalancer ${action.nodeBalancerId}`;
  if (action.kind === "updateNodeBalancer") return `update ${nb} (${Object.keys(action.body).join(", ")})`;
  const port = `port ${action.port}/${action.family}`;
  switch (action.kind) {
    case "createConfig":
      return `create config for ${port} on ${nb} with ${action.body.nodes.length} nodes`;
    case "updateConfig":
      return `update config ${action.configId} (${port}) of ${nb}: ${Object.keys(action.body).join(", ")}`;
    case "deleteConfig":
      return `delete config ${action.configId} (${port}) of ${nb}`;
    case "createNode":
      return `add node ${action.body.label} to config ${action.configId} (${port}) of ${nb}`;
    case "updateNode":
      return `update node ${action.nodeId} of config ${action.configId} (${port}) of ${nb}`;
    case "deleteNode":
      return `remove node ${action.nodeId} from config ${action.configId} (${port}) of ${nb}`;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The nodes of one config.

/** The config the nodes belong to. */
export interface NodeTarget {
  readonly nodeBalancerId: number;
  readonly configId: number;
  readonly port: number;
  readonly family: PortFamily;
  /** `configs[80/tcp]`, the prefix of change fields. */
  readonly field: string;
}

/** Pairs desired and current nodes: by address, then by label among the rest. */
function match(
  desired: readonly DesiredNode[],
  current: readonly NodeBalancerConfigNode[],
): {
  pairs: [DesiredNode, NodeBalancerConfigNode][];
  added: DesiredNode[];
  removed: NodeBalancerConfigNode[];
} {
  const left = [...current];
  const pairs: [DesiredNode, NodeBalancerConfigNode][] = [];
  const unmatched: DesiredNode[] = [];
  for (const d of desired) {
    const i = left.findIndex((c) => c.address === d.address);
    if (i >= 0) pairs.push([d, ...left.splice(i, 1)] as [DesiredNode, NodeBalancerConfigNode]);
    else unmatched.push(d);
  }
  const added: DesiredNode[] = [];
  for (const d of unmatched) {
    const i = left.findIndex((c) => c.label === d.label);
    if (i >= 0) pairs.push([d, ...left.splice(i, 1)] as [DesiredNode, NodeBalancerConfigNode]);
    else added.push(d);
  }
  return { pairs, added, removed: left };
}

type NodeField = "address" | "label" | "weight" | "mode";

/** The changed fields of a matched node: the update body and each field's old and new value. */
function nodeUpdate(d: DesiredNode, c: NodeBalancerConfigNode) {
  const body: Partial<NodeBody> = {};
  const changed: [NodeField, string | number, string | number][] = [];
  if (c.address !== d.address) {
    body.address = d.address;
    if (d.subnet_id !== undefined) body.subnet_id = d.subnet_id;
    changed.push(["address", c.address, d.address]);
  }
  if (c.label !== d.label) changed.push(["label", c.label, body.label = d.label]);
  if (c.weight !== d.weight) changed.push(["weight", c.weight, body.weight = d.weight]);
  if (d.mode !== undefined && c.mode !== d.mode) changed.push(["mode", c.mode, body.mode = d.mode]);
  return { body, changed };
}

/** Creates, then updates, then deletes (a config never drops below its wanted nodes on the way). */
export function diffNodes(
  target: NodeTarget,
  desired: readonly DesiredNode[],
  current: readonly NodeBalancerConfigNode[],
): { actions: NodeBalancerAction[]; changes: FieldChange[] } {
  const { pairs, added, removed } = match(desired, current);
  const { field, ...at } = target;
  const base = { nodeBalancerId: at.nodeBalancerId, configId: at.configId, port: at.port, family: at.family };
  const actions: NodeBalancerAction[] = [];
  const changes: FieldChange[] = [];
  for (const d of added) {
    actions.push({ kind: "createNode", ...base, body: nodeBody(d) });
    changes.push({ field: `${field}.nodes[${d.label}]`, old: null, new: d.address });
  }
  for (const [d, c] of pairs) {
    const { body, changed } = nodeUpdate(d, c);
    if (changed.length === 0) continue;
    actions.push({ kind: "updateNode", ...base, nodeId: c.id, body });
    for (const [k, old, value] of changed) {
      changes.push({ field: `${field}.nodes[${c.label}].${k}`, old, new: value });
    }
  }
  for (const c of removed) {
    actions.push({ kind: "deleteNode", ...base, nodeId: c.id });
    changes.push({ field: `${field}.nodes[${c.label}]`, old: c.address, new: null });
  }
  return { actions, changes };
}
