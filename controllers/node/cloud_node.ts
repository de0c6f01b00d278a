/**
 * `cloud-node`: initialises Nodes tainted `node.cloudprovider.kubernetes.io/uninitialized` (providerID,
 * addresses, labels, annotations, then the taint goes), and keeps addresses, labels and annotations of
 * initialised Nodes in sync with the Linode cache. Reads Linodes only through the cache; writes Nodes through
 * the Kubernetes executor (an update and how it shows on `/plan`, `nodeUpdateAction`). With `metadataOnly`, the
 * same controller as `node-metadata` keeps only the Go CCM's node metadata, for when `--controllers` leaves
 * `cloud-node` out.
 */
import type { CoreV1Api, V1Node } from "@kubernetes/client-node";
import type { VpcAddresses } from "../../cache/instance_index.ts";
import type { LinodeInstance } from "../../cache/types.ts";
import { type Clock, isAbort } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Registry } from "../../common/metrics.ts";
import type { Cidr4 } from "../../common/net.ts";
import { type EventSink, refFor, warnEvent } from "../../kube/events.ts";
import { deleteNode, mergePatchNode, mergePatchNodeStatus } from "../../kube/patch.ts";
import { isConflict } from "../../kube/requests.ts";
import { OwnWrites } from "../loop/own_writes.ts";
import {
  type ControllerSpec,
  InvalidInputError,
  type PassResult,
  type TermContext,
  type WriteContext,
} from "../loop/runtime.ts";
import type { ActionSpec, PlanChange } from "../loop/shadow.ts";
import { classifyProviderId, parseProviderId } from "../provider_id.ts";
import {
  type AddressOptions,
  findInstance,
  hasTaint,
  type NodeAddress,
  type NodePatch,
  type NodeUpdatePlan,
  planNodeMetadata,
  planNodeUpdate,
  taintList,
  UNINITIALIZED_TAINT_KEY,
} from "./addresses.ts";
import type { LifecycleNodeWriter } from "./lifecycle.ts";
import { lookupNewNode, type NodeInstances, RefreshPacer } from "./lookup.ts";

/** Nodes as the informer holds them. `Informer<V1Node>` implements it. */
export interface NodeLister {
  list(): readonly V1Node[];
  get(name: string): V1Node | undefined;
  onChange(handler: (kind: "add" | "update" | "delete", node: V1Node) => void): () => void;
}

/** What the node controller needs. */
export interface NodeControllerDeps {
  nodes: NodeLister;
  instances: NodeInstances;
  writer: NodeWriter;
  events: EventSink;
  log: Logger;
  metrics: Registry;
  clock: Clock;
  /** Receives each Node's held update (dry run), for the controllers that decide from Nodes. */
  projection?: { project(name: string, plan: NodeUpdatePlan | undefined): void };
}

/** Options of the node controller. */
export interface NodeControllerOptions {
  /** `LINODE_EXTERNAL_SUBNET`: private addresses in it are ExternalIPs. */
  externalSubnet?: Cidr4;
  /** `--node-status-update-frequency` (default 5 min): resync of every Node from the cache. */
  statusUpdateFrequencyMs?: number;
  /** Nodes reconciled at once (default 10). */
  workers?: number;
  /** Minimum interval between refreshes forced by uninitialised Nodes (default 2 s). */
  forcedRefreshIntervalMs?: number;
  /** Per-Node retry backoff (default 1 s doubling to 5 min). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * Only the Go CCM's node metadata (`planNodeMetadata`), for when `--controllers` leaves out `cloud-node`: the
   * Go CCM's own node controller keeps it whatever `--controllers` says. Named `node-metadata`; no Events, no
   * addresses, never initialises a Node.
   */
  metadataOnly?: boolean;
}

/** The planner of a controller's writes: everything upstream's cloud-node writes, or the metadata only. */
function plannerOf(options: NodeControllerOptions): typeof planNodeUpdate {
  return options.metadataOnly ? planNodeMetadata : planNodeUpdate;
}

/** Default `--node-status-update-frequency`. */
export const DEFAULT_STATUS_UPDATE_FREQUENCY_MS = 300_000;

