/**
 * How the service controller names its writes in the plan (`controllers/loop/plan.ts`): the finalizer, a
 * NodeBalancer created, adopted or updated (each field old and new, config and node changes included), its
 * firewall, the status. Object: the Service (`default/web`); target: the NodeBalancer. Pure.
 */
import type { V1LoadBalancerIngress, V1Service } from "@kubernetes/client-node";
import { objectKey } from "../../kube/keys.ts";
import type { ActionSpec, Write } from "../loop/shadow.ts";

/** Adding (or dropping) the cleanup finalizer. */
export function finalizerAction(svc: V1Service, finalizers: readonly string[]): ActionSpec {
  const old = svc.metadata?.finalizers ?? [];
  return {
    action: finalizers.length > old.length ? "add-finalizer" : "remove-finalizer",
    object: objectKey(svc),
    changes: [{ field: "metadata.finalizers", old: [...old], new: [...finalizers] }],
  };
}

function showIngress(ingress: readonly V1LoadBalancerIngress[]): string[] {
  return ingress.map((i) => [i.ip, i.hostname].filter(Boolean).join(" "));
}

/** Writing `status.loadBalancer.ingress`. */
export function statusAction(svc: V1Service, ingress: readonly V1LoadBalancerIngress[]): ActionSpec {
  const old = showIngress(svc.status?.loadBalancer?.ingress ?? []);
  return {
    action: ingress.length ? "set-status" : "clear-status",
    object: objectKey(svc),
    changes: [{ field: "status.loadBalancer.ingress", old, new: showIngress(ingress) }],
  };
}

/** The Service writes: both to the status subresource. `kubeServiceWriter` implements it. */
export interface ServiceWrites {
  /** Replaces the finalizers; a Service changed since `svc` was read answers 409. */
  setFinalizers(svc: V1Service, finalizers: readonly string[]): Promise<V1Service>;
  /** Replaces `status.loadBalancer.ingress`; answers the Service as written. */
  patchIngress(svc: V1Service, ingress: readonly V1LoadBalancerIngress[]): Promise<V1Service>;
}

/** Setting the Service's finalizers (adding or dropping the cleanup finalizer). */
export function finalizerWrite(
  deps: { writer: ServiceWrites },
  svc: V1Service,
  finalizers: readonly string[],
): Write<V1Service> {
  return {
    api: "kubernetes",
    action: finalizerAction(svc, finalizers),
    send: () => deps.writer.setFinalizers(svc, finalizers),
  };
}

/** Setting (or clearing) the Service's `status.loadBalancer.ingress`. */
export function statusWrite(
  deps: { writer: ServiceWrites },
  svc: V1Service,
  ingress: readonly V1LoadBalancerIngress[],
): Write<V1Service> {
  return {
    api: "kubernetes",
    action: statusAction(svc, ingress),
    send: () => deps.writer.patchIngress(svc, ingress),
  };
}
