/**
 * The `route` controller's loop: Node events and a resync enqueue the one key `routes`; one worker runs
 * passes, at most one per `passIntervalMs` (bursts of Node events coalesce), with backoff (the work
 * queue's, 1 s doubling to 5 min) when a pass fails.
 */
import type { CoreV1Api, V1Node } from "@kubernetes/client-node";
import { strategicPatchNodeStatus } from "../../kube/patch.ts";
import type { LinodeClient } from "../../linode/client.ts";
import { runWorkers } from "../loop/run_queue.ts";
import { runWithin } from "../loop/plan.ts";
import { runResync } from "../loop/resync.ts";
import { WorkQueue } from "../loop/work_queue.ts";
import { parseProviderId } from "../provider_id.ts";
import { routeConditionOf } from "./condition.ts";
import type { NodeConditionWriter } from "./report.ts";
import { type RangeWriter, type ReconcileOptions, reconcileRoutes, type RouteDeps } from "./route.ts";
import { RouteState } from "./state.ts";

/** The single key of the whole-cluster pass. */
export const ROUTES_KEY = "routes";
/** Default `--route-reconciliation-period` (upstream's 10 s); passes in between are event-driven. */
export const DEFAULT_RESYNC_MS = 10_000;
/** Least time between two passes: events within it coalesce into one. */
export const MIN_INTERVAL_MS = 250;
/** What each Node adds to the least time between two passes, above `MIN_INTERVAL_MS`. */
export const INTERVAL_PER_NODE_MS = 0.2;
/** The least time between two passes never grows past this. */
export const MAX_INTERVAL_MS = 2_000;

/**
 * The least time between two passes in a cluster of `nodes` Nodes: 250 ms up to 1,250 Nodes, then 0.2 ms
 * per Node (1 s at 5,000), at most 2 s. Each pass plans every Node: during a cold start, when Node events
 * never stop, passes 250 ms apart spent a sixth of a 5,000-Node cluster's CPU re-planning Nodes already
 * routed. Still a fifth or less of upstream's 10 s route period.
 */
export function passIntervalMs(nodes: number): number {
  return Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, nodes * INTERVAL_PER_NODE_MS));
}

/** Options of the route controller. */
export interface RouteControllerOptions extends ReconcileOptions {
  /** `--route-reconciliation-period`. */
  resyncMs?: number;
}

/** What about a Node matters to routes: a change here starts a pass at once. */
function routeFingerprint(node: V1Node): string {
  const s = node.spec;
  return JSON.stringify([s?.providerID ?? "", s?.podCIDRs ?? [], s?.podCIDR ?? ""]);
}

/** All a pass reads of a Node (its routes, and for its report Ready and the condition): its skip input. */
function passFingerprint(node: V1Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status ?? "";
  return `${routeFingerprint(node)} ${ready} ${routeConditionOf(node) ?? ""}`;
}

/** Tracks Node events: a pass for each relevant change; a deleted Node's Linode is released. */
function watchNodes(
  deps: RouteDeps,
  state: RouteState,
  queue: WorkQueue<string>,
  seen: Map<string, string>,
): () => void {
  for (const n of deps.nodes.list()) {
    seen.set(n.metadata?.name ?? "", routeFingerprint(n));
    state.inputs.see(n.metadata?.name ?? "", passFingerprint(n));
  }
  return deps.nodes.onChange((kind, node) => {
    const name = node.metadata?.name ?? "";
    const linodeId = parseProviderId(node.spec?.providerID);
    state.inputs.see(name, kind === "delete" ? undefined : passFingerprint(node));
    if (kind === "delete") {
      seen.delete(name);
      state.recordCondition(name, undefined);
      if (linodeId !== undefined) {
        state.released.set(linodeId, name);
        state.forgetLearned(linodeId);
      }
      queue.add(ROUTES_KEY);
      return;
    }
    const fingerprint = routeFingerprint(node);
    if (seen.get(name) === fingerprint) return;
    seen.set(name, fingerprint);
    // A Node that is new or changed gets its Linode's interfaces read at once if the cache lacks them.
    if (linodeId !== undefined) state.forgetLearned(linodeId);
    queue.add(ROUTES_KEY);
  });
}

/** The `route` controller: runs until the signal aborts. */
export function startRouteController(
  deps: RouteDeps,
  options: RouteControllerOptions,
): { run(signal: AbortSignal): Promise<void> } {
  return {
    async run(signal: AbortSignal): Promise<void> {
      // Each Node's route fingerprint, by name: also the cluster's size for the least time between passes.
      const seen = new Map<string, string>();
      const queue = new WorkQueue<string>({
        name: "route",
        clock: deps.clock,
        metrics: deps.metrics,
        minIntervalMs: () => passIntervalMs(seen.size),
      });
      const state = new RouteState();
      const offNodes = watchNodes(deps, state, queue, seen);
      queue.add(ROUTES_KEY);
      try {
        await Promise.all([
          runWorkers(queue, {
            concurrency: 1,
            signal,
            log: deps.log,
            metrics: deps.metrics,
            clock: deps.clock,
            handle: async (key, s) => {
              const result = await runWithin(
                deps.plan,
                { controller: "route", scope: ROUTES_KEY },
                (plan) => reconcileRoutes(deps, state, { ...options, signal: s, plan }),
              );
              if (result.retryInMs !== undefined) queue.addAfter(key, Math.max(1, result.retryInMs));
            },
          }),
          // A pass that failed waits for its backoff; the resync must not cut it short.
          runResync(queue, {
            clock: deps.clock,
            periodMs: options.resyncMs ?? DEFAULT_RESYNC_MS,
            signal,
            keys: () => [ROUTES_KEY],
            keepBackoff: true,
          }),
        ]);
      } finally {
        offNodes();
        queue.shutDown();
      }
    },
  };
}

/** Range writes over the Linode client: a config interface's `ip_ranges`, or a Linode interface's ranges. */
export function linodeRangeWriter(linode: Pick<LinodeClient, "instances" | "interfaces">): RangeWriter {
  return {
    async setRanges(t, ranges, signal) {
      if (t.configId === null) {
        const update = { ranges };
        const updated = await linode.interfaces.updateVpcRanges(t.linodeId, t.interfaceId, update, {
          signal,
        });
        return updated.vpc?.ipv4?.ranges.map((r) => r.range) ?? [...ranges];
      }
      const body = { ip_ranges: [...ranges] };
      const updated = await linode.instances.updateConfigInterface(
        t.linodeId,
        t.configId,
        t.interfaceId,
        body,
        {
          signal,
        },
      );
      return updated.ip_ranges ?? [...ranges];
    },
  };
}

/** The condition writer over client-node: a strategic merge patch of the Node's status (fenced client). */
export function kubeConditionWriter(core: CoreV1Api): NodeConditionWriter {
  return {
    patchRouteCondition: (name, condition) =>
      strategicPatchNodeStatus(core, name, { status: { conditions: [{ ...condition }] } }),
  };
}
