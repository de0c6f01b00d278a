/**
 * Creating or updating a Service's NodeBalancer, as the upstream service controller and the Go CCM's
 * `EnsureLoadBalancer` do it together: the finalizer before anything is created; find (never a second
 * NodeBalancer), create, or adopt and update in place; firewalls; the `nodebalancer-id` switch; the status,
 * written only when it changes.
 */
import type { V1Service } from "@kubernetes/client-node";
import type { NodeBalancerSummary } from "../../cache/types.ts";
import { objectKey } from "../../kube/keys.ts";
import { isNotFound, LinodeApiError } from "../../linode/errors.ts";
import {
  applyActions,
  createAction,
  createNodeBalancer,
  type FieldChange,
  type NodeBalancerAction,
  nodeBalancerTarget,
  releaseAction,
  updateAction,
} from "./nodebalancer/writes.ts";
import { type CurrentNodeBalancer, diffNodeBalancer, formatChanges } from "./nodebalancer/diff.ts";
import { findByStatus, findNodeBalancer, type FoundNodeBalancer } from "./nodebalancer/find.ts";
import {
  firewallChanges,
  firewallForCreate,
  reconcileFirewall,
  releaseManaged,
} from "./firewall/reconcile.ts";
import { type PlannedService, planService } from "./planner.ts";
import { backendFamilyOf } from "./nodebalancer/plan.ts";
import { markHostsUpdate } from "./failures.ts";
import { ownershipOf } from "./ownership.ts";
import { hasIngress, ingressFor } from "./status.ts";
import { finalizerWrite, statusWrite } from "./plan_actions.ts";
import {
  hasFinalizer,
  LB_FINALIZER,
  note,
  ownerContextOf,
  ownershipTagOf,
  type SyncContext,
  type SyncDeps,
  warnOnce,
} from "./sync.ts";

/** The Warning for values read leniently: the Service syncs on, with the value named (see annotations/table.ts). */
export const LENIENT_REASON = "InvalidAnnotationValue";

const NODE_ACTIONS = new Set<NodeBalancerAction["kind"]>(["createNode", "updateNode", "deleteNode"]);

async function ensureFinalizer(deps: SyncDeps, svc: V1Service, ctx: SyncContext): Promise<V1Service> {
  if (hasFinalizer(svc)) return svc;
  const finalizers = [...(svc.metadata?.finalizers ?? []), LB_FINALIZER];
  const applied = await ctx.writes.apply(finalizerWrite(deps, svc, finalizers));
  return applied.sent ? applied.answer : svc;
}

function reportWarnings(deps: SyncDeps, svc: V1Service, plan: PlannedService): void {
  const warnings = plan.warnings.map((w) => `${w.key}: ${w.message}`).join("; ");
  warnOnce(deps, svc, "AnnotationWarning", warnings);
  const lenient = plan.lenient.map((l) => l.message).join("; ");
  warnOnce(
    deps,
    svc,
    LENIENT_REASON,
    lenient && `Invalid annotation read as the Go CCM reads it: ${lenient}`,
  );
  const skipped = plan.skippedNodes.map((s) => `${s.nodeName} (${s.reason})`).join(", ");
  warnOnce(deps, svc, "BackendNodesSkipped", skipped && `Nodes left out of the NodeBalancer: ${skipped}`);
  const unreadable = plan.unreadableCertificates.join(", ");
  warnOnce(
    deps,
    svc,
    "InvalidTLSSecret",
    unreadable &&
      `No readable PEM certificate in tls.crt of Secret ${unreadable}: a NodeBalancer keeps its current one`,
  );
}

/**
 * What differs but cannot change in place: the reserved IPv4 under the Go CCM's reason (operators alert on
 * `NodeBalancerIPChangeIgnored`), the rest (type, frontend subnet) together.
 */
function reportImmutable(deps: SyncDeps, svc: V1Service, nbId: number, immutable: readonly FieldChange[]) {
  const ipv4 = immutable.find((c) => c.field === "ipv4");
  const rest = immutable.filter((c) => c !== ipv4);
  const ipText = ipv4
    ? `reserved-ipv4 is ${ipv4.new}, but NodeBalancer ${nbId} keeps ${ipv4.old}: the API cannot change its IPv4 after creation`
    : "";
  warnOnce(deps, svc, "NodeBalancerIPChangeIgnored", ipText);
  const restText = rest.length
    ? `NodeBalancer ${nbId} keeps ${formatChanges(rest)}: the API cannot change these in place`
    : "";
  warnOnce(deps, svc, "LoadBalancerFieldImmutable", restText);
}

