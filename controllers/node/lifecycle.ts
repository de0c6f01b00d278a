/**
 * `cloud-node-lifecycle`: taints Nodes whose Linode is shut down and deletes Nodes whose Linode is confirmed
 * gone (a direct GET answering 404). Unknown is never absent: any doubt means no deletion. What a pass should
 * do is decided by `planLifecycle` (pure); its writes go through the Kubernetes executor.
 */
import type { V1Node, V1Taint } from "@kubernetes/client-node";
import type { InstanceIndex } from "../../cache/instance_index.ts";
import type { LinodeInstance, Snapshot } from "../../cache/types.ts";
import { type Clock, isAbort } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Registry } from "../../common/metrics.ts";
import { LeaseLostError } from "../../common/write_guard.ts";
import { type EventSink, normalEvent, refFor, warnEvent } from "../../kube/events.ts";
import { isNotFound } from "../../linode/errors.ts";
import {
  type ControllerSpec,
  describeError,
  Fingerprints,
  type PassResult,
  type WriteContext,
} from "../loop/runtime.ts";
import type { ActionSpec } from "../loop/shadow.ts";
import { classifyProviderId, parseProviderId } from "../provider_id.ts";
import {
  hasTaint,
  type NodePatch,
  SHUTDOWN_TAINT_KEY,
  taintList,
  withoutTaint,
  withTaint,
} from "./addresses.ts";

/** Nodes as the informer holds them. `Informer<V1Node>` implements it. */
export interface LifecycleNodeLister {
  list(): readonly V1Node[];
  /** Node events: the controller skips passes over Nodes and Linodes that did not change. */
  onChange(handler: (kind: "add" | "update" | "delete", node: V1Node) => void): () => void;
}

/** The cached Linodes. `InstanceCache` implements it. */
export interface LifecycleInstances {
  view(options?: { maxAgeMs?: number }): Promise<Snapshot<InstanceIndex>>;
  recordInstance(instance: LinodeInstance): void;
  /** Write-through after a direct GET answered 404. */
  forgetInstance(id: number): void;
}

/** A direct read of one Linode; rejects with a `LinodeApiError` of kind `not_found` when it does not exist. */
export interface InstanceGetter {
  get(linodeId: number): Promise<LinodeInstance>;
}

/** Fenced Node writes. */
export interface LifecycleNodeWriter {
  /** Merge patch; includes `metadata.resourceVersion` when given so a concurrent change answers 409. */
  patchNode(name: string, patch: NodePatch): Promise<unknown>;
  /** Deletes with uid and resourceVersion preconditions. */
  deleteNode(name: string, preconditions: { uid: string; resourceVersion: string }): Promise<unknown>;
}

/** What the lifecycle controller needs. */
export interface LifecycleDeps {
  nodes: LifecycleNodeLister;
  instances: LifecycleInstances;
  linode: InstanceGetter;
  writer: LifecycleNodeWriter;
  events: EventSink;
  log: Logger;
  metrics: Registry;
  clock: Clock;
}

/** Options of the lifecycle controller. */
export interface LifecycleOptions {
  /** `--node-monitor-period` (default 5 s). */
  monitorPeriodMs?: number;
  /** Share of Linode Nodes that may look gone in one pass before deletions are blocked (default 0.5). */
  maxDeletionShare?: number;
  /** Oldest cache data that may justify a taint or a deletion (default 60 s). */
  maxCacheAgeMs?: number;
}

/** State kept between passes (so a blocked mass deletion is reported once, not every 5 s). */
export interface LifecycleState {
  lastBlocked?: string;
  /**
   * Linodes a direct GET answered 404 for: an id is never reused, so a Node whose deletion is held (dry run)
   * or failed costs no second GET.
   */
  gone?: Set<number>;
  /** What a pass reads of each Node (kept from Node events): the Node part of a pass's inputs. */
  nodes: Fingerprints;
  /**
   * Whether some Linode Node was not Ready at a version of `nodes`: the inputs of a pass over unchanged Nodes
   * are decided without listing them (every 5 s over 5,000 Nodes, the listing was most of the idle CPU).
   */
  needsIndexAt?: { version: number; needs: boolean };
}

/**
 * The Linode statuses the Go CCM's `InstanceShutdown` reports as shut down (cloud/linode/services/instances.go):
 * `offline` and `shutting_down`, not `stopped`.
 */
const SHUTDOWN_STATUSES: ReadonlySet<string> = new Set(["offline", "shutting_down"]);