/** What a cloud-node controller remembers between reconciles of its Nodes, for one term. */
export interface NodeMemory {
  /** First sightings of uninitialised Nodes and the refreshes they forced. */
  pacer: RefreshPacer;
  /** This controller's writes the informer has not shown yet. */
  written: OwnWrites<V1Node>;
  /**
   * Moves when a status refresh failed: whatever the listing would have shown is unknown, so every Node is
   * checked against the cache as it is (no settled Node is skipped).
   */
  refreshFailures: number;
}

/** The Linode of `node`: a new Node's lookup may force a refresh; an initialised one reads the cache as it is. */
async function linodeOf(deps: NodeControllerDeps, memory: NodeMemory, node: V1Node, initialising: boolean) {
  if (initialising) return await lookupNewNode(deps.instances, memory.pacer, node);
  // Initialised Nodes are kept in sync from whatever the cache holds (instances and VPC addresses alike):
  // no Linode call per Node event; the status update period refreshes both.
  const s = await deps.instances.view({ maxAgeMs: Infinity, vpcMaxAgeMs: Infinity });
  return { found: findInstance(node, s.data), index: s.data };
}

/**
 * Brings one Node in line with its Linode. Throws to be retried with backoff. Reads the Node from the
 * informer, or from its own last write while the informer has not shown it yet (see `OwnWrites`). Settled when
 * an initialised Node needed nothing.
 */
export async function reconcileNode(
  deps: NodeControllerDeps,
  name: string,
  context: { memory: NodeMemory; options?: NodeControllerOptions; writes: WriteContext },
): Promise<PassResult & { held?: NodeUpdatePlan }> {
  const { memory, options = {} } = context;
  const node = memory.written.latest(name, deps.nodes.get(name));
  if (options.metadataOnly) return await reconcileMetadata(deps, name, { ...context, node });
  const kind = classifyProviderId(node?.spec?.providerID);
  const initialising = node !== undefined && hasTaint(node, UNINITIALIZED_TAINT_KEY);
  if (!initialising) memory.pacer.forget(name);
  if (!node || kind === "foreign") return {};
  if (kind === "invalid") {
    if (!initialising) return {};
    const message = "Cannot initialise node {node}: invalid providerID {providerID}";
    const props = { node: name, providerID: node.spec?.providerID };
    warnEvent(deps, { ref: refFor(node, "Node"), reason: "InvalidProviderID", message, props });
    throw new InvalidInputError(`Cannot initialise node ${name}: invalid providerID`);
  }
  const { found, index } = await linodeOf(deps, memory, node, initialising);
  if (!found) {
    if (!initialising) {
      deps.log.debug("no linode for node {node} in the cache", { node: name });
      return {};
    }
    const message = "Cannot initialise node {node}: no Linode matches its providerID, name or IPs";
    warnEvent(deps, {
      ref: refFor(node, "Node"),
      reason: "InstanceNotFound",
      message,
      props: { node: name },
    });
    throw new Error(`Cannot find the Linode of node ${name}`);
  }
  const linodeId = found.instance.id;
  const target = { instance: found.instance, vpc: index.vpcAddresses(linodeId) };
  const update = planNodeUpdate(node, target.instance, target.vpc, options);
  if (update.nodeIpError !== undefined) reportNodeIpError(deps, node, update.nodeIpError);
  const done = await sendUpdate(deps, context, { node, target, update });
  if (done === "nothing") return { settled: !initialising };
  if (done === "held") return { held: update };
  if (done.untainted) {
    memory.pacer.forget(name);
    deps.log.info("initialised node {node} as linode {linodeId} (found by {via})", {
      node: name,
      linodeId,
      via: found.via,
    });
    deps.metrics.counter("ccm_nodes_initialised_total", "Nodes initialised by the cloud-node controller")
      .inc();
  } else if (done.changed) {
    deps.log.info("updated node {node} from linode {linodeId}", { node: name, linodeId });
  }
  return { settled: !done.changed && !initialising };
}

/**
 * Sends a Node's planned update through the Kubernetes executor and remembers the Node as written. "nothing"
 * when the plan changes nothing; "held" in dry run: nothing written, nothing recorded as written, so the next
 * reconcile decides it again.
 */
