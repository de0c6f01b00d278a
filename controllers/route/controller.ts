/**
 * `route`: each Node's IPv4 pod CIDRs become routed ranges of its Linode's VPC interface, so pods reach each
 * other across Linodes. One whole-cluster pass (key `routes`) plans every interface from one cached listing
 * of the configured VPCs and writes only what differs; Node events start a pass at once (coalesced).
 *
 * The listing is not re-read for freshness: this controller records each of its writes in the cache. A Node
 * whose Linode is missing from it (a Linode newer than the listing) gets a targeted read of that Linode's
 * interfaces in the same pass. The listing is re-read only to find changes made by others, once per drift
 * period (the cache's age limit, see `docs/freshness.md`), and sooner (`retryListingAfterMs`) while a write
 * failed, since a failure may come from a change the cache does not show.
 */
import type { CoreV1Api, V1Node } from "@kubernetes/client-node";
import type { Snapshot, Vpc, VpcIp } from "../../cache/types.ts";
import type { VpcInterfaceRef } from "../../cache/vpc_ips.ts";
import { type Clock, isAbort } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Registry } from "../../common/metrics.ts";
import type { Cidr4 } from "../../common/net.ts";
import type { EventSink } from "../../kube/events.ts";
import { strategicPatchNodeStatus } from "../../kube/patch.ts";
import type { LinodeClient } from "../../linode/client.ts";
import { LinodeApiError } from "../../linode/errors.ts";
import type { ControllerSpec, PassResult, TermContext, WriteContext } from "../loop/runtime.ts";
import type { ActionSpec } from "../loop/shadow.ts";
import { parseProviderId } from "../provider_id.ts";
import {
  clusterCidrs4,
  type NodeRoutes,
  planRoutes,
  type RangeWrite,
  type RouteNode,
  type RouteScope,
  type RouteTarget,
  targetKey,
} from "./plan.ts";
import { type NodeConditionWriter, reportNodes, routeConditionOf, type WriteOutcome } from "./report.ts";
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
 * per Node, at most 2 s. Each pass plans every Node: during a cold start, when Node events never stop, passes
 * 250 ms apart spent much of a big cluster's CPU re-planning Nodes already routed (docs/measurements.md,
 * "Route pass interval"). Still a fifth or less of upstream's 10 s route period.
 */
export function passIntervalMs(nodes: number): number {
  return Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, nodes * INTERVAL_PER_NODE_MS));
}

/** Nodes as the informer holds them. `Informer<V1Node>` implements it. */
export interface RouteNodeLister {
  list(): readonly V1Node[];
  get(name: string): V1Node | undefined;
  onChange(handler: (kind: "add" | "update" | "delete", node: V1Node) => void): () => void;
}

/** The configured VPCs' addresses and routed ranges. `VpcIpCache` implements it. */
export interface VpcRangeCache {
  /** The listing, re-read first when older than `maxAgeMs` (default: the drift period). */
  get(options?: { maxAgeMs?: number }): Promise<Snapshot<readonly VpcIp[]>>;
  recordIpRanges(target: VpcInterfaceRef, ranges: readonly string[]): void;
  /** Reads one Linode's interfaces and records its entries in place of the cached ones; resolves to them. */
  learnLinode(linodeId: number): Promise<readonly VpcIp[]>;
}

/** The configured VPCs with their selected subnets. `VpcCache` implements it. */
export interface VpcScopeReader {
  get(options: { maxAgeMs: number }): Promise<Snapshot<readonly Vpc[]>>;
}

/** Replaces the routed ranges of one VPC interface; resolves to the ranges the API now holds. */
export interface RangeWriter {
  setRanges(target: RouteTarget, ranges: readonly string[], signal: AbortSignal): Promise<readonly string[]>;
}

/** What the route controller needs. Tests pass emulator-backed implementations. */
export interface RouteDeps {
  nodes: RouteNodeLister;
  vpcIps: VpcRangeCache;
  vpcs: VpcScopeReader;
  writer: RangeWriter;
  conditions: NodeConditionWriter;
  events: EventSink;
  log: Logger;
  metrics: Registry;
  clock: Clock;
}

/** Interface writes in flight at once. */
export const WRITE_CONCURRENCY = 4;

/** Options of one pass. */
export interface ReconcileOptions {
  /** `--cluster-cidr`: only ranges inside its IPv4 CIDRs are ever added or removed. */
  clusterCidrs: readonly string[];
  /**
   * While a write failed, the listing is re-read once older than this (`LINODE_ROUTES_CACHE_TTL_SECONDS`);
   * default: only at the drift period.
   */
  retryListingAfterMs?: number;
}

