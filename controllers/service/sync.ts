/**
 * One Service's load balancer, end to end, as the upstream service controller and the Go CCM's
 * `EnsureLoadBalancer`/`EnsureLoadBalancerDeleted` do it together: the finalizer before anything is
 * created; find (never a second NodeBalancer), create or adopt and update in place; firewalls; the
 * `nodebalancer-id` switch; the status, written only when it changes. On deletion or a type change away
 * from LoadBalancer: delete (unless `preserve`), then clear the status and drop the finalizer.
 */
import type { V1LoadBalancerIngress, V1Node, V1Service } from "@kubernetes/client-node";
import type { Logger } from "../../common/log.ts";
import { type EventSink, normalEvent, refFor } from "../../kube/events.ts";
import { objectKey } from "../../kube/keys.ts";
import { InvalidInputError } from "../loop/run_queue.ts";
import { applyActions, type ApplyDeps, createNodeBalancer } from "./apply.ts";
import type {
  InvalidInput,
  NodeBalancerAction,
  NodeBalancerDiffer,
  PlanResult,
  ServiceLbSpec,
  ServicePlanner,
} from "./contracts.ts";
import {
  AnnotatedNodeBalancerMissingError,
  findByStatus,
  findNodeBalancer,
  type FoundNodeBalancer,
} from "./find.ts";
import {
  type FirewallContext,
  type FirewallDeps,
  firewallForCreate,
  reconcileFirewall,
  releaseManaged,
} from "./firewall.ts";
import { hasIngress, ingressFor } from "./status.ts";
import type { TlsSecrets } from "./tls.ts";
import type { NodeBalancerCache } from "../../cache/nodebalancers.ts";
import type { NodeBalancerSummary } from "../../cache/types.ts";

/** The finalizer that keeps a Service until its NodeBalancer is gone (upstream's name). */
export const LB_FINALIZER = "service.kubernetes.io/load-balancer-cleanup";

/** Fenced Service writes: both go to the status subresource. */
export interface ServiceWriter {
  /** Replaces the finalizers; a Service changed since `svc` was read answers 409. */
  setFinalizers(svc: V1Service, finalizers: readonly string[]): Promise<V1Service>;
  /** Replaces `status.loadBalancer.ingress`; answers the Service as written. */
  patchIngress(svc: V1Service, ingress: readonly V1LoadBalancerIngress[]): Promise<V1Service>;
}

/** What syncing one Service needs. */
export interface SyncDeps {
  nodeBalancers: ApplyDeps["nodeBalancers"];
  firewalls: FirewallDeps["firewalls"];
  cache: Pick<NodeBalancerCache, "list" | "peek" | "record" | "forget" | "details">;
  planner: ServicePlanner;
  diff: NodeBalancerDiffer;
  nodes: { list(): readonly V1Node[] };
  tls: TlsSecrets;
  writer: ServiceWriter;
  events: EventSink;
  log: Logger;
}

/** Per-sync settings. */
export interface SyncContext {
  /** Listing age that counts as fresh: the age of this leadership term (see `find.ts`). */
  maxAgeMs: number;
}

/** Bad input on a Service: Warning Event, no retry until the Service changes, nothing touched. */
export class InvalidServiceError extends InvalidInputError {
  override name = "InvalidServiceError";
  constructor(readonly errors: readonly InvalidInput[]) {
    super(errors.map((e) => `invalid ${e.key} "${e.value}": accepts ${e.accepted}`).join("; "));
  }
}

/** True for a Service this controller provides a load balancer for (no other `loadBalancerClass`). */
export function wantsLoadBalancer(svc: V1Service): boolean {
  return svc.spec?.type === "LoadBalancer" && !svc.spec.loadBalancerClass;
}

/** True when the Service holds our finalizer and is going, or no longer wants a load balancer. */
export function needsCleanup(svc: V1Service): boolean {
  const has = svc.metadata?.finalizers?.includes(LB_FINALIZER) ?? false;
  return has && (svc.metadata?.deletionTimestamp !== undefined || !wantsLoadBalancer(svc));
}

function out(deps: SyncDeps) {
  return { log: deps.log, events: deps.events };
}

function note(deps: SyncDeps, svc: V1Service, reason: string, message: string, props = {}): void {
  normalEvent(out(deps), {
    ref: refFor(svc, "Service"),
    reason,
    message,
    props: { service: objectKey(svc), ...props },
  });
}

