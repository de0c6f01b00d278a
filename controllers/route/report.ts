/**
 * What the Nodes see of a route pass: the `NetworkUnavailable` condition, a Warning Event
 * `FailedToCreateRoute` with the API's reason on a failed write, and one-time reports for what no retry
 * can fix (no VPC interface, a pod CIDR outside `--cluster-cidr`) or that needs nothing (IPv6).
 */
import type { V1Node } from "@kubernetes/client-node";
import type { Clock } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import { type EventSink, refFor, warnEvent } from "../../kube/events.ts";
import { LeaseLostError } from "../../common/write_guard.ts";
import { describeError, type WriteContext } from "../loop/runtime.ts";
import { share } from "../../common/shared_strings.ts";
import { type NodeRoutes, targetKey } from "./plan.ts";
import type { RouteState } from "./state.ts";

/** The condition type. */
export const NETWORK_UNAVAILABLE = "NetworkUnavailable";
/** Reason once the Node's routes are in place (upstream's). */
export const ROUTE_CREATED = "RouteCreated";
/** Reason while they are not (upstream's). */
export const NO_ROUTE_CREATED = "NoRouteCreated";

/** The condition's `status/reason` on a Node, e.g. `False/RouteCreated`; undefined when absent. */
export function routeConditionOf(node: V1Node): string | undefined {
  const c = node.status?.conditions?.find((c) => c.type === NETWORK_UNAVAILABLE);
  // One shared copy per value: the controller keeps it per Node (in its pass fingerprint).
  return c ? share(`${c.status}/${c.reason ?? ""}`) : undefined;
}

const ROUTED = `False/${ROUTE_CREATED}`;
const NOT_ROUTED = `True/${NO_ROUTE_CREATED}`;

/** The `status/reason` this controller writes for a Node whose routes are (or are not) in place. */
export function wantedRouteCondition(routed: boolean): string {
  return routed ? ROUTED : NOT_ROUTED;
}

/**
 * True when the condition must be written. As upstream: a `False` written by anyone (a CNI reports its
 * own reason) already says the network is available, so it is left alone once the routes are in place.
 */
export function needsRouteCondition(node: V1Node, routed: boolean): boolean {
  const current = routeConditionOf(node);
  if (routed) return !current?.startsWith("False/");
  return current !== wantedRouteCondition(false);
}

/** The condition as sent in a status patch: times are RFC 3339 text on the wire. */
export interface RouteConditionPatch {
  readonly type: typeof NETWORK_UNAVAILABLE;
  readonly status: "True" | "False";
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly lastHeartbeatTime: string;
}

/** The condition to write, both times set to now (upstream sets both on every change). */
export function routeCondition(routed: boolean, now: Date): RouteConditionPatch {
  const time = now.toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    type: NETWORK_UNAVAILABLE,
    status: routed ? "False" : "True",
    reason: routed ? ROUTE_CREATED : NO_ROUTE_CREATED,
    message: routed ? "RouteController created a route" : "RouteController failed to create a route",
    lastTransitionTime: time,
    lastHeartbeatTime: time,
  };
}

/** How one interface's write went in this pass. */
export type WriteOutcome =
  | { readonly kind: "done" }
  /** Decided but not sent (`--dry-run`): reported as if done, never settled as done. */
  | { readonly kind: "held" }
  | { readonly kind: "failed"; readonly error: string }
  /** Not sent: backing off from an earlier failure, or paused after a 429. */
  | { readonly kind: "deferred" };

/** Where a Node's routes stand after a pass. */
export type NodeOutcome =
  | { readonly kind: "routed" }
  | { readonly kind: "pending" }
  | { readonly kind: "failed"; readonly error: string }
  | { readonly kind: "no-interface" }
  | { readonly kind: "unroutable"; readonly cidrs: readonly string[] };

/** Writes the condition to the Node's status (a strategic merge patch, so other conditions stay). */
export interface NodeConditionWriter {
  patchRouteCondition(name: string, condition: RouteConditionPatch): Promise<unknown>;
}

/** What reporting needs. */
export interface ReportDeps {
  nodes: { get(name: string): V1Node | undefined };
  conditions: NodeConditionWriter;
  events: EventSink;
  log: Logger;
  clock: Clock;
  /** This pass's executors (`--dry-run` holds the condition write). */
  writes: WriteContext;
}

/** Where a Node's routes stand, from its plan and the outcomes of this pass's writes. Pure. */
export function nodeOutcome(n: NodeRoutes, writes: ReadonlyMap<string, WriteOutcome>): NodeOutcome {
  if (n.wanted.length === 0) {
    const unroutable = [...n.outside, ...n.invalid];
    return unroutable.length > 0 ? { kind: "unroutable", cidrs: unroutable } : { kind: "routed" };
  }
  if (n.targets.length === 0) return { kind: "no-interface" };
  let pending = false;
  for (const t of n.targets) {
    const w = writes.get(targetKey(t));
    if (w?.kind === "failed") return { kind: "failed", error: w.error };
    if (w?.kind === "deferred") pending = true;
  }
  return pending ? { kind: "pending" } : { kind: "routed" };
}

