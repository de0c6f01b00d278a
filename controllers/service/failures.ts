/**
 * The Warning Events of a failed Service sync, under upstream's service controller reasons (the Go CCM runs
 * it, and operators alert on its names): `DeleteLoadBalancerFailed` while the Service is going,
 * `SyncLoadBalancerFailed` otherwise, `UnAvailableLoadBalancer` beside it when no Node can back it, and
 * `UpdateLoadBalancerFailed` beside it when the sync only moved backends (upstream's failed host update).
 */
import type { V1Service } from "@kubernetes/client-node";
import { type EventSink, refFor, warnEvent } from "../../kube/events.ts";
import type { Logger } from "../../common/log.ts";
import { ServicePlanError } from "./annotations/spec.ts";
import { InvalidServiceError } from "./planner.ts";
import { needsCleanup } from "./sync.ts";

/** What reporting a failure needs. */
export interface FailureDeps {
  services: { get(key: string): V1Service | undefined };
  events: EventSink;
  log: Logger;
}

/** Errors thrown by a backends-only update, with the Nodes it was to put behind the NodeBalancer. */
const hostUpdates = new WeakMap<object, readonly string[]>();

/** How many Node names an `UpdateLoadBalancerFailed` message lists (upstream limits them too). */
const HOSTS_LISTED = 10;

/** Marks `error` as thrown while only the backends (`hosts`, Node names) were updated; returns it. */
export function markHostsUpdate(error: unknown, hosts: readonly string[]): unknown {
  if (typeof error === "object" && error !== null) hostUpdates.set(error, hosts);
  return error;
}

function hostsText(hosts: readonly string[]): string {
  const listed = hosts.slice(0, HOSTS_LISTED).join(", ");
  return hosts.length > HOSTS_LISTED ? `[${listed}, … ${hosts.length} in all]` : `[${listed}]`;
}

/** True when the planner found no Node to put behind the NodeBalancer. */
function hasNoNodes(error: unknown): boolean {
  return error instanceof InvalidServiceError &&
    error.errors.some((e) => e instanceof ServicePlanError && e.problem === "NoEligibleNodes");
}

/** Upstream's Warnings, by the names operators alert on: a failed deletion, a failed sync, no Nodes. */
export function reportFailure(deps: FailureDeps, key: string, error: unknown): void {
  const svc = deps.services.get(key);
  if (!svc) return;
  const message = error instanceof Error ? error.message : String(error);
  const ref = refFor(svc, "Service");
  if (hasNoNodes(error)) {
    const text = "There are no available nodes for LoadBalancer";
    warnEvent(deps, { ref, reason: "UnAvailableLoadBalancer", message: text, props: { service: key } });
  }
  const hosts = typeof error === "object" && error !== null ? hostUpdates.get(error) : undefined;
  if (hosts !== undefined) {
    warnEvent(deps, {
      ref,
      reason: "UpdateLoadBalancerFailed",
      message: "Error updating load balancer with new hosts {hosts}, error: {error}",
      props: { service: key, hosts: hostsText(hosts), error: message },
    });
  }
  const deleting = needsCleanup(svc);
  warnEvent(deps, {
    ref,
    reason: deleting ? "DeleteLoadBalancerFailed" : "SyncLoadBalancerFailed",
    message: deleting ? "Error deleting load balancer: {error}" : "Error syncing load balancer: {error}",
    props: { service: key, error: message },
  });
}
