/**
 * `cloud-node`: initialises Nodes tainted `node.cloudprovider.kubernetes.io/uninitialized` (providerID,
 * addresses, labels, annotations, then the taint goes), and keeps addresses, labels and annotations of
 * initialised Nodes in sync with the Linode cache. Reads Linodes only through the cache.
 */
import type { CoreV1Api, V1Node } from "@kubernetes/client-node";
import type { InstanceIndex } from "../cache/instance_index.ts";
import type { LinodeInstance, Snapshot } from "../cache/types.ts";
import type { Clock } from "../clock.ts";
import { isAbort } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { Registry } from "../metrics.ts";
import {
  findInstance,
  hasTaint,
  type Ipv4Cidr,
  type LookupVia,
  type NodeAddress,
  type NodePatch,
  planNodeUpdate,
  UNINITIALIZED_TAINT_KEY,
} from "./node_addresses.ts";
import {
  httpStatusOf,
  type LifecycleDeps,
  type LifecycleOptions,
  startNodeLifecycleController,
} from "./node_lifecycle.ts";
import { classifyProviderId, parseProviderId } from "./provider_id.ts";
import { InvalidInputError, RetryAfterError, runWorkers } from "./run_queue.ts";
import { type EventSink, refFor, warnEvent } from "../kube/events.ts";
import { deleteNode, mergePatchNode, mergePatchNodeStatus } from "../kube/patch.ts";
import type { Fence } from "../lease/fence.ts";
import { WorkQueue } from "./work_queue.ts";

/** Nodes as the informer holds them. `Informer<V1Node>` implements it. */
export interface NodeLister {
  list(): readonly V1Node[];
  get(name: string): V1Node | undefined;
  onChange(handler: (kind: "add" | "update" | "delete", node: V1Node) => void): () => void;
}

/** The cached Linodes. `InstanceCache` implements it. */
export interface NodeInstances {
  view(options?: { maxAgeMs?: number; vpcMaxAgeMs?: number }): Promise<Snapshot<InstanceIndex>>;
  /** Age of the VPC addresses in the index; undefined when no VPC is configured. */
  vpcAgeMs(): number | undefined;
  onChange(listener: (linodeIds: ReadonlySet<number>) => void): () => void;
}

/** Fenced Node reads and writes. */
export interface NodeWriter {
  /** A fresh read from the apiserver (after a 409). */
  getNode(name: string): Promise<V1Node>;
  /** Merge patch of metadata and spec; `metadata.resourceVersion` in the patch makes a race a 409. */
  patchNode(name: string, patch: NodePatch): Promise<unknown>;
  /** Merge patch of the status subresource (a list in it replaces the whole list). */
  patchNodeStatus(name: string, patch: { status: { addresses: NodeAddress[] } }): Promise<unknown>;
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
}

/** Options of the node controller. */
export interface NodeControllerOptions {
  /** `LINODE_EXTERNAL_SUBNET`: private addresses in it are ExternalIPs. */
  externalSubnet?: Ipv4Cidr;
  /** `--node-status-update-frequency` (default 5 min): resync of every Node from the cache. */
  statusUpdateFrequencyMs?: number;
  /** Nodes reconciled at once (default 10). */
  workers?: number;
  /** An uninitialised Node not found in data older than this forces one shared refresh (default 2 s). */
  missRefreshAfterMs?: number;
  /** Per-Node retry backoff (default 1 s doubling to 5 min). */
  retryBaseMs?: number;
  retryMaxMs?: number;
}

/** Default `--node-status-update-frequency`. */
export const DEFAULT_STATUS_UPDATE_FREQUENCY_MS = 300_000;
const MAX_CONFLICT_RETRIES = 3;
/** Default minimum age of the cache before a Node that missed forces a refresh. */
export const DEFAULT_MISS_REFRESH_AFTER_MS = 2_000;

async function applyPlan(
  deps: NodeControllerDeps,
  node: V1Node,
  found: LinodeInstance,
  vpcIpv4: readonly string[],
  options: NodeControllerOptions,
): Promise<boolean> {
  const name = node.metadata?.name ?? "";
  let current = node;
  for (let attempt = 0;; attempt++) {
    const plan = planNodeUpdate(current, found, vpcIpv4, options);
    try {
      if (plan.addresses) await deps.writer.patchNodeStatus(name, { status: { addresses: plan.addresses } });
      if (plan.patch) await deps.writer.patchNode(name, plan.patch);
      return plan.addresses !== undefined || plan.patch !== undefined;
    } catch (error) {
      if (httpStatusOf(error) !== 409 || attempt >= MAX_CONFLICT_RETRIES) throw error;
      deps.log.debug("node {node} changed while updating it, re-planning", { node: name });
      current = await deps.writer.getNode(name);
    }
  }
}