/** What one lifecycle pass should do. */
export interface LifecyclePlan {
  taint: V1Node[];
  untaint: V1Node[];
  gone: { node: V1Node; linodeId: number }[];
  /** True when too many Nodes look gone: none of `gone` may be deleted. */
  blocked: boolean;
}

/** True when the Node's `Ready` condition is `True`. */
export function isNodeReady(node: V1Node): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

/** True when the lifecycle controller needs Linode state: some Linode Node is not Ready. */
export function needsInstanceState(nodes: readonly V1Node[]): boolean {
  return nodes.some((n) => classifyProviderId(n.spec?.providerID) === "linode" && !isNodeReady(n));
}

/**
 * Decides taints and deletion candidates as upstream's `MonitorNodes` (k8s.io/cloud-provider
 * controllers/nodelifecycle, v0.35.4): a Ready Node loses the shutdown taint, and only a Ready one; a NotReady
 * Node whose Linode is shut down gets it. `index` is undefined when Linode state is unknown: then only Ready
 * Nodes lose a leftover shutdown taint. Nodes without a valid `linode://` providerID are never touched.
 */
export function planLifecycle(
  nodes: readonly V1Node[],
  index: InstanceIndex | undefined,
  options: { maxDeletionShare?: number } = {},
): LifecyclePlan {
  const plan: LifecyclePlan = { taint: [], untaint: [], gone: [], blocked: false };
  const managed = nodes.filter((n) => classifyProviderId(n.spec?.providerID) === "linode");
  for (const node of managed) {
    const tainted = hasTaint(node, SHUTDOWN_TAINT_KEY);
    if (isNodeReady(node)) {
      if (tainted) plan.untaint.push(node);
      continue;
    }
    const linodeId = parseProviderId(node.spec?.providerID);
    if (!index || linodeId === undefined) continue;
    const linode = index.byId(linodeId);
    if (!linode) plan.gone.push({ node, linodeId });
    else if (SHUTDOWN_STATUSES.has(linode.status) && !tainted) plan.taint.push(node);
  }
  const share = options.maxDeletionShare ?? 0.5;
  const count = plan.gone.length;
  plan.blocked = count > 0 && (count >= managed.length || count > share * managed.length);
  return plan;
}

/** True when a listing may justify taints and deletions: fresh, complete and younger than the age limit. */
function isTrusted(snap: Snapshot<InstanceIndex>, options: LifecycleOptions): boolean {
  return !snap.stale && !snap.suspicious && snap.ageMs <= (options.maxCacheAgeMs ?? 60_000);
}

/** The cached index when it may justify taints and deletions; undefined when Linode state is unknown. */
export async function trustedIndex(
  deps: LifecycleDeps,
  options: LifecycleOptions,
): Promise<Snapshot<InstanceIndex> | undefined> {
  let snap: Snapshot<InstanceIndex>;
  try {
    snap = await deps.instances.view();
  } catch (error) {
    if (isAbort(error)) throw error;
    deps.log.warning("Linode state unknown, skipping shutdown and deletion checks: {error}", {
      error: describeError(error),
    });
    return undefined;
  }
  if (!isTrusted(snap, options)) {
    const { stale, suspicious, ageMs } = snap;
    deps.log.warning("Linode cache not trusted (stale {stale}, suspicious {suspicious}, age {ageMs} ms)", {
      stale,
      suspicious,
      ageMs,
    });
    return undefined;
  }
  return snap;
}

/** What a pass reads of a Node: a change here (or an added or deleted Node) means the next pass runs. */
function lifecycleFingerprint(node: V1Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status ?? "";
  return `${node.spec?.providerID ?? ""} ${ready} ${hasTaint(node, SHUTDOWN_TAINT_KEY)}`;
}

/** The `cloud-node-lifecycle` action putting on (or taking off) the shutdown taint. */
export function shutdownTaintAction(node: V1Node, taints: readonly V1Taint[], on: boolean): ActionSpec {
  return {
    action: on ? "taint-shutdown" : "remove-shutdown-taint",
    object: node.metadata?.name ?? "",
    changes: [{ field: "spec.taints", old: taintList(node.spec?.taints), new: taintList(taints) }],
  };
}

/** The `cloud-node-lifecycle` action deleting a Node whose Linode answered 404. */
export function deleteNodeAction(node: V1Node, linodeId: number): ActionSpec {
  return {
    action: "delete-node",
    object: node.metadata?.name ?? "",
    changes: [{ field: "linode", old: String(linodeId), new: null }],
  };
}

/** Default `--node-monitor-period`. */
export const DEFAULT_MONITOR_PERIOD_MS = 5_000;
const SHUTDOWN_TAINT: V1Taint = { key: SHUTDOWN_TAINT_KEY, effect: "NoSchedule" };

