/** The Node condition `NetworkUnavailable` as the upstream route controller writes it. Pure. */
import type { V1Node } from "@kubernetes/client-node";
import { share } from "../../common/shared_strings.ts";

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
