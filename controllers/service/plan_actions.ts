/**
 * How the service controller names its writes in the plan (`controllers/loop/plan.ts`): the finalizer, a
 * NodeBalancer created, adopted or updated (each field old and new, config and node changes included), its
 * firewall, the status. Object: the Service (`default/web`); target: the NodeBalancer. Pure.
 */
import type { UpdateFirewallRules } from "@linode/api-v4";
import type { V1LoadBalancerIngress, V1Service } from "@kubernetes/client-node";
import type { FirewallState } from "../../cache/types.ts";
import { objectKey } from "../../kube/keys.ts";
import type { ActionSpec, PlanChange, Write } from "../loop/shadow.ts";
import type { DesiredNodeBalancer } from "./nodebalancer/desired.ts";
import type { DesiredFirewall } from "./firewall/rules.ts";
import type { FieldChange } from "./nodebalancer/diff_types.ts";
import { sameFirewallRules } from "./firewall/compare.ts";

/** The plan's name for a NodeBalancer written for a Service. */
export function nodeBalancerTarget(id: number): string {
  return `nodebalancer ${id}`;
}

/** The NodeBalancer id in a target made by `nodeBalancerTarget`. */
export function nodeBalancerIdOf(target: string | undefined): number | undefined {
  const m = /^nodebalancer (\d+)$/.exec(target ?? "");
  return m ? Number(m[1]) : undefined;
}

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

function showFirewall(firewall: DesiredFirewall): string[] {
  if (firewall.kind === "id") return [`firewall ${firewall.firewallId}`];
  return firewall.kind === "acl" ? [`new firewall ${firewall.label}`] : [];
}

/** Creating the Service's NodeBalancer: every field it is created with. */
export function createAction(svc: V1Service, desired: DesiredNodeBalancer): ActionSpec {
  const changes: PlanChange[] = [
    { field: "label", old: null, new: desired.label },
    { field: "type", old: null, new: desired.type },
    { field: "client_conn_throttle", old: null, new: desired.client_conn_throttle },
    { field: "tags", old: null, new: [...desired.tags].sort() },
  ];
  for (const c of desired.configs) {
    const field = `configs[${c.port}/${c.family}]`;
    changes.push({ field, old: null, new: c.protocol });
    changes.push({ field: `${field}.nodes`, old: null, new: c.nodes.map((n) => n.address).sort() });
  }
  const firewall = showFirewall(desired.firewall);
  if (firewall.length) changes.push({ field: "firewalls", old: null, new: firewall });
  return { action: "create-nodebalancer", object: objectKey(svc), changes };
}

/** How an existing NodeBalancer is brought in line. */
export type UpdateKind = "adopt-nodebalancer" | "update-backends" | "update-nodebalancer";

/** Updating (or adopting) the Service's NodeBalancer `nbId`. */
export function updateAction(
  svc: V1Service,
  nbId: number,
  update: { kind: UpdateKind; changes: readonly (FieldChange | PlanChange)[] },
): ActionSpec {
  return {
    action: update.kind,
    object: objectKey(svc),
    target: nodeBalancerTarget(nbId),
    changes: update.changes,
  };
}

function rulesSummary(rules: UpdateFirewallRules | FirewallState["rules"]): string {
  const r = rules as { inbound?: unknown[]; outbound?: unknown[]; inbound_policy?: string };
  return `inbound ${r.inbound_policy ?? "?"}: ${r.inbound?.length ?? 0} rules, outbound: ${
    r.outbound?.length ?? 0
  } rules`;
}

/**
 * What `reconcileFirewall` would change on NodeBalancer `nbId` given its attached firewalls: the same
 * decisions, as field changes (empty when it would make no call).
 */
export function firewallChanges(
  attached: readonly FirewallState[],
  firewall: DesiredFirewall,
  ownershipTag: string,
): PlanChange[] {
  const ids = attached.map((f) => `firewall ${f.id}`);
  if (firewall.kind === "id") {
    const only = attached.length === 1 && attached[0]?.id === firewall.firewallId;
    return only ? [] : [{ field: "firewalls", old: ids, new: [`firewall ${firewall.firewallId}`] }];
  }
  // No firewall annotation: every attached firewall comes off, as the Go CCM does (see firewall/reconcile.ts).
  if (firewall.kind === "none") return ids.length === 0 ? [] : [{ field: "firewalls", old: ids, new: [] }];
  const [fw] = attached;
  if (!fw || attached.length > 1) {
    return [{ field: "firewalls", old: ids, new: [`new firewall ${firewall.label}`] }];
  }
  const changes: PlanChange[] = [];
  const field = `firewalls[${fw.id}]`;
  if (!sameFirewallRules(fw.rules, firewall.rules)) {
    changes.push({ field: `${field}.rules`, old: rulesSummary(fw.rules), new: rulesSummary(firewall.rules) });
  }
  if (!fw.tags.includes(ownershipTag)) {
    changes.push({ field: `${field}.tags`, old: [...fw.tags], new: [...fw.tags, ownershipTag] });
  }
  return changes;
}

/** Deleting (or, with `preserve`, untagging) NodeBalancer `nbId`, replaced or no longer wanted. */
export function releaseAction(
  svc: V1Service,
  nbId: number,
  release: { preserve: boolean; changes?: readonly PlanChange[] },
): ActionSpec {
  return {
    action: release.preserve ? "untag-nodebalancer" : "delete-nodebalancer",
    object: objectKey(svc),
    target: nodeBalancerTarget(nbId),
    changes: release.changes ?? [],
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