function planService(deps: SyncDeps, svc: V1Service): PlanResult & { ok: true } {
  const { lookup, done } = deps.tls.lookupFor(objectKey(svc), svc.metadata?.namespace ?? "");
  let plan: PlanResult;
  try {
    plan = deps.planner.plan(svc, deps.nodes.list(), lookup);
  } finally {
    done();
  }
  if (!plan.ok) throw new InvalidServiceError(plan.errors);
  return plan;
}

async function ensureFinalizer(deps: SyncDeps, svc: V1Service): Promise<V1Service> {
  const finalizers = svc.metadata?.finalizers ?? [];
  if (finalizers.includes(LB_FINALIZER)) return svc;
  return await deps.writer.setFinalizers(svc, [...finalizers, LB_FINALIZER]);
}

function firewallContext(
  svc: V1Service,
  label: string,
  tags: readonly string[],
  tag: string,
): FirewallContext {
  const ports = (svc.spec?.ports ?? []).map((p) => p.port);
  return { label, tags, ownershipTag: tag, ports, serviceName: svc.metadata?.name ?? "" };
}

const NODE_ACTIONS = new Set<NodeBalancerAction["kind"]>([
  "rebuildConfig",
  "createNode",
  "updateNode",
  "deleteNode",
]);

async function createFor(deps: SyncDeps, svc: V1Service, plan: PlanResult & { ok: true }, tag: string) {
  const { desired, spec } = plan;
  note(deps, svc, "EnsuringLoadBalancer", "Ensuring load balancer");
  const fw = await firewallForCreate(deps, spec, firewallContext(svc, desired.label, desired.tags, tag));
  try {
    const nb = await createNodeBalancer(deps, desired, { firewallId: fw.firewallId });
    note(deps, svc, "EnsuredLoadBalancer", "Ensured load balancer: created NodeBalancer {nodeBalancerId}", {
      nodeBalancerId: nb.id,
    });
    return nb;
  } catch (e) {
    // A firewall made for a NodeBalancer that was not created protects nothing.
    if (fw.created) await deps.firewalls.delete(fw.created.id).catch(() => {});
    throw e;
  }
}