async function setShutdownTaint(deps: LifecycleDeps, node: V1Node, pass: Pass): Promise<void> {
  const { on, writes } = pass;
  const name = node.metadata?.name ?? "";
  const taints = on ? withTaint(node, SHUTDOWN_TAINT) : withoutTaint(node, SHUTDOWN_TAINT_KEY);
  try {
    const applied = await writes.apply({
      api: "kubernetes",
      action: shutdownTaintAction(node, taints, on),
      // The whole taints list is replaced: the resourceVersion makes a concurrent taint change a 409.
      send: () =>
        deps.writer.patchNode(name, {
          metadata: { resourceVersion: node.metadata?.resourceVersion },
          spec: { taints },
        }),
    });
    if (!applied.sent) return;
    deps.log.info(on ? "tainted node {node} as shut down" : "removed shutdown taint from node {node}", {
      node: name,
    });
  } catch (error) {
    if (isAbort(error)) throw error;
    deps.log.warning("Cannot update taints of node {node}: {error}", {
      node: name,
      error: describeError(error),
    });
  }
}

/** True once a direct GET answered 404 for the Linode (remembered: ids are never reused). */
async function isConfirmedGone(
  deps: LifecycleDeps,
  state: LifecycleState,
  target: { name: string; linodeId: number },
): Promise<boolean> {
  const { name, linodeId } = target;
  if (state.gone?.has(linodeId)) return true;
  try {
    const linode = await deps.linode.get(linodeId);
    deps.instances.recordInstance(linode);
    deps.log.debug("linode {linodeId} of node {node} still exists", { linodeId, node: name });
    return false;
  } catch (error) {
    if (isAbort(error)) throw error;
    if (!isNotFound(error)) {
      deps.log.warning("Cannot confirm linode {linodeId} of node {node} is gone: {error}", {
        linodeId,
        node: name,
        error: describeError(error),
      });
      return false;
    }
  }
  (state.gone ??= new Set()).add(linodeId);
  deps.instances.forgetInstance(linodeId);
  return true;
}

async function deleteIfGone(
  deps: LifecycleDeps,
  node: V1Node,
  target: { linodeId: number; state: LifecycleState; writes: WriteContext },
): Promise<void> {
  const { linodeId, state, writes } = target;
  const name = node.metadata?.name ?? "";
  if (!await isConfirmedGone(deps, state, { name, linodeId })) return;
  const uid = node.metadata?.uid ?? "";
  const resourceVersion = node.metadata?.resourceVersion ?? "";
  try {
    const applied = await writes.apply({
      api: "kubernetes",
      action: deleteNodeAction(node, linodeId),
      send: () => sendNodeDeletion(deps, node, { uid, resourceVersion }),
    });
    if (!applied.sent) return;
  } catch (error) {
    if (isAbort(error)) throw error;
    deps.log.debug("node {node} not deleted: {error}", { node: name, error: describeError(error) });
    return;
  }
  deps.metrics.counter("ccm_node_deletions_total", "Nodes deleted because their Linode is gone").inc();
  deps.log.info("deleted node {node}: linode {linodeId} does not exist", { node: name, linodeId });
}

/**
 * Deletes the Node with upstream's Events (`MonitorNodes`): `DeletingNode` before the request, and
 * `DeletingNodeFailed` (Warning) with the error when it fails, in upstream's words.
 */
async function sendNodeDeletion(
  deps: LifecycleDeps,
  node: V1Node,
  preconditions: { uid: string; resourceVersion: string },
): Promise<void> {
  const name = node.metadata?.name ?? "";
  const ref = refFor(node, "Node");
  normalEvent(deps, {
    ref,
    reason: "DeletingNode",
    message: "Deleting node {node} because it does not exist in the cloud provider",
    props: { node: name },
  });
  try {
    await deps.writer.deleteNode(name, preconditions);
  } catch (error) {
    // A fenced write (leadership lost) failed nothing on the apiserver: no Event, as none can be written.
    if (isAbort(error) || error instanceof LeaseLostError) throw error;
    warnEvent(deps, {
      ref,
      reason: "DeletingNodeFailed",
      message: "Failed deleting node {node}: {error}",
      props: { node: name, error: error instanceof Error ? error.message : String(error) },
    });
    throw error;
  }
}