/** The Nodes whose providerID names a Linode, with their pod CIDRs. */
export function routeNodes(nodes: readonly V1Node[]): RouteNode[] {
  const out: RouteNode[] = [];
  for (const n of nodes) {
    const linodeId = parseProviderId(n.spec?.providerID);
    if (linodeId === undefined) continue;
    const podCidrs = n.spec?.podCIDRs?.length ? n.spec.podCIDRs : n.spec?.podCIDR ? [n.spec.podCIDR] : [];
    out.push({ name: n.metadata?.name ?? "", linodeId, podCidrs });
  }
  return out;
}

function scopeOf(vpcs: readonly Vpc[], cluster: readonly Cidr4[]): RouteScope {
  return {
    clusterCidrs: cluster,
    subnets: new Map(vpcs.map((v) => [v.id, new Set(v.subnets.map((s) => s.id))])),
  };
}

function writesCounter(metrics: Registry) {
  return metrics.counter("ccm_route_writes_total", "VPC interface range writes by result", ["result"]);
}

/** The plan's name for a range write: the interface's whole list, old and new (sorted: order means nothing). */
export function rangeAction(w: RangeWrite): ActionSpec {
  const old = [...w.ranges.filter((r) => !w.added.includes(r)), ...w.removed].sort();
  const action = w.added.length && w.removed.length
    ? "replace-ranges"
    : w.added.length
    ? "add-ranges"
    : "remove-ranges";
  const object = `linode ${w.target.linodeId} interface ${w.target.interfaceId}`;
  return { action, object, changes: [{ field: "ip_ranges", old, new: [...w.ranges].sort() }] };
}

/** One pass's abort signal and executors. */
interface Pass {
  signal: AbortSignal;
  writes: WriteContext;
}

async function sendWrite(
  deps: RouteDeps,
  state: RouteState,
  w: RangeWrite,
  pass: Pass,
): Promise<WriteOutcome> {
  const { signal, writes } = pass;
  const key = targetKey(w.target);
  const now = () => deps.clock.monotonic();
  if (state.pausedForMs(now()) > 0 || state.isBackingOff(key, w.ranges, now())) {
    return { kind: "deferred" } as const;
  }
  const props = { linodeId: w.target.linodeId, interfaceId: w.target.interfaceId, vpcId: w.target.vpcId };
  try {
    const applied = await writes.apply({
      api: "linode",
      action: rangeAction(w),
      send: () => deps.writer.setRanges(w.target, w.ranges, signal),
      // Write-through: the next pass plans from what the API now holds, so this write is never repeated.
      record: (held) => deps.vpcIps.recordIpRanges(w.target, held),
    });
    // Held (dry run): no write-through either, so the next pass still sees the interface as it is.
    if (!applied.sent) return { kind: "held" } as const;
    state.succeeded(key);
    writesCounter(deps.metrics).inc({ result: "success" });
    deps.log.info("routes on linode {linodeId} interface {interfaceId} (vpc {vpcId}): +{added} -{removed}", {
      ...props,
      added: w.added.join(","),
      removed: w.removed.join(","),
    });
    return { kind: "done" } as const;
  } catch (error) {
    if (!(error instanceof LinodeApiError) || isAbort(error, signal)) throw error;
    return writeFailed(deps, state, w, error);
  }
}

/** What a failed write leads to: every write paused (429), nothing left to do (gone), or a retry later. */
function writeFailed(deps: RouteDeps, state: RouteState, w: RangeWrite, error: LinodeApiError): WriteOutcome {
  const key = targetKey(w.target);
  const now = deps.clock.monotonic();
  const props = { linodeId: w.target.linodeId, interfaceId: w.target.interfaceId, vpcId: w.target.vpcId };
  if (error.kind === "rate_limited") {
    // One 429 slows every write of the controller, not just this interface.
    const pauseMs = state.pause(now, error.retryAfterMs);
    writesCounter(deps.metrics).inc({ result: "rate_limited" });
    deps.log.warning("linode api rate limit: route writes paused for {pauseMs} ms", { ...props, pauseMs });
    return { kind: "deferred" };
  }
  if (error.kind === "not_found" && !w.added.length && state.released.has(w.target.linodeId)) {
    // The API's own 404 (a proxy's is `server`): a deleted Node's Linode, or its interface, is gone and its
    // ranges with it. Nothing is left to remove: retrying until the next listing would only cost calls.
    deps.vpcIps.recordIpRanges(w.target, w.ranges);
    state.succeeded(key);
    writesCounter(deps.metrics).inc({ result: "gone" });
    deps.log.debug(
      "linode {linodeId} of a deleted node, or its interface, is gone: nothing to remove",
      props,
    );
    return { kind: "done" };
  }
  const delayMs = state.failed(key, w.ranges, now);
  writesCounter(deps.metrics).inc({ result: "error" });
  deps.log.debug("route write on linode {linodeId} failed, retry in {delayMs} ms", { ...props, delayMs });
  return { kind: "failed", error: error.message };
}

