/**
 * What syncing one Service needs, and what every step shares: the finalizer, which Services are ours,
 * Events with their log line, and warnings said once per change (never once per resync).
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type { NodeBalancerCache } from "../../cache/nodebalancers.ts";
import type { Logger } from "../../common/log.ts";
import { type EventSink, normalEvent, refFor, warnEvent } from "../../kube/events.ts";
import { objectKey } from "../../kube/keys.ts";
import type { ApplyDeps } from "./nodebalancer/writes.ts";
import type { FirewallDeps } from "./firewall/reconcile.ts";
import { type OwnershipContext, ownershipTag, uidPrefixOf } from "./ownership.ts";
import type { PlannerDeps } from "./planner.ts";
import type { ServiceWrites } from "./plan_actions.ts";
import type { WriteContext } from "../loop/runtime.ts";

/** The finalizer that keeps a Service until its NodeBalancer is gone (upstream's name). */
export const LB_FINALIZER = "service.kubernetes.io/load-balancer-cleanup";

/** What syncing one Service needs. */
export interface SyncDeps extends PlannerDeps {
  nodeBalancers: ApplyDeps["nodeBalancers"];
  firewalls: FirewallDeps["firewalls"];
  cache: Pick<NodeBalancerCache, "list" | "peek" | "record" | "forget" | "details">;
  nodes: { list(): readonly V1Node[] };
  /** Every Service, to tell a NodeBalancer of a live Service from one left behind. */
  services: { list(): readonly V1Service[] };
  writer: ServiceWrites;
  events: EventSink;
  log: Logger;
  /** Warnings already said, so each is said once per change. */
  notices: Notices;
}

/** Per-sync settings. */
export interface SyncContext {
  /** Listing age that counts as fresh, asked when needed: the age of this leadership term (see `nodebalancer/find.ts`). */
  maxAgeMs(): number;
  /** This sync's executors: every write goes through them (`--dry-run` holds them). */
  writes: WriteContext;
}

/** True for a Service this controller provides a load balancer for (no other `loadBalancerClass`). */
export function wantsLoadBalancer(svc: V1Service): boolean {
  return svc.spec?.type === "LoadBalancer" && !svc.spec.loadBalancerClass;
}

/** True when the Service holds our finalizer. */
export function hasFinalizer(svc: V1Service): boolean {
  return svc.metadata?.finalizers?.includes(LB_FINALIZER) ?? false;
}

/** True when the Service holds our finalizer and is going, or no longer wants a load balancer. */
export function needsCleanup(svc: V1Service): boolean {
  return hasFinalizer(svc) && (svc.metadata?.deletionTimestamp !== undefined || !wantsLoadBalancer(svc));
}

/** The tag that marks the Service's NodeBalancer and managed firewall as its own. */
export function ownershipTagOf(deps: Pick<SyncDeps, "defaults">, svc: V1Service): string {
  return ownershipTag(deps.defaults.clusterName, svc.metadata?.uid ?? "");
}

/** What judging a NodeBalancer's owner needs for `svc`; throws while the cluster identity is unknown. */
export async function ownerContextOf(
  deps: Pick<SyncDeps, "defaults" | "identity" | "services">,
  svc: V1Service,
): Promise<OwnershipContext> {
  const clusterIdTag = await deps.identity.tag();
  return {
    clusterName: deps.defaults.clusterName,
    clusterIdTag,
    serviceUid: svc.metadata?.uid ?? "",
    isLiveService: (prefix) =>
      deps.services.list().some((s) => uidPrefixOf(s.metadata?.uid ?? "") === prefix),
  };
}

/** A Normal Event on the Service and its `info` log line. */
export function note(deps: SyncDeps, svc: V1Service, reason: string, message: string, props = {}): void {
  const out = { log: deps.log, events: deps.events };
  normalEvent(out, {
    ref: refFor(svc, "Service"),
    reason,
    message,
    props: { service: objectKey(svc), ...props },
  });
}

/** A Warning Event on the Service, only when `text` differs from what was last said under `reason`. */
export function warnOnce(deps: SyncDeps, svc: V1Service, reason: string, text: string): void {
  if (!deps.notices.changed(objectKey(svc), reason, text)) return;
  if (text === "") return;
  const out = { log: deps.log, events: deps.events };
  warnEvent(out, {
    ref: refFor(svc, "Service"),
    reason,
    message: "{text}",
    props: { service: objectKey(svc), text },
  });
}

/** What was last said per Service and reason. */
export class Notices {
  readonly #said = new Map<string, string>();

  /** Records `text` for the Service and reason; true when it differs from the last one. */
  changed(serviceKey: string, reason: string, text: string): boolean {
    const key = `${serviceKey}\u0000${reason}`;
    if ((this.#said.get(key) ?? "") === text) return false;
    if (text === "") this.#said.delete(key);
    else this.#said.set(key, text);
    return true;
  }

  /** Forgets a Service. */
  forget(serviceKey: string): void {
    for (const key of [...this.#said.keys()]) {
      if (key.startsWith(`${serviceKey}\u0000`)) this.#said.delete(key);
    }
  }
}