function warn(deps: ReportDeps, node: V1Node, message: string, props: Record<string, unknown>): void {
  warnEvent(deps, { ref: refFor(node, "Node"), reason: "FailedToCreateRoute", message, props });
}

function reportOutcome(
  deps: ReportDeps,
  state: RouteState,
  n: NodeRoutes,
  node: V1Node,
  o: NodeOutcome,
): void {
  const props = { node: n.node, cidrs: n.wanted.join(","), linodeId: n.linodeId };
  const once = `once:${n.node}:`;
  if (o.kind === "routed") state.forgetReports(once);
  else if (o.kind === "failed") {
    warn(deps, node, "Could not create route {cidrs} for node {node}: {error}", { ...props, error: o.error });
  } else if (o.kind === "no-interface" && state.firstReport(`${once}no-interface`)) {
    const message = "Could not create route {cidrs} for node {node}: linode {linodeId} has no interface " +
      "in a configured VPC subnet";
    warn(deps, node, message, props);
  } else if (o.kind === "unroutable" && state.firstReport(`${once}unroutable:${o.cidrs.join(",")}`)) {
    const message = "Could not create route {cidrs} for node {node}: not an IPv4 CIDR inside --cluster-cidr";
    warn(deps, node, message, { ...props, cidrs: o.cidrs.join(",") });
  }
}

/** Writes the condition when it differs; true when nothing is left to write (written, or none needed). */
async function writeCondition(
  deps: ReportDeps,
  state: RouteState,
  node: V1Node,
  routed: boolean,
): Promise<boolean> {
  const name = node.metadata?.name ?? "";
  const wanted = wantedRouteCondition(routed);
  const rv = node.metadata?.resourceVersion ?? "";
  // The informer may not show our last patch yet: the same wish on the same Node version was already written.
  if (!needsRouteCondition(node, routed) || state.writtenCondition(name) === `${rv} ${wanted}`) return true;
  const field = `status.conditions[${NETWORK_UNAVAILABLE}]`;
  const change = { field, old: routeConditionOf(node) ?? null, new: wanted };
  try {
    const applied = await deps.writes.apply({
      api: "kubernetes",
      action: { action: "set-condition", object: name, changes: [change] },
      send: () =>
        deps.conditions.patchRouteCondition(name, routeCondition(routed, new Date(deps.clock.now()))),
      // The informer may lag: the same wish on the same Node version is not written twice.
      record: () => state.recordCondition(name, `${rv} ${wanted}`),
    });
    if (!applied.sent) return false;
    deps.log.info("node {node}: NetworkUnavailable is now {condition}", { node: name, condition: wanted });
    return true;
  } catch (error) {
    if (error instanceof LeaseLostError) throw error;
    // The next pass (resync) tries again; the routes themselves are unaffected.
    deps.log.warning("cannot set NetworkUnavailable on node {node}: {error}", {
      node: name,
      error: describeError(error),
    });
    return false;
  }
}

function isReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
}

/** What a pass learned: each interface write's outcome, and the Linodes whose interfaces could not be read. */
export interface PassOutcomes {
  readonly writes: ReadonlyMap<string, WriteOutcome>;
  readonly unknown?: ReadonlySet<number>;
}

/**
 * Reports every planned Node's outcome: Events and log lines, then the condition where it changed. Resolves
 * to true when every Node is settled: nothing deferred or failed, its report made and its condition written
 * or already right.
 */
export async function reportNodes(
  deps: ReportDeps,
  state: RouteState,
  nodes: readonly NodeRoutes[],
  outcomes: PassOutcomes,
): Promise<boolean> {
  const { writes, unknown } = outcomes;
  let settled = true;
  for (const n of nodes) {
    const node = deps.nodes.get(n.node);
    if (!node) {
      settled = false;
      continue;
    }
    if (n.ipv6.length > 0 && state.firstReport(`ipv6:${n.node}:${n.ipv6.join(",")}`)) {
      deps.log.info("node {node}: IPv6 pod CIDRs {cidrs} need no VPC route, skipped", {
        node: n.node,
        cidrs: n.ipv6.join(","),
      });
    }
    let outcome = nodeOutcome(n, writes);
    // A NotReady Node whose Linode left the listing is most likely a deleted Linode: the lifecycle
    // controller's business, not a missing VPC interface worth a Warning.
    if (outcome.kind === "no-interface" && !isReady(node)) outcome = { kind: "pending" };
    // Its own interfaces could not be read: whether it has one in the VPC is unknown, not worth a Warning.
    if (outcome.kind === "no-interface" && unknown?.has(n.linodeId)) outcome = { kind: "pending" };
    reportOutcome(deps, state, n, node, outcome);
    if (outcome.kind === "pending") {
      settled = false;
      continue;
    }
    // A failed write is retried (its backoff schedules the pass); a missing interface is read again on its
    // own schedule (also in the state's next retry), so once reported it is as settled as a pass can make it.
    const written = await writeCondition(deps, state, node, outcome.kind === "routed");
    if (!written || outcome.kind === "failed") settled = false;
  }
  return settled;
}