/** Sends the writes with bounded concurrency, removals (phase 0) before additions. */
async function applyWrites(
  deps: RouteDeps,
  state: RouteState,
  writes: readonly RangeWrite[],
  options: Pass & { concurrency: number },
): Promise<Map<string, WriteOutcome>> {
  const outcomes = new Map<string, WriteOutcome>();
  for (const phase of [0, 1] as const) {
    const queue = writes.filter((w) => w.phase === phase);
    const worker = async () => {
      for (let w = queue.shift(); w; w = queue.shift()) {
        outcomes.set(targetKey(w.target), await sendWrite(deps, state, w, options));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  }
  return outcomes;
}

/** Forgets deleted Nodes' Linodes once nothing of theirs is left to remove (or they left the listing). */
function settleReleased(
  state: RouteState,
  writes: readonly RangeWrite[],
  outcomes: Map<string, WriteOutcome>,
) {
  for (const linodeId of [...state.released.keys()]) {
    const mine = writes.filter((w) => w.target.linodeId === linodeId);
    if (mine.every((w) => outcomes.get(targetKey(w.target))?.kind === "done")) {
      state.released.delete(linodeId);
    }
  }
}

/** Linodes of Nodes with pod CIDRs to route but no VPC interface in the cache, due a read of their own. */
function linodesToLearn(deps: RouteDeps, state: RouteState, nodes: readonly NodeRoutes[]): number[] {
  const now = deps.clock.monotonic();
  const ids = nodes.filter((n) => n.wanted.length > 0 && n.targets.length === 0).map((n) => n.linodeId);
  return [...new Set(ids)].filter((id) => state.needsLearning(id, now));
}

/**
 * Reads the interfaces of each Linode in `ids` (bounded concurrency) and records them in the cache. Returns
 * the Linodes whose read failed: what they have is unknown, so their Nodes are reported as pending.
 */
async function learnLinodes(deps: RouteDeps, state: RouteState, linodeIds: number[], signal: AbortSignal) {
  const unknown = new Set<number>();
  const ids = [...linodeIds];
  const worker = async () => {
    for (let id = ids.shift(); id !== undefined; id = ids.shift()) {
      try {
        const entries = await deps.vpcIps.learnLinode(id);
        state.learned(id, deps.clock.monotonic(), entries.length > 0);
      } catch (error) {
        if (!(error instanceof LinodeApiError) || isAbort(error, signal)) throw error;
        unknown.add(id);
        state.learned(id, deps.clock.monotonic(), false);
        deps.log.debug("cannot read the interfaces of linode {linodeId}: {error}", {
          linodeId: id,
          error: error.message,
        });
      }
    }
  };
  await Promise.all(Array.from({ length: WRITE_CONCURRENCY }, worker));
  return unknown;
}

/** The listing to plan from: re-read sooner than the drift period while a write failed. */
async function listing(deps: RouteDeps, state: RouteState, options: ReconcileOptions) {
  const sooner = state.hasFailedWrites() && options.retryListingAfterMs !== undefined;
  const ips = await deps.vpcIps.get(sooner ? { maxAgeMs: options.retryListingAfterMs } : undefined);
  if (ips.stale) throw new Error("Cannot reconcile routes: the last VPC address listing failed");
  return ips;
}

/** What a pass reads: the Nodes (their pass fingerprints' version), the listing and the VPCs, by generation. */
async function passInputs(deps: RouteDeps, state: RouteState, options: ReconcileOptions): Promise<string> {
  const version = state.nodes.version;
  const ips = await listing(deps, state, options);
  const vpcs = await deps.vpcs.get({ maxAgeMs: Infinity });
  return `${version}/${ips.generation}/${vpcs.generation}`;
}

/**
 * Brings every Node's VPC interface in line with its pod CIDRs. Idempotent: a pass over a cluster in place
 * makes no call. Throws (to be retried with backoff) when the listing cannot be trusted: a stale listing
 * (its last refresh failed) never leads to a write, so nothing is ever removed on doubt.
 */
export async function reconcileRoutes(
  deps: RouteDeps,
  state: RouteState,
  options: ReconcileOptions & Pass,
): Promise<PassResult> {
  const ips = await listing(deps, state, options);
  const vpcs = await deps.vpcs.get({ maxAgeMs: Infinity });
  const input = {
    nodes: routeNodes(deps.nodes.list()),
    released: new Set(state.released.keys()),
    scope: scopeOf(vpcs.data, clusterCidrs4(options.clusterCidrs)),
    memo: state.cidrs,
  };
  let planned = planRoutes({ ...input, ips: ips.data });
  const toLearn = linodesToLearn(deps, state, planned.nodes);
  const unknown = toLearn.length
    ? await learnLinodes(deps, state, toLearn, options.signal)
    : new Set<number>();
  if (toLearn.length) {
    planned = planRoutes({ ...input, ips: (await deps.vpcIps.get({ maxAgeMs: Infinity })).data });
  }
  state.cidrs.endPass();
  state.keepLearned(new Set(planned.nodes.filter((n) => n.targets.length === 0).map((n) => n.linodeId)));
  const { writes, nodes } = planned;
  const outcomes = await applyWrites(deps, state, writes, { ...options, concurrency: WRITE_CONCURRENCY });
  state.keepFailures(new Set(writes.map((w) => targetKey(w.target))));
  settleReleased(state, writes, outcomes);
  const reported = await reportNodes({ ...deps, writes: options.writes }, state, nodes, {
    writes: outcomes,
    unknown,
  });
  // Settled: nothing written (a write moves the listing's generation anyway), learnt or released, all
  // reported; a resync over the same inputs is then skipped, unless a retry below is due first.
  const settled = reported && writes.length === 0 && toLearn.length === 0 && state.released.size === 0;
  return { settled, requeueAfterMs: state.nextRetryInMs(deps.clock.monotonic()) };
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

/** Node events: a pass for each change of routes; a deleted Node's Linode is released. */
function watchNodes(deps: RouteDeps, ctx: TermContext<RouteState>): () => void {
  const state = ctx.memory;
  return deps.nodes.onChange((kind, node) => {
    const name = node.metadata?.name ?? "";
    const linodeId = parseProviderId(node.spec?.providerID);
    state.nodes.see(name, kind === "delete" ? undefined : passFingerprint(node));
    if (kind === "delete") {
      state.routeFingerprints.delete(name);
      state.recordCondition(name, undefined);
      if (linodeId !== undefined) {
        state.released.set(linodeId, name);
        state.forgetLearned(linodeId);
      }
      ctx.enqueue(ROUTES_KEY);
      return;
    }
    const fingerprint = routeFingerprint(node);
    if (state.routeFingerprints.get(name) === fingerprint) return;
    state.routeFingerprints.set(name, fingerprint);
    // A Node that is new or changed gets its Linode's interfaces read at once if the cache lacks them.
    if (linodeId !== undefined) state.forgetLearned(linodeId);
    ctx.enqueue(ROUTES_KEY);
  });
}

/** What a term starts from: every Node's fingerprints, read once. */
function termState(deps: RouteDeps): RouteState {
  const state = new RouteState();
  for (const n of deps.nodes.list()) {
    const name = n.metadata?.name ?? "";
    state.routeFingerprints.set(name, routeFingerprint(n));
    state.nodes.see(name, passFingerprint(n));
  }
  return state;
}

/**
 * The `route` controller: one whole-cluster key, passes at most every `passIntervalMs` (bursts of Node events
 * coalesce), the resync every `--route-reconciliation-period` skipped over unchanged inputs, with backoff (1 s
 * doubling to 5 min) when a pass fails; a failed pass's backoff is not cut short by the resync.
 */
export function routeController(
  deps: RouteDeps,
  options: RouteControllerOptions,
): ControllerSpec<RouteState> {
  let state: RouteState | undefined;
  return {
    name: "route",
    workers: 1,
    minIntervalMs: () => passIntervalMs(state?.routeFingerprints.size ?? 0),
    memory: () => state = termState(deps),
    sources: (ctx) => [watchNodes(deps, ctx)],
    initialKeys: () => [ROUTES_KEY],
    resync: { periodMs: options.resyncMs ?? DEFAULT_RESYNC_MS, keys: () => [ROUTES_KEY], keepBackoff: true },
    inputs: (_key, ctx) => passInputs(deps, ctx.memory, options),
    reconcile: (_key, ctx) =>
      reconcileRoutes(deps, ctx.memory, { ...options, signal: ctx.signal, writes: ctx }),
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