async function sendUpdate(
  deps: NodeControllerDeps,
  context: { memory: NodeMemory; options?: NodeControllerOptions; writes: WriteContext },
  planned: { node: V1Node; target: { instance: LinodeInstance; vpc: VpcAddresses }; update: NodeUpdatePlan },
): Promise<NodeWrites | "nothing" | "held"> {
  const { node, target, update } = planned;
  const name = node.metadata?.name ?? "";
  const action = nodeUpdateAction(node, update);
  if (!action) return "nothing";
  const applied = await context.writes.apply({
    api: "kubernetes",
    action,
    send: () => applyPlan(deps, node, target, context.options ?? {}),
    record: (done) => {
      if (done.latest !== node) context.memory.written.record(name, done.latest, done.older);
    },
  });
  return applied.sent ? applied.answer : "held";
}

/**
 * `reconcileNode` for the metadata only (`metadataOnly`), as the Go CCM's node controller keeps it: a Node
 * without a providerID is looked up as a new one (name, then IPs) and gets one; a Node whose Linode is not found
 * is left alone (the Go CCM logs it; with upstream's cloud-node off, nobody else would say it). Never throws for
 * bad input: a foreign or unreadable providerID is not this controller's to judge.
 */
async function reconcileMetadata(
  deps: NodeControllerDeps,
  name: string,
  context: { memory: NodeMemory; options?: NodeControllerOptions; writes: WriteContext; node?: V1Node },
): Promise<PassResult & { held?: NodeUpdatePlan }> {
  const { memory, options = {}, node } = context;
  if (!node || classifyProviderId(node.spec?.providerID) === "foreign") return {};
  if (classifyProviderId(node.spec?.providerID) === "invalid") return { settled: true };
  const unknown = !node.spec?.providerID;
  if (!unknown) memory.pacer.forget(name);
  const { found, index } = await linodeOf(deps, memory, node, unknown);
  if (!found) {
    deps.log.debug("no linode for node {node}: its metadata is left as it is", { node: name });
    return {};
  }
  const target = { instance: found.instance, vpc: index.vpcAddresses(found.instance.id) };
  const update = planNodeMetadata(node, target.instance, target.vpc, options);
  const done = await sendUpdate(deps, context, { node, target, update });
  if (done === "nothing") return { settled: true };
  if (done === "held") return { held: update };
  memory.pacer.forget(name);
  if (done.changed) {
    deps.log.info("updated the metadata of node {node} from linode {linodeId}", {
      node: name,
      linodeId: found.instance.id,
    });
  }
  return { settled: !done.changed };
}

/**
 * Kubelet's `--node-ip` that upstream's cloud-node controller refuses (`getNodeModifiersFromCloudProvider`): an
 * uninitialised Node is not initialised, and retried with backoff as upstream requeues it (throws); an
 * initialised Node keeps its addresses, while its labels and annotations stay in sync. Upstream only logs
 * this; the Warning Event is this CCM's, with upstream's text.
 */
function reportNodeIpError(deps: NodeControllerDeps, node: V1Node, error: string): void {
  const name = node.metadata?.name ?? "";
  warnEvent(deps, {
    ref: refFor(node, "Node"),
    reason: INVALID_NODE_IP_REASON,
    message: 'provided node ip for node "{node}" is not valid: {error}',
    props: { node: name, error },
  });
  if (hasTaint(node, UNINITIALIZED_TAINT_KEY)) throw new NodeIpError(name, error);
}

/** Reason of the Warning Event for a kubelet `--node-ip` the Linode does not have. */
const INVALID_NODE_IP_REASON = "InvalidNodeIP";

/** An uninitialised Node whose kubelet `--node-ip` is not valid; retried with backoff, as upstream. */
class NodeIpError extends Error {
  override name = "NodeIpError";
  constructor(node: string, error: string) {
    super(`Cannot initialise node ${node}: provided node ip is not valid: ${error}`);
  }
}

function entryChanges(
  field: string,
  have: Readonly<Record<string, string>> | undefined,
  want: Readonly<Record<string, string>> | undefined,
): PlanChange[] {
  return Object.entries(want ?? {}).map(([k, v]) => ({
    field: `${field}[${k}]`,
    old: have?.[k] ?? null,
    new: v,
  }));
}