function reportBlocked(
  deps: LifecycleDeps,
  plan: LifecyclePlan,
  total: number,
  state: LifecycleState,
): void {
  deps.metrics.counter("ccm_node_deletions_blocked_total", "Lifecycle passes that refused a mass deletion")
    .inc();
  const names = plan.gone.map((g) => g.node.metadata?.name ?? "").sort();
  const key = names.join(",");
  if (state.lastBlocked === key) return;
  state.lastBlocked = key;
  const first = plan.gone[0]?.node;
  if (!first) return;
  warnEvent(deps, {
    ref: refFor(first, "Node"),
    reason: "NodeDeletionBlocked",
    message: "Refusing to delete {count} of {total} nodes whose Linodes look gone: {nodes}",
    props: { count: names.length, total, nodes: key },
  });
}

/** A taint write's direction and the pass's executors. */
interface Pass {
  on: boolean;
  writes: WriteContext;
}

/**
 * What a pass reads, without logging: the Nodes (a version kept from their events) and, when some Linode Node
 * is not Ready, the generation of a trusted listing (refreshed first when older than its TTL). Undefined when
 * Linode state is in doubt: such a pass is never skipped.
 */
async function passInputs(deps: LifecycleDeps, state: LifecycleState, options: LifecycleOptions) {
  const version = state.nodes.version;
  let needs = state.needsIndexAt?.version === version ? state.needsIndexAt.needs : undefined;
  if (needs === undefined) {
    needs = needsInstanceState(deps.nodes.list());
    state.needsIndexAt = { version, needs };
  }
  if (!needs) return `${version}`;
  const snap = await deps.instances.view().catch((error) => {
    if (isAbort(error)) throw error;
    return undefined;
  });
  return snap && isTrusted(snap, options) ? `${version}/${snap.generation}` : undefined;
}

/**
 * One lifecycle pass: no Linode read unless some Linode Node is not Ready. Settled when it had nothing to do;
 * the runtime then skips the next passes until a Node or the listing changes.
 */
export async function reconcileLifecycle(
  deps: LifecycleDeps,
  state: LifecycleState,
  options: LifecycleOptions & { writes: WriteContext },
): Promise<LifecyclePlan & PassResult> {
  const nodes = deps.nodes.list();
  const needsIndex = needsInstanceState(nodes);
  const snap = needsIndex ? await trustedIndex(deps, options) : undefined;
  const plan = planLifecycle(nodes, snap?.data, options);
  const writes = options.writes;
  for (const node of plan.untaint) await setShutdownTaint(deps, node, { on: false, writes });
  for (const node of plan.taint) await setShutdownTaint(deps, node, { on: true, writes });
  if (plan.blocked) {
    const total = nodes.filter((n) => classifyProviderId(n.spec?.providerID) === "linode").length;
    reportBlocked(deps, plan, total, state);
    return plan;
  }
  state.lastBlocked = undefined;
  for (const { node, linodeId } of plan.gone) await deleteIfGone(deps, node, { linodeId, state, writes });
  const idle = plan.taint.length + plan.untaint.length + plan.gone.length === 0;
  return { ...plan, settled: idle && (!needsIndex || snap !== undefined) };
}

/** The single key of the whole-cluster pass. */
const NODES_KEY = "nodes";

/** Tracks what a pass reads of each Node. */
function trackNodes(deps: LifecycleDeps, state: LifecycleState): () => void {
  return deps.nodes.onChange((kind, node) => {
    state.nodes.see(node.metadata?.name ?? "", kind === "delete" ? undefined : lifecycleFingerprint(node));
  });
}

/** The state a term starts from: what a pass reads of every Node now. A function of its own (retention). */
function termState(deps: LifecycleDeps): LifecycleState {
  const state: LifecycleState = { nodes: new Fingerprints() };
  for (const n of deps.nodes.list()) state.nodes.see(n.metadata?.name ?? "", lifecycleFingerprint(n));
  return state;
}

/**
 * The `cloud-node-lifecycle` controller: one whole-cluster pass at the start of a term and every
 * `--node-monitor-period`, skipped while nothing it reads changed since a pass that had nothing to do.
 */
export function nodeLifecycleController(
  deps: LifecycleDeps,
  options: LifecycleOptions = {},
): ControllerSpec<LifecycleState> {
  return {
    name: "cloud-node-lifecycle",
    workers: 1,
    memory: () => termState(deps),
    sources: (ctx) => [trackNodes(deps, ctx.memory)],
    initialKeys: () => [NODES_KEY],
    resync: { periodMs: options.monitorPeriodMs ?? DEFAULT_MONITOR_PERIOD_MS, keys: () => [NODES_KEY] },
    inputs: (_key, ctx) => passInputs(deps, ctx.memory, options),
    reconcile: (_key, ctx) => reconcileLifecycle(deps, ctx.memory, { ...options, writes: ctx }),
  };
}
