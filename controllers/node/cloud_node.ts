/**
 * `cloud-node`: initialises Nodes tainted `node.cloudprovider.kubernetes.io/uninitialized` (providerID,
 * addresses, labels, annotations, then the taint goes), and keeps addresses, labels and annotations of
 * initialised Nodes in sync with the Linode cache. Reads Linodes only through the cache.
 */
import type { V1Node } from "@kubernetes/client-node";
import type { Clock } from "../../common/clock.ts";
import { isAbort } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Registry } from "../../common/metrics.ts";
import {
  findInstance,
  hasTaint,
  type Ipv4Cidr,
  type NodeUpdatePlan,
  planNodeUpdate,
  UNINITIALIZED_TAINT_KEY,
} from "./addresses.ts";
import { applyPlan, type NodeWriter } from "./node_writer.ts";
import { classifyProviderId, parseProviderId } from "../provider_id.ts";
import { InvalidInputError, runWorkers } from "../loop/run_queue.ts";
import { lookupNewNode, type NodeInstances, RefreshPacer } from "./lookup.ts";
import { type EventSink, refFor, warnEvent } from "../../kube/events.ts";
import { OwnWrites } from "../loop/own_writes.ts";
import { LIVE_SCOPE, type PlanRecorder, type PlanScope, runWithin } from "../loop/plan.ts";
import { nodeUpdateAction } from "./plan_actions.ts";
import { recordSkippedPass } from "../loop/reconcile_metrics.ts";
import { runResync } from "../loop/resync.ts";
import { WorkQueue } from "../loop/work_queue.ts";

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
  /** Where each reconcile names its writes (`--dry-run` holds them); default: every write goes ahead. */
  plan?: PlanRecorder;
  /** Receives each Node's held update (dry run), for the controllers that decide from Nodes. */
  projection?: { project(name: string, plan: NodeUpdatePlan | undefined): void };
}

/** Options of the node controller. */
export interface NodeControllerOptions {
  /** `LINODE_EXTERNAL_SUBNET`: private addresses in it are ExternalIPs. */
  externalSubnet?: Ipv4Cidr;
  /** `--node-status-update-frequency` (default 5 min): resync of every Node from the cache. */
  statusUpdateFrequencyMs?: number;
  /** Nodes reconciled at once (default 10). */
  workers?: number;
  /** Minimum interval between refreshes forced by uninitialised Nodes (default 2 s). */
  forcedRefreshIntervalMs?: number;
  /** Per-Node retry backoff (default 1 s doubling to 5 min). */
  retryBaseMs?: number;
  retryMaxMs?: number;
}

/** Default `--node-status-update-frequency`. */
export const DEFAULT_STATUS_UPDATE_FREQUENCY_MS = 300_000;