async function lookup(
  deps: NodeControllerDeps,
  node: V1Node,
  initialising: boolean,
  options: NodeControllerOptions,
): Promise<Lookup> {
  // Initialised Nodes are kept in sync from whatever the cache holds: no Linode call per Node event.
  const snap = await deps.instances.view(initialising ? undefined : { maxAgeMs: Infinity });
  const found = findInstance(node, snap.data);
  const missRefreshAfterMs = options.missRefreshAfterMs ?? DEFAULT_MISS_REFRESH_AFTER_MS;
  if (found || !initialising || snap.ageMs <= missRefreshAfterMs) {
    return { found, index: snap.data, ageMs: snap.ageMs };
  }
  // A new Linode may be younger than the cache: one refresh, shared by every Node that missed.
  const fresh = await deps.instances.view({ maxAgeMs: missRefreshAfterMs });
  return { found: findInstance(node, fresh.data), index: fresh.data, ageMs: fresh.ageMs };
}

interface Lookup {
  found?: { instance: LinodeInstance; via: LookupVia };
  index: InstanceIndex;
  /** Age of the data searched. */
  ageMs: number;
}

/**
 * When each uninitialised Node was first reconciled (monotonic ms). Cached data loaded before that moment
 * may predate its Linode: a miss in it waits for the next allowed refresh instead of a backoff and a
 * Warning, and a missing VPC address is looked up again before the Node gets its addresses.
 */
export type FirstSeen = Map<string, number>;

/**
 * The index to initialise from when the Linode has no VPC address in it: if the VPC data predates the
 * Node, refresh it once (shared, when allowed) or wait for that, so a Node in a VPC gets its final
 * InternalIP in the write that initialises it. Undefined: keep the index at hand.
 */
async function vpcIndexNewerThan(
  deps: NodeControllerDeps,
  name: string,
  firstSeen: number,
  options: NodeControllerOptions,
): Promise<InstanceIndex | undefined> {
  const vpcAgeMs = deps.instances.vpcAgeMs();
  if (vpcAgeMs === undefined || deps.clock.monotonic() - vpcAgeMs >= firstSeen) return undefined;
  const missRefreshAfterMs = options.missRefreshAfterMs ?? DEFAULT_MISS_REFRESH_AFTER_MS;
  if (vpcAgeMs <= missRefreshAfterMs) {
    const waitMs = missRefreshAfterMs - vpcAgeMs + 1;
    throw new AwaitingRefreshError(`The VPC address of node ${name} may not be in the cache yet`, waitMs);
  }
  return (await deps.instances.view({ vpcMaxAgeMs: missRefreshAfterMs })).data;
}

/** Thrown while a new Node waits for the next allowed refresh of the cache; retried quietly. */
export class AwaitingRefreshError extends RetryAfterError {
  override name = "AwaitingRefreshError";
  readonly quiet = true;
}