/** The fields `plan` changes on `node`, old and new. */
function nodeChanges(node: V1Node, plan: NodeUpdatePlan): PlanChange[] {
  const changes: PlanChange[] = [];
  if (plan.addresses) {
    const show = (list: readonly { type: string; address: string }[] | undefined) =>
      (list ?? []).map((a) => `${a.type}:${a.address}`);
    changes.push({ field: "status.addresses", old: show(node.status?.addresses), new: show(plan.addresses) });
  }
  const patch = plan.patch;
  if (!patch) return changes;
  changes.push(...entryChanges("metadata.labels", node.metadata?.labels, patch.metadata?.labels));
  changes.push(
    ...entryChanges("metadata.annotations", node.metadata?.annotations, patch.metadata?.annotations),
  );
  if (patch.spec?.providerID) {
    changes.push({
      field: "spec.providerID",
      old: node.spec?.providerID ?? null,
      new: patch.spec.providerID,
    });
  }
  if (patch.spec?.taints) {
    changes.push({
      field: "spec.taints",
      old: taintList(node.spec?.taints),
      new: taintList(patch.spec.taints),
    });
  }
  return changes;
}

/** The `cloud-node` action for a Node's update plan; undefined when the plan changes nothing. */
export function nodeUpdateAction(node: V1Node, plan: NodeUpdatePlan): ActionSpec | undefined {
  const changes = nodeChanges(node, plan);
  if (changes.length === 0) return undefined;
  const action = plan.patch?.spec?.taints ? "initialise-node" : "update-node";
  return { action, object: node.metadata?.name ?? "", changes };
}

/** Fenced Node reads and writes. */
export interface NodeWriter {
  /** A fresh read from the apiserver (after a 409). */
  getNode(name: string): Promise<V1Node>;
  /** Merge patch of metadata and spec; `metadata.resourceVersion` in the patch makes a race a 409. */
  patchNode(name: string, patch: NodePatch): Promise<V1Node>;
  /** Merge patch of the status subresource (a list in it replaces the whole list). */
  patchNodeStatus(name: string, patch: { status: { addresses: NodeAddress[] } }): Promise<V1Node>;
}

const MAX_CONFLICT_RETRIES = 3;

/** What `applyPlan` did: the Node as the apiserver last showed it, and the versions it had before. */
export interface NodeWrites {
  latest: V1Node;
  older: string[];
  /** Something was written. */
  changed: boolean;
  /** A written patch removed the uninitialised taint (this reconcile initialised the Node). */
  untainted: boolean;
}

/**
 * Writes what `planNodeUpdate` asks for: the addresses first (a Node is never untainted without them), then
 * metadata and spec, planned again from the status write's answer so that its resourceVersion precondition
 * holds (planned from the older copy it could only meet a 409). A 409 re-reads the Node and plans again.
 */
export async function applyPlan(
  deps: { writer: NodeWriter; log: Logger },
  node: V1Node,
  target: { instance: LinodeInstance; vpc: VpcAddresses },
  options: AddressOptions & { metadataOnly?: boolean },
): Promise<NodeWrites> {
  const name = node.metadata?.name ?? "";
  const planFor = plannerOf(options);
  const applied: NodeWrites = { latest: node, older: [], changed: false, untainted: false };
  const advance = (next: V1Node) => {
    applied.older.push(applied.latest.metadata?.resourceVersion ?? "");
    applied.latest = next;
  };
  for (let attempt = 0;; attempt++) {
    try {
      let plan = planFor(applied.latest, target.instance, target.vpc, options);
      // A Node re-read after a 409 may carry another `--node-ip`: never untainted without its addresses.
      if (plan.nodeIpError !== undefined && hasTaint(applied.latest, UNINITIALIZED_TAINT_KEY)) {
        throw new NodeIpError(name, plan.nodeIpError);
      }
      if (plan.addresses) {
        advance(await deps.writer.patchNodeStatus(name, { status: { addresses: plan.addresses } }));
        applied.changed = true;
        plan = planFor(applied.latest, target.instance, target.vpc, options);
      }
      if (plan.patch) {
        advance(await deps.writer.patchNode(name, plan.patch));
        applied.changed = true;
        applied.untainted ||= plan.patch.spec?.taints !== undefined;
      }
      return applied;
    } catch (error) {
      if (!isConflict(error) || attempt >= MAX_CONFLICT_RETRIES) throw error;
      deps.log.debug("node {node} changed while updating it, re-planning", { node: name });
      advance(await deps.writer.getNode(name));
    }
  }
}

/** The Node writes of both controllers over client-node: merge patches and preconditioned deletes, fenced. */
export function kubeNodeWriter(core: CoreV1Api): NodeWriter & LifecycleNodeWriter {
  return {
    getNode: (name) => core.readNode({ name }),
    patchNode: (name, patch) => mergePatchNode(core, name, { ...patch }),
    patchNodeStatus: (name, patch) => mergePatchNodeStatus(core, name, { ...patch }),
    deleteNode: (name, preconditions) => deleteNode(core, name, { preconditions }),
  };
}

