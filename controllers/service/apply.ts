/**
 * The apply stage: creating or updating a Service's NodeBalancer, as the upstream service controller and the
 * Go CCM's `EnsureLoadBalancer` do it together: the finalizer before anything is created; find (never a second
 * NodeBalancer), create, or adopt and update in place; firewalls; the `nodebalancer-id` switch; the status,
 * written only when it changes. Every write is a `Write` handed to the sync's executors (`ctx.writes`), which
 * hold it in `--dry-run`.
 *
 * Also what every stage of a sync shares: its deps (`SyncDeps`) and settings (`SyncContext`), the Service
 * writes (finalizer and status, both to the status subresource) with how they show on `/plan` (object: the
 * Service, `default/web`), and the Events a sync says: Normal ones with their log line (`note`), Warnings said
 * once per change, never once per resync (`warnOnce`).
 *
 * Events keep upstream's cadence and text (k8s.io/cloud-provider v0.35.4 `syncLoadBalancerIfNeeded`): a sync
 * upstream would make (`announce`: the Service changed, the term started, or the last try failed) says
 * `EnsuringLoadBalancer` "Ensuring load balancer" first and `EnsuredLoadBalancer` "Ensured load balancer" once
 * the NodeBalancer is in place, whatever it changed; so does a resync that repairs drift. A Node change that
 * only moves backends says `UpdatedLoadBalancer` "Updated load balancer with new hosts" (upstream's
 * `updateLoadBalancerHosts`). What changed goes to the log line and to this CCM's own `NodeBalancerCreated` and
 * `NodeBalancerUpdated`.
 */
import type { V1LoadBalancerIngress, V1Node, V1Service } from "@kubernetes/client-node";
import type { NodeBalancerCache } from "../../cache/nodebalancers.ts";
import type { NodeBalancerSummary } from "../../cache/types.ts";
import type { Logger } from "../../common/log.ts";
import { type EventSink, normalEvent, refFor, warnEvent } from "../../kube/events.ts";
import { objectKey } from "../../kube/keys.ts";
import { isNotFound, LinodeApiError } from "../../linode/errors.ts";
import type { WriteContext } from "../loop/runtime.ts";
import type { ActionSpec, Write } from "../loop/shadow.ts";
import {
  firewallChanges,
  type FirewallDeps,
  firewallForCreate,
  reconcileFirewall,
  releaseManaged,
} from "./firewall/reconcile.ts";
import { diffNodeBalancer, formatChanges } from "./nodebalancer/diff.ts";
import {
  applyActions,
  type ApplyDeps,
  createAction,
  createNodeBalancer,
  type FieldChange,
  type NodeBalancerAction,
  nodeBalancerTarget,
  releaseAction,
  updateAction,
} from "./nodebalancer/writes.ts";
import { ownershipOf } from "./ownership.ts";
import {
  currentOf,
  findByStatus,
  findNodeBalancer,
  findRulesOf,
  type FoundNodeBalancer,
  hasFinalizer,
  hasIngress,
  ingressFor,
  LB_FINALIZER,
  ownerContextOf,
  ownershipTagOf,
} from "./read.ts";
import { keepBackendFamily, type PlannedService, type PlannerDeps, planService } from "./decide.ts";

// ---------------------------------------------------------------------------------------------------------
// What every stage of a sync shares.

/** What syncing one Service needs. */
export interface SyncDeps extends PlannerDeps {
  nodeBalancers: ApplyDeps["nodeBalancers"];
  firewalls: FirewallDeps["firewalls"];
  cache: Pick<
    NodeBalancerCache,
    "list" | "peek" | "record" | "recordCreated" | "createdHere" | "forget" | "details"
  >;
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
  /** Listing age that counts as fresh, asked when needed: the age of this leadership term (see `read.ts`). */
  maxAgeMs(): number;
  /** This sync's executors: every write goes through them (`--dry-run` holds them). */
  writes: WriteContext;
  /**
   * A sync upstream's service controller would make (the Service changed, the term started, the last try
   * failed): it says upstream's Events whatever it changes, and its Warnings again.
   */
  announce?: boolean;
}