/** Creates the Service's NodeBalancer; undefined when the creation is held (dry run). */
async function createFor(
  deps: SyncDeps,
  svc: V1Service,
  plan: PlannedService,
  ctx: SyncContext,
): Promise<NodeBalancerSummary | undefined> {
  const applied = await ctx.writes.apply({
    api: "linode",
    action: createAction(svc, plan.desired),
    send: async () => {
      note(deps, svc, "EnsuringLoadBalancer", "Ensuring load balancer");
      const fw = await firewallForCreate(deps, plan.desired.firewall);
      try {
        return await createNodeBalancer(deps, plan, fw.firewallId);
      } catch (e) {
        // A firewall made for a NodeBalancer that was not created protects nothing.
        if (fw.created) await deps.firewalls.delete(fw.created.id).catch(() => {});
        throw e;
      }
    },
  });
  if (!applied.sent) return undefined;
  note(deps, svc, "EnsuredLoadBalancer", "Ensured load balancer: created NodeBalancer {nodeBalancerId}", {
    nodeBalancerId: applied.answer.id,
  });
  return applied.answer;
}

/** The Nodes behind the planned NodeBalancer, by name. */
function hostsOf(plan: PlannedService): string[] {
  return [...new Set(plan.desired.configs.flatMap((c) => c.nodes.map((n) => n.nodeName)))].sort();
}

async function currentOf(deps: SyncDeps, nb: NodeBalancerSummary): Promise<CurrentNodeBalancer> {
  const configs = await deps.cache.details.configs(nb.id);
  return {
    nodeBalancer: { ...nb, client_conn_throttle: nb.client_conn_throttle ?? 0 },
    configs,
    nodes: new Map(configs.map((c) => [c.id, [...c.nodes]])),
  };
}

/** True when a 404 says the NodeBalancer itself is gone (not one of its configs or nodes). */
function isNodeBalancerGone(e: unknown): boolean {
  return isNotFound(e) && e instanceof LinodeApiError &&
    (e.route === "/nodebalancers/{id}" || e.route === "/nodebalancers/{id}/configs");
}

async function updateFound(
  deps: SyncDeps,
  svc: V1Service,
  found: FoundNodeBalancer,
  planned: { plan: PlannedService; ctx: SyncContext },
): Promise<NodeBalancerSummary> {
  try {
    return await updateInPlace(deps, svc, found, planned);
  } catch (e) {
    // Deleted behind our back: the listing no longer holds it, so the retry finds (or makes) the right one.
    if (isNodeBalancerGone(e)) deps.cache.forget(found.nb.id);
    throw e;
  }
}

async function updateInPlace(
  deps: SyncDeps,
  svc: V1Service,
  found: FoundNodeBalancer,
  planned: { plan: PlannedService; ctx: SyncContext },
): Promise<NodeBalancerSummary> {
  const { plan, ctx } = planned;
  const nbId = found.nb.id;
  // Created by this CCM from the same plan and not changed since (within the drift period): nothing to read.
  if (found.via !== "status-ip" && found.via !== "status-hostname") {
    if (deps.cache.details.isAsCreated(nbId, plan.fingerprint)) return found.nb;
  }
  const tag = ownershipTagOf(deps, svc);
  const { actions, changes, immutable } = diffNodeBalancer(await currentOf(deps, found.nb), plan.desired);
  const adopting = found.via === "status-ip" || found.via === "status-hostname";
  const nodesOnly = !adopting && actions.every((a) => NODE_ACTIONS.has(a.kind));
  reportImmutable(deps, svc, nbId, immutable);
  const fwChanges = firewallChanges(await deps.cache.details.firewalls(nbId), plan.desired.firewall, tag);
  let fwDone: string[] = [];
  if (actions.length || fwChanges.length) {
    const kind = adopting
      ? "adopt-nodebalancer"
      : nodesOnly && !fwChanges.length
      ? "update-backends"
      : "update-nodebalancer";
    const update = { kind, changes: [...changes, ...fwChanges] } as const;
    const applied = await ctx.writes.apply({
      api: "linode",
      action: updateAction(svc, nbId, update),
      send: async () => {
        if (actions.length && !nodesOnly) note(deps, svc, "EnsuringLoadBalancer", "Ensuring load balancer");
        await applyActions(deps, nbId, actions).catch((err) => {
          throw nodesOnly ? markHostsUpdate(err, hostsOf(plan)) : err;
        });
        return await reconcileFirewall(deps, nbId, plan.desired.firewall, tag);
      },
    });
    if (!applied.sent) return found.nb;
    fwDone = applied.answer;
  }
  if (adopting) {
    const message = "Adopted NodeBalancer {nodeBalancerId} found by its {via}: same id, address and node ids";
    note(deps, svc, "AdoptedLoadBalancer", message, {
      nodeBalancerId: nbId,
      via: found.via.replace("-", " "),
    });
  }
  const props = { nodeBalancerId: nbId, changes: formatChanges(changes) || "no setting changed" };
  if (actions.length && nodesOnly && !fwDone.length) {
    note(deps, svc, "UpdatedLoadBalancer", "Updated load balancer with new hosts: {changes}", props);
  } else if (actions.length || fwDone.length) {
    const done = [props.changes, ...fwDone].join("; ");
    note(deps, svc, "EnsuredLoadBalancer", "Ensured load balancer: NodeBalancer {nodeBalancerId}: {done}", {
      ...props,
      done,
    });
  } else {deps.log.debug("{service}: NodeBalancer {nodeBalancerId} unchanged", {
      service: objectKey(svc),
      nodeBalancerId: nbId,
    });}
  return deps.cache.peek(nbId) ?? found.nb;
}