async function updateFound(
  deps: SyncDeps,
  svc: V1Service,
  found: FoundNodeBalancer,
  plan: PlanResult & { ok: true },
  tag: string,
): Promise<NodeBalancerSummary> {
  const nbId = found.nb.id;
  const current = { nb: found.nb, configs: await deps.cache.details.configs(nbId) };
  const { actions, changes } = deps.diff(current, plan.desired);
  const adopting = found.via === "status-ip" || found.via === "status-hostname";
  const nodesOnly = !adopting && changes.length === 0 && actions.every((a) => NODE_ACTIONS.has(a.kind));
  if (actions.length && !nodesOnly) note(deps, svc, "EnsuringLoadBalancer", "Ensuring load balancer");
  await applyActions(deps, nbId, actions);
  const fwContext = firewallContext(svc, found.nb.label ?? plan.desired.label, plan.desired.tags, tag);
  const fwDone = await reconcileFirewall(deps, nbId, plan.spec, fwContext);
  if (adopting) {
    const message = "Adopted NodeBalancer {nodeBalancerId} found by its {via}: same id, address and backends";
    note(deps, svc, "AdoptedLoadBalancer", message, {
      nodeBalancerId: nbId,
      via: found.via.replace("-", " "),
    });
  }
  if (changes.length) {
    const list = changes.map((c) => `${c.field}: ${JSON.stringify(c.old)} → ${JSON.stringify(c.new)}`).join(
      "; ",
    );
    note(deps, svc, "UpdatedLoadBalancerSettings", "Changed on NodeBalancer {nodeBalancerId}: {changes}", {
      nodeBalancerId: nbId,
      changes: list,
    });
  }
  if (nodesOnly && actions.length && !fwDone.length) {
    note(deps, svc, "UpdatedLoadBalancer", "Updated load balancer with new hosts");
  } else if (actions.length || fwDone.length) {
    const props = { nodeBalancerId: nbId, done: [...fwDone].join(", ") || "configs updated" };
    note(
      deps,
      svc,
      "EnsuredLoadBalancer",
      "Ensured load balancer: NodeBalancer {nodeBalancerId} ({done})",
      props,
    );
  } else {deps.log.debug("service {service}: NodeBalancer {nodeBalancerId} unchanged", {
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
  spec: ServiceLbSpec,
  tag: string,
) {
  if (spec.nodeBalancerId === undefined) return;
  const old = findByStatus(svc, (await deps.cache.list({ maxAgeMs: Infinity })).data)?.nb;
  if (!old || old.id === nb.id || !old.tags.includes(tag)) return;
  if (spec.preserve) {
    deps.cache.record(await deps.nodeBalancers.update(old.id, { tags: old.tags.filter((t) => t !== tag) }));
    note(
      deps,
      svc,
      "PreservedLoadBalancer",
      "Kept NodeBalancer {old} (preserve) after switching to {nodeBalancerId}",
      {
        old: old.id,
        nodeBalancerId: nb.id,
      },
    );
    return;
  }
  note(deps, svc, "DeletingLoadBalancer", "Deleting NodeBalancer {old}, replaced by {nodeBalancerId}", {
    old: old.id,
    nodeBalancerId: nb.id,
  });
  await releaseManaged(deps, old.id, tag);
  await deps.nodeBalancers.delete(old.id);
  deps.cache.forget(old.id);
  note(deps, svc, "DeletedLoadBalancer", "Deleted NodeBalancer {old}", { old: old.id });
}

/** Creates or updates the Service's NodeBalancer and reports it in the status. */
export async function ensureLoadBalancer(
  deps: SyncDeps,
  service: V1Service,
  ctx: SyncContext,
): Promise<void> {
  const plan = planService(deps, service);
  const svc = await ensureFinalizer(deps, service);
  const tag = deps.planner.ownershipTag(svc);
  const rules = { nodeBalancerId: plan.spec.nodeBalancerId, ownershipTag: tag };
  const found = await findNodeBalancer(deps, svc, rules, ctx);
  const nb = found ? await updateFound(deps, svc, found, plan, tag) : await createFor(deps, svc, plan, tag);
  await releaseSwitchedFrom(deps, svc, nb, plan.spec, tag);
  const ingress = ingressFor(nb, plan.spec);
  if (!hasIngress(svc, ingress)) await deps.writer.patchIngress(svc, ingress);
}

async function findForCleanup(
  deps: SyncDeps,
  svc: V1Service,
  nodeBalancerId: number | undefined,
  ctx: SyncContext,
) {
  try {
    return await findNodeBalancer(
      deps,
      svc,
      { nodeBalancerId, ownershipTag: deps.planner.ownershipTag(svc) },
      ctx,
    );
  } catch (e) {
    if (e instanceof AnnotatedNodeBalancerMissingError) return undefined;
    throw e;
  }
}

/** Deletes the Service's NodeBalancer (unless preserved), clears the status, then drops the finalizer. */
export async function ensureLoadBalancerDeleted(
  deps: SyncDeps,
  service: V1Service,
  ctx: SyncContext,
): Promise<void> {
  let svc = service;
  const lifecycle = deps.planner.lifecycle(svc);
  if (!lifecycle.ok) throw new InvalidServiceError(lifecycle.errors);
  const { preserve, nodeBalancerId } = lifecycle.spec;
  const found = await findForCleanup(deps, svc, nodeBalancerId, ctx);
  const tag = deps.planner.ownershipTag(svc);
  if (found && preserve) {
    note(deps, svc, "PreservedLoadBalancer", "Kept NodeBalancer {nodeBalancerId} (preserve annotation)", {
      nodeBalancerId: found.nb.id,
    });
  } else if (found) {
    note(deps, svc, "DeletingLoadBalancer", "Deleting load balancer");
    await releaseManaged(deps, found.nb.id, tag);
    await deps.nodeBalancers.delete(found.nb.id);
    deps.cache.forget(found.nb.id);
    note(deps, svc, "DeletedLoadBalancer", "Deleted load balancer: NodeBalancer {nodeBalancerId}", {
      nodeBalancerId: found.nb.id,
    });
  }
  deps.tls.forget(objectKey(svc));
  if (!svc.metadata?.deletionTimestamp && (svc.status?.loadBalancer?.ingress ?? []).length) {
    svc = await deps.writer.patchIngress(svc, []);
  }
  await deps.writer.setFinalizers(svc, (svc.metadata?.finalizers ?? []).filter((f) => f !== LB_FINALIZER));
}