/** Where a sync failed, for upstream's wording of `SyncLoadBalancerFailed` (`failed to …: <error>`). */
export type SyncStage =
  | "ensure"
  | "add-finalizer"
  | "status"
  | "check-exists"
  | "delete"
  | "remove-finalizer";

/** What a failure carries for its Warnings: the stage it happened in, the Nodes of a backends-only update. */
interface FailureContext {
  stage?: SyncStage;
  hosts?: readonly string[];
}

const failures = new WeakMap<object, FailureContext>();

function markFailure(error: unknown, context: FailureContext): unknown {
  if (typeof error === "object" && error !== null) {
    failures.set(error, { ...failures.get(error), ...context });
  }
  return error;
}

/** Marks `error` as thrown in `stage` (the first mark wins); returns it. */
export function markStage(error: unknown, stage: SyncStage): unknown {
  const known = typeof error === "object" && error !== null ? failures.get(error)?.stage : undefined;
  return known ? error : markFailure(error, { stage });
}

/** The stage a failed sync's error was thrown in, if marked. */
export function stageOf(error: unknown): SyncStage | undefined {
  return typeof error === "object" && error !== null ? failures.get(error)?.stage : undefined;
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

/**
 * A Warning Event on the Service, only when `text` differs from what was last said under `reason` (an announced
 * sync forgets what was said, so it says its Warnings again). `component`: the Event's source when it is not
 * the service controller's.
 */
export function warnOnce(
  deps: SyncDeps,
  svc: V1Service,
  warning: { reason: string; text: string; component?: string },
): void {
  const { reason, text, component } = warning;
  if (!deps.notices.changed(objectKey(svc), reason, text)) return;
  if (text === "") return;
  const out = { log: deps.log, events: deps.events };
  warnEvent(out, {
    ref: refFor(svc, "Service"),
    reason,
    message: "{text}",
    props: { service: objectKey(svc), text },
    component,
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

// ---------------------------------------------------------------------------------------------------------
// The Service writes.

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

// ---------------------------------------------------------------------------------------------------------
// Ensuring the NodeBalancer.

/** Marks `error` as thrown while only the backends (`hosts`, Node names) were updated; returns it. */
export function markHostsUpdate(error: unknown, hosts: readonly string[]): unknown {
  return markFailure(error, { hosts });
}

/** The Nodes a failed backends-only update was to put behind the NodeBalancer (see `markHostsUpdate`). */
export function hostsUpdateOf(error: unknown): readonly string[] | undefined {
  return typeof error === "object" && error !== null ? failures.get(error)?.hosts : undefined;
}

/** Says `EnsuringLoadBalancer` once per sync, when first asked; `said` tells whether it was. */
class Ensuring {
  said = false;
  constructor(readonly deps: SyncDeps, readonly svc: V1Service) {}

  /** Upstream's Normal Event before a sync changes the load balancer (once). */
  say(): void {
    if (this.said) return;
    this.said = true;
    note(this.deps, this.svc, "EnsuringLoadBalancer", "Ensuring load balancer");
  }
}

/** The Warning for values read leniently: the Service syncs on, with the value named (see annotations/table.ts). */
export const LENIENT_REASON = "InvalidAnnotationValue";

const NODE_ACTIONS = new Set<NodeBalancerAction["kind"]>(["createNode", "updateNode", "deleteNode"]);

async function ensureFinalizer(deps: SyncDeps, svc: V1Service, ctx: SyncContext): Promise<V1Service> {
  if (hasFinalizer(svc)) return svc;
  const finalizers = [...(svc.metadata?.finalizers ?? []), LB_FINALIZER];
  try {
    const applied = await ctx.writes.apply(finalizerWrite(deps, svc, finalizers));
    return applied.sent ? applied.answer : svc;
  } catch (e) {
    throw markStage(e, "add-finalizer");
  }
}

function reportWarnings(deps: SyncDeps, svc: V1Service, plan: PlannedService): void {
  const warnings = plan.warnings.map((w) => `${w.key}: ${w.message}`).join("; ");
  warnOnce(deps, svc, { reason: "AnnotationWarning", text: warnings });
  const asGo = plan.lenient.filter((l) => !l.reserved).map((l) => l.message).join("; ");
  const reserved = plan.lenient.filter((l) => l.reserved).map((l) => l.message).join("; ");
  const lenientText = [
    asGo && `Invalid annotation read as the Go CCM reads it: ${asGo}`,
    reserved && `Reserved tags dropped from an annotation: ${reserved}`,
  ].filter((t) => t !== "").join("; ");
  warnOnce(deps, svc, { reason: LENIENT_REASON, text: lenientText });
  const skipped = plan.skippedNodes.map((s) => `${s.nodeName} (${s.reason})`).join(", ");
  warnOnce(deps, svc, {
    reason: "BackendNodesSkipped",
    text: skipped && `Nodes left out of the NodeBalancer: ${skipped}`,
  });
  const unreadable = plan.unreadableCertificates.join(", ");
  const tlsText = unreadable &&
    `No readable PEM certificate in tls.crt of Secret ${unreadable}: a NodeBalancer keeps its current one`;
  warnOnce(deps, svc, { reason: "InvalidTLSSecret", text: tlsText });
}

/** The source of the one Event the Go CCM writes itself (`createIPChangeWarningEvent`), beside upstream's. */
export const GO_CCM_EVENT_COMPONENT = "linode-cloud-controller-manager";

/**
 * What differs but cannot change in place: the reserved IPv4 in the Go CCM's words, reason and source
 * (operators and its end-to-end tests match `NodeBalancerIPChangeIgnored`), the rest (type, frontend subnet)
 * together.
 */
function reportImmutable(deps: SyncDeps, svc: V1Service, nbId: number, immutable: readonly FieldChange[]) {
  const ipv4 = immutable.find((c) => c.field === "ipv4");
  const rest = immutable.filter((c) => c !== ipv4);
  const ipText = ipv4
    ? `IPv4 annotation changed to ${ipv4.new}, but NodeBalancer (${nbId}) IP cannot be updated after creation. It will remain ${ipv4.old}`
    : "";
  warnOnce(deps, svc, {
    reason: "NodeBalancerIPChangeIgnored",
    text: ipText,
    component: GO_CCM_EVENT_COMPONENT,
  });
  const restText = rest.length
    ? `NodeBalancer ${nbId} keeps ${formatChanges(rest)}: the API cannot change these in place`
    : "";
  warnOnce(deps, svc, { reason: "LoadBalancerFieldImmutable", text: restText });
}

/** Creates the Service's NodeBalancer; undefined when the creation is held (dry run). */
async function createFor(
  deps: SyncDeps,
  svc: V1Service,
  plan: PlannedService,
  sync: { ctx: SyncContext; ensuring: Ensuring },
): Promise<NodeBalancerSummary | undefined> {
  const applied = await sync.ctx.writes.apply({
    api: "linode",
    action: createAction(svc, plan.desired),
    send: async () => {
      sync.ensuring.say();
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
  note(deps, svc, "NodeBalancerCreated", "Created NodeBalancer {nodeBalancerId}", {
    nodeBalancerId: applied.answer.id,
  });
  return applied.answer;
}

/** The Nodes behind the planned NodeBalancer, by name. */
function hostsOf(plan: PlannedService): string[] {
  return [...new Set(plan.desired.configs.flatMap((c) => c.nodes.map((n) => n.nodeName)))].sort();
}

/** True when a 404 says the NodeBalancer itself is gone (not one of its configs or nodes). */
export function isNodeBalancerGone(e: unknown): boolean {
  return isNotFound(e) && e instanceof LinodeApiError &&
    ["/nodebalancers/{id}", "/nodebalancers/{id}/configs", "/nodebalancers/{id}/firewalls"].includes(e.route);
}

async function updateFound(
  deps: SyncDeps,
  svc: V1Service,
  found: FoundNodeBalancer,
  planned: { plan: PlannedService; ctx: SyncContext; ensuring: Ensuring },
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
  planned: { plan: PlannedService; ctx: SyncContext; ensuring: Ensuring },
): Promise<NodeBalancerSummary> {
  const { plan, ctx, ensuring } = planned;
  const nbId = found.nb.id;
  // Created by this CCM from the same plan and not changed since (within the drift period): nothing to read.
  if (found.via !== "status-ip" && found.via !== "status-hostname") {
    if (deps.cache.details.isAsCreated(nbId, plan.fingerprint)) return found.nb;
  }
  const tag = ownershipTagOf(deps, svc);
  const { actions, changes, immutable } = diffNodeBalancer(await currentOf(deps, found.nb), plan.desired);
  // Taken over from the Go CCM (by the status) or from the user (`nodebalancer-id` naming one not yet tagged).
  const adopting = found.via === "status-ip" || found.via === "status-hostname" ||
    !found.nb.tags.includes(tag);
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
        if (!nodesOnly || fwChanges.length) ensuring.say();
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
      via: found.via === "annotation" ? "nodebalancer-id annotation" : found.via.replace("-", " "),
    });
  }
  const props = { service: objectKey(svc), nodeBalancerId: nbId, changes: formatChanges(changes) };
  if (actions.length && nodesOnly && !fwDone.length) {
    deps.log.info("{service}: backends of NodeBalancer {nodeBalancerId}: {changes}", props);
    // A sync upstream would make says Ensured instead (upstream updates hosts only from its Node loop).
    if (!ensuring.said) note(deps, svc, "UpdatedLoadBalancer", "Updated load balancer with new hosts");
  } else if (actions.length || fwDone.length) {
    const done = [props.changes || "no setting changed", ...fwDone].join("; ");
    note(deps, svc, "NodeBalancerUpdated", "NodeBalancer {nodeBalancerId}: {done}", { ...props, done });
  } else deps.log.debug("{service}: NodeBalancer {nodeBalancerId} unchanged", props);
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
  } else {note(
      deps,
      svc,
      "ReplacedLoadBalancer",
      "Deleted NodeBalancer {old}, replaced by {nodeBalancerId}",
      props,
    );}
}

/** Creates or updates the Service's NodeBalancer and reports it in the status. Throws to be retried. */
export async function ensureLoadBalancer(
  deps: SyncDeps,
  service: V1Service,
  ctx: SyncContext,
): Promise<void> {
  const ensuring = new Ensuring(deps, service);
  if (ctx.announce) {
    deps.notices.forget(objectKey(service));
    ensuring.say();
  }
  let plan = await planService(deps, service, deps.nodes.list());
  reportWarnings(deps, service, plan);
  const svc = await ensureFinalizer(deps, service, ctx);
  const rules = await findRulesOf(deps, svc, plan.spec.nodeBalancerId);
  const found = await findNodeBalancer(deps, svc, rules, ctx);
  if (found) plan = await keepBackendFamily(deps, service, found.nb, plan);
  const nb = found
    ? await updateFound(deps, svc, found, { plan, ctx, ensuring })
    : await createFor(deps, svc, plan, { ctx, ensuring });
  if (!nb) {
    // A held creation (dry run) has no address yet; the status write that follows it is part of the plan.
    await ctx.writes.apply(statusWrite(deps, svc, [{ hostname: "(the new NodeBalancer's address)" }]));
    return;
  }
  await releaseSwitchedFrom(deps, svc, nb, { plan, ctx });
  if (ensuring.said) note(deps, svc, "EnsuredLoadBalancer", "Ensured load balancer");
  const ingress = ingressFor(nb, plan.spec);
  if (hasIngress(svc, ingress)) return;
  await ctx.writes.apply(statusWrite(deps, svc, ingress)).catch((e) => {
    throw markStage(e, "status");
  });
}