/** What a cloud-node controller remembers between reconciles of its Nodes. */
export interface NodeMemory {
  /** First sightings of uninitialised Nodes and the refreshes they forced. */
  pacer: RefreshPacer;
  /** This controller's writes the informer has not shown yet. */
  written: OwnWrites<V1Node>;
  /**
   * Nodes whose last reconcile found nothing to change, by name, with the resourceVersion it read: until the
   * Node or its Linode's listed state changes (each enqueues it), the status resync has nothing to check.
   */
  settled?: Map<string, string>;
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
 * informer, or from its own last write while the informer has not shown it yet (see `OwnWrites`). Resolves
 * to the update held in dry run, if any.
 */
export async function reconcileNode(
  deps: NodeControllerDeps,
  name: string,
  context: { memory: NodeMemory; options?: NodeControllerOptions; plan?: PlanScope },
): Promise<NodeUpdatePlan | undefined> {
  const { memory, options = {}, plan = LIVE_SCOPE } = context;
  const node = memory.written.latest(name, deps.nodes.get(name));
  memory.settled?.delete(name);
  const kind = classifyProviderId(node?.spec?.providerID);
  const initialising = node !== undefined && hasTaint(node, UNINITIALIZED_TAINT_KEY);
  if (!initialising) memory.pacer.forget(name);
  if (!node || kind === "foreign") return;
  if (kind === "invalid") {
    if (!initialising) return;
    const message = "Cannot initialise node {node}: invalid providerID {providerID}";
    const props = { node: name, providerID: node.spec?.providerID };
    warnEvent(deps, { ref: refFor(node, "Node"), reason: "InvalidProviderID", message, props });
    throw new InvalidInputError(`Cannot initialise node ${name}: invalid providerID`);
  }
  const { found, index } = await linodeOf(deps, memory, node, initialising);
  if (!found) {
    if (!initialising) {
      deps.log.debug("no linode for node {node} in the cache", { node: name });
      return;
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
  // Held in dry run: nothing written, nothing recorded as written, so the next reconcile decides it again.
  const update = planNodeUpdate(node, target.instance, target.vpc, options);
  const action = nodeUpdateAction(node, update);
  if (action && plan.hold(action)) return update;
  const applied = await applyPlan(deps, node, target, options);
  if (!applied.changed && !initialising) memory.settled?.set(name, node.metadata?.resourceVersion ?? "");
  if (applied.latest !== node) memory.written.record(name, applied.latest, applied.older);
  if (applied.untainted) {
    memory.pacer.forget(name);
    deps.log.info("initialised node {node} as linode {linodeId} (found by {via})", {
      node: name,
      linodeId,
      via: found.via,
    });
    deps.metrics.counter("ccm_nodes_initialised_total", "Nodes initialised by the cloud-node controller")
      .inc();
  } else if (applied.changed) {
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

/**
 * The resync's keys, after one listing per period (when no other loop refreshed within the TTL): every Node
 * but those settled at their current resourceVersion. Changes the listing finds enqueue their Nodes at once
 * (`instances.onChange`, which also unsettles them), so a settled Node has nothing new to check.
 */
async function refreshedNodeNames(
  deps: NodeControllerDeps,
  memory: NodeMemory,
  signal: AbortSignal,
): Promise<string[]> {
  try {
    await deps.instances.view();
  } catch (error) {
    if (isAbort(error, signal) || signal.aborted) throw error;
    deps.log.warning("node status refresh failed: {error}", { error: String(error) });
    // Whatever the listing would have shown is unknown: every Node is checked against the cache as it is.
    memory.settled?.clear();
  }
  const names: string[] = [];
  let skipped = 0;
  for (const n of deps.nodes.list()) {
    const name = n.metadata?.name ?? "";
    if (memory.settled?.get(name) === n.metadata?.resourceVersion) skipped++;
    else names.push(name);
  }
  if (skipped > 0) recordSkippedPass(deps.metrics, "cloud-node", skipped);
  return names;
}

/**
 * Enqueues every Node. A function of its own: V8 keeps the registers of a suspended async function, a
 * finished loop's iterator included, so the same loop in `run` held the first list, every Node as it was at
 * start, for the whole term (tests/retention_test.ts).
 */
function enqueueEveryNode(queue: WorkQueue<string>, nodes: NodeControllerDeps["nodes"]): void {
  for (const n of nodes.list()) queue.add(n.metadata?.name ?? "");
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
      const memory: NodeMemory = {
        pacer: new RefreshPacer(deps.clock, options.forcedRefreshIntervalMs),
        written: new OwnWrites<V1Node>(),
        settled: new Map(),
      };
      const offNodes = deps.nodes.onChange((kind, node) => {
        const name = node.metadata?.name ?? "";
        // A Node registered again under this name is new: it must not inherit the old one's first sighting.
        if (kind !== "delete") queue.add(name);
        else {
          memory.pacer.forget(name);
          memory.written.forget(name);
          memory.settled?.delete(name);
          deps.plan?.forget("cloud-node", name);
        }
      });
      const offCache = deps.instances.onChange((ids) => {
        for (const name of nodesOfLinodes(deps.nodes.list(), ids)) {
          memory.settled?.delete(name);
          queue.add(name);
        }
      });
      enqueueEveryNode(queue, deps.nodes);
      const periodMs = options.statusUpdateFrequencyMs ?? DEFAULT_STATUS_UPDATE_FREQUENCY_MS;
      const keys = () => refreshedNodeNames(deps, memory, signal);
      try {
        await Promise.all([
          runWorkers(queue, {
            concurrency: options.workers ?? 10,
            signal,
            log: deps.log,
            metrics: deps.metrics,
            clock: deps.clock,
            handle: (name) =>
              runWithin(
                deps.plan,
                { controller: "cloud-node", scope: name },
                async (plan) => {
                  const held = await reconcileNode(deps, name, { memory, options, plan });
                  deps.projection?.project(name, held);
                },
              ),
          }),
          runResync(queue, { clock: deps.clock, periodMs, signal, keys }),
        ]);
      } finally {
        offNodes();
        offCache();
        queue.shutDown();
      }
    },
  };
}