/**
 * After `nodebalancer-id` moved the Service to another NodeBalancer: the one its status still names is
 * deleted as the Go CCM does, but only when it carries our ownership tag (never one no rule ties to the
 * Service); with `preserve` it is kept and no longer tagged as this Service's.
 */
async function releaseSwitchedFrom(
  deps: SyncDeps,
  svc: V1Service,
  nb: NodeBalancerSummary,
  planned: { plan: PlannedService; ctx: SyncContext },
) {
  const { plan, ctx } = planned;
  if (plan.spec.nodeBalancerId === null) return;
  const tag = ownershipTagOf(deps, svc);
  const old = findByStatus(svc, (await deps.cache.list({ maxAgeMs: Infinity })).data)?.nb;
  if (!old || old.id === nb.id || !old.tags.includes(tag)) return;
  if (ownershipOf(old.tags, await ownerContextOf(deps, svc)).kind !== "this-service") return;
  const preserve = plan.spec.preserve;
  const changes = [{ field: "replaced by", old: null, new: nodeBalancerTarget(nb.id) }];
  const props = { old: old.id, nodeBalancerId: nb.id };
  const applied = await ctx.writes.apply({
    api: "linode",
    action: releaseAction(svc, old.id, { preserve, changes }),
    send: async () => {
      if (preserve) {
        deps.cache.record(
          await deps.nodeBalancers.update(old.id, { tags: old.tags.filter((t) => t !== tag) }),
        );
        return;
      }
      note(
        deps,
        svc,
        "DeletingLoadBalancer",
        "Deleting NodeBalancer {old}, replaced by {nodeBalancerId}",
        props,
      );
      await releaseManaged(deps, old.id, tag);
      await deps.nodeBalancers.delete(old.id);
      deps.cache.forget(old.id);
    },
  });
  if (!applied.sent) return;
  if (preserve) {
    note(
      deps,
      svc,
      "PreservedLoadBalancer",
      "Kept NodeBalancer {old} (preserve) after moving to {nodeBalancerId}",
      props,
    );
  } else note(deps, svc, "DeletedLoadBalancer", "Deleted NodeBalancer {old}", props);
}

/**
 * An unparsable `enable-ipv6-backends` (the Go CCM reads false) leaves an existing NodeBalancer's backends in
 * the address family they have: planned again with it when it differs from the Go CCM's reading.
 */
async function keepBackendFamily(
  deps: SyncDeps,
  svc: V1Service,
  nb: NodeBalancerSummary,
  plan: PlannedService,
): Promise<PlannedService> {
  if (!plan.spec.keepsBackendFamily) return plan;
  const configs = await deps.cache.details.configs(nb.id);
  const ipv6Backends = backendFamilyOf(configs.flatMap((c) => c.nodes));
  if (ipv6Backends === undefined || ipv6Backends === plan.spec.ipv6Backends) return plan;
  return await planService(deps, svc, deps.nodes.list(), { ipv6Backends });
}

/** Creates or updates the Service's NodeBalancer and reports it in the status. Throws to be retried. */
export async function ensureLoadBalancer(
  deps: SyncDeps,
  service: V1Service,
  ctx: SyncContext,
): Promise<void> {
  let plan = await planService(deps, service, deps.nodes.list());
  reportWarnings(deps, service, plan);
  const svc = await ensureFinalizer(deps, service, ctx);
  const rules = {
    nodeBalancerId: plan.spec.nodeBalancerId ?? undefined,
    ownershipTag: ownershipTagOf(deps, svc),
    owner: await ownerContextOf(deps, svc),
  };
  const found = await findNodeBalancer(deps, svc, rules, ctx);
  if (found) plan = await keepBackendFamily(deps, service, found.nb, plan);
  const nb = found
    ? await updateFound(deps, svc, found, { plan, ctx })
    : await createFor(deps, svc, plan, ctx);
  if (!nb) {
    // A held creation (dry run) has no address yet; the status write that follows it is part of the plan.
    await ctx.writes.apply(statusWrite(deps, svc, [{ hostname: "(the new NodeBalancer's address)" }]));
    return;
  }
  await releaseSwitchedFrom(deps, svc, nb, { plan, ctx });
  const ingress = ingressFor(nb, plan.spec);
  if (hasIngress(svc, ingress)) return;
  await ctx.writes.apply(statusWrite(deps, svc, ingress));
}