/** Brings one Node in line with its Linode. Throws to be retried with backoff. */
export async function reconcileNode(
  deps: NodeControllerDeps,
  name: string,
  options: NodeControllerOptions = {},
  seen: FirstSeen = new Map(),
): Promise<void> {
  const node = deps.nodes.get(name);
  if (!node) {
    seen.delete(name);
    return;
  }
  const kind = classifyProviderId(node.spec?.providerID);
  if (kind === "foreign") return;
  const initialising = hasTaint(node, UNINITIALIZED_TAINT_KEY);
  const firstSeen = seen.get(name) ?? deps.clock.monotonic();
  if (initialising) seen.set(name, firstSeen);
  else seen.delete(name);
  if (kind === "invalid") {
    if (!initialising) return;
    const message = "Cannot initialise node {node}: invalid providerID {providerID}";
    const props = { node: name, providerID: node.spec?.providerID };
    warnEvent(deps, { ref: refFor(node, "Node"), reason: "InvalidProviderID", message, props });
    throw new InvalidInputError(`Cannot initialise node ${name}: invalid providerID`);
  }
  const { found, index: cached, ageMs } = await lookup(deps, node, initialising, options);
  if (!found) {
    if (!initialising) {
      deps.log.debug("no linode for node {node} in the cache", { node: name });
      return;
    }
    if (deps.clock.monotonic() - ageMs < firstSeen) {
      const missRefreshAfterMs = options.missRefreshAfterMs ?? DEFAULT_MISS_REFRESH_AFTER_MS;
      const waitMs = Math.max(missRefreshAfterMs - ageMs, 0) + 1;
      throw new AwaitingRefreshError(`The Linode of node ${name} is not in the cache yet`, waitMs);
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
  const index = initialising && cached.vpcIpv4(linodeId).length === 0
    ? await vpcIndexNewerThan(deps, name, firstSeen, options) ?? cached
    : cached;
  const changed = await applyPlan(deps, node, found.instance, index.vpcIpv4(linodeId), options);
  if (initialising) {
    seen.delete(name);
    deps.log.info("initialised node {node} as linode {linodeId} (found by {via})", {
      node: name,
      linodeId,
      via: found.via,
    });
    deps.metrics.counter("ccm_nodes_initialised_total", "Nodes initialised by the cloud-node controller")
      .inc();
  } else if (changed) {
    deps.log.info("updated node {node} from linode {linodeId}", { node: name, linodeId });
  }
}

function nodesOfLinodes(nodes: readonly V1Node[], ids: ReadonlySet<number>): string[] {
  return nodes.filter((n) => {
    const providerID = n.spec?.providerID;
    if (!providerID) return hasTaint(n, UNINITIALIZED_TAINT_KEY);
    const id = parseProviderId(providerID);
    return id !== undefined && ids.has(id);
  }).map((n) => n.metadata?.name ?? "");
}

async function resyncLoop(
  deps: NodeControllerDeps,
  queue: WorkQueue<string>,
  periodMs: number,
  signal: AbortSignal,
) {
  while (!signal.aborted) {
    try {
      await deps.clock.sleep(periodMs, signal);
      // One listing per period (when no other loop refreshed within the TTL); changes enqueue their Nodes.
      await deps.instances.view();
    } catch (error) {
      if (isAbort(error, signal) || signal.aborted) return;
      deps.log.warning("node status refresh failed: {error}", { error: String(error) });
    }
    for (const n of deps.nodes.list()) queue.add(n.metadata?.name ?? "");
  }
}

/** The `cloud-node` controller: informer and cache events enqueue Node names; workers reconcile them. */
export function startNodeController(
  deps: NodeControllerDeps,
  options: NodeControllerOptions = {},
): { run(signal: AbortSignal): Promise<void> } {
  return {
    async run(signal: AbortSignal): Promise<void> {
      const queue = new WorkQueue<string>({
        name: "cloud-node",
        clock: deps.clock,
        metrics: deps.metrics,
        baseDelayMs: options.retryBaseMs,
        maxDelayMs: options.retryMaxMs,
      });
      const offNodes = deps.nodes.onChange((kind, node) => {
        if (kind !== "delete") queue.add(node.metadata?.name ?? "");
      });
      const offCache = deps.instances.onChange((ids) => {
        for (const name of nodesOfLinodes(deps.nodes.list(), ids)) queue.add(name);
      });
      for (const n of deps.nodes.list()) queue.add(n.metadata?.name ?? "");
      const periodMs = options.statusUpdateFrequencyMs ?? DEFAULT_STATUS_UPDATE_FREQUENCY_MS;
      const seen: FirstSeen = new Map();
      try {
        await Promise.all([
          runWorkers(queue, {
            concurrency: options.workers ?? 10,
            signal,
            log: deps.log,
            handle: (name) => reconcileNode(deps, name, options, seen),
          }),
          resyncLoop(deps, queue, periodMs, signal),
        ]);
      } finally {
        offNodes();
        offCache();
        queue.shutDown();
      }
    },
  };
}

/** Everything both node controllers need; one informer, one cache, one writer serve both. */
export type NodeControllersDeps = NodeControllerDeps & LifecycleDeps & {
  nodes: NodeLister;
  instances: NodeInstances & LifecycleDeps["instances"];
  writer: NodeWriter & LifecycleDeps["writer"];
};

/** Runs `cloud-node` and `cloud-node-lifecycle` together until the signal aborts. */
export function startNodeControllers(
  deps: NodeControllersDeps,
  options: NodeControllerOptions & LifecycleOptions = {},
): { run(signal: AbortSignal): Promise<void> } {
  const node = startNodeController(deps, options);
  const lifecycle = startNodeLifecycleController(deps, options);
  return {
    async run(signal: AbortSignal): Promise<void> {
      await Promise.all([node.run(signal), lifecycle.run(signal)]);
    },
  };
}

/** The Node writes of both controllers over client-node: merge patches and preconditioned deletes, fenced. */
export function kubeNodeWriter(core: CoreV1Api, fence?: Fence): NodeWriter & LifecycleDeps["writer"] {
  return {
    getNode: (name) => core.readNode({ name }),
    patchNode: (name, patch) => mergePatchNode(core, name, { ...patch }, fence),
    patchNodeStatus: (name, patch) => mergePatchNodeStatus(core, name, { ...patch }, fence),
    deleteNode: (name, preconditions) => deleteNode(core, name, { preconditions, fence }),
  };
}