function nodesOfLinodes(nodes: readonly V1Node[], ids: ReadonlySet<number>): string[] {
  return nodes.filter((n) => {
    const providerID = n.spec?.providerID;
    if (!providerID) return hasTaint(n, UNINITIALIZED_TAINT_KEY);
    const id = parseProviderId(providerID);
    return id !== undefined && ids.has(id);
  }).map((n) => n.metadata?.name ?? "");
}

/**
 * The resync's keys, after one listing per period (when no other loop refreshed within the TTL): every Node.
 * The runtime leaves alone those settled at their current resourceVersion (`inputs`): changes the listing finds
 * enqueue their Nodes at once (`instances.onChange`), so a settled Node has nothing new to check.
 */
async function refreshedNodeNames(deps: NodeControllerDeps, ctx: TermContext<NodeMemory>): Promise<string[]> {
  try {
    await deps.instances.view();
  } catch (error) {
    if (isAbort(error, ctx.signal) || ctx.signal.aborted) throw error;
    deps.log.warning("node status refresh failed: {error}", { error: String(error) });
    ctx.memory.refreshFailures++;
  }
  return deps.nodes.list().map((n) => n.metadata?.name ?? "");
}

/**
 * Every Node's name. A function of its own: V8 keeps the registers of a suspended async function, a finished
 * loop's iterator included, so a loop over `nodes.list()` in a long-running function held the first list, every
 * Node as it was at start, for the whole term (tests/retention_test.ts).
 */
function everyNodeName(nodes: NodeLister): string[] {
  return nodes.list().map((n) => n.metadata?.name ?? "");
}

/** Node and cache events: a Node is reconciled when it or its Linode's listed state changes. */
function sources(deps: NodeControllerDeps, ctx: TermContext<NodeMemory>): (() => void)[] {
  const { memory } = ctx;
  const offNodes = deps.nodes.onChange((kind, node) => {
    const name = node.metadata?.name ?? "";
    if (kind !== "delete") return ctx.enqueue(name);
    // A Node registered again under this name is new: it must not inherit the old one's first sighting.
    memory.pacer.forget(name);
    memory.written.forget(name);
    deps.projection?.project(name, undefined);
    ctx.forget(name);
  });
  const offCache = deps.instances.onChange((ids) => {
    for (const name of nodesOfLinodes(deps.nodes.list(), ids)) ctx.enqueue(name);
  });
  return [offNodes, offCache];
}

/**
 * The `cloud-node` controller: Node names as keys, enqueued by Node and cache events; a status resync every
 * `--node-status-update-frequency` after one listing, which skips every Node settled at its current version.
 */
export function cloudNodeController(
  deps: NodeControllerDeps,
  options: NodeControllerOptions = {},
): ControllerSpec<NodeMemory> {
  return {
    name: options.metadataOnly ? "node-metadata" : "cloud-node",
    workers: options.workers ?? 10,
    retry: options.retryBaseMs === undefined && options.retryMaxMs === undefined
      ? undefined
      : { baseMs: options.retryBaseMs ?? 1_000, maxMs: options.retryMaxMs ?? 300_000 },
    memory: () => ({
      pacer: new RefreshPacer(deps.clock, options.forcedRefreshIntervalMs),
      written: new OwnWrites<V1Node>(),
      refreshFailures: 0,
    }),
    sources: (ctx) => sources(deps, ctx),
    initialKeys: () => everyNodeName(deps.nodes),
    resync: {
      periodMs: options.statusUpdateFrequencyMs ?? DEFAULT_STATUS_UPDATE_FREQUENCY_MS,
      keys: (ctx) => refreshedNodeNames(deps, ctx),
    },
    inputs: (name, ctx) => {
      const node = ctx.memory.written.latest(name, deps.nodes.get(name));
      const rv = node?.metadata?.resourceVersion;
      return rv === undefined ? undefined : `${rv}/${ctx.memory.refreshFailures}`;
    },
    reconcile: async (name, ctx) => {
      const result = await reconcileNode(deps, name, { memory: ctx.memory, options, writes: ctx });
      deps.projection?.project(name, result.held);
      return result;
    },
  };
}
