/**
 * The deletion path and the orphan check.
 *
 * A Service going away, or no longer a LoadBalancer: its NodeBalancer (found by the same rules that tie one
 * to it, never another) is deleted with its managed firewall unless `preserve` says keep it; then the status
 * is cleared and the finalizer dropped, as upstream's `EnsureLoadBalancerDeleted` path, with its Events:
 * `DeletingLoadBalancer` "Deleting load balancer" when there is one (a preserved one too, as upstream asks the
 * Go CCM's `GetLoadBalancer`), and `DeletedLoadBalancer` "Deleted load balancer" once the finalizer is gone,
 * even when there was none. A preserved NodeBalancer loses this CCM's ownership and identity tags, so no orphan
 * check deletes it later: it is the user's again.
 *
 * NodeBalancers of this cluster that no Service is tied to: left behind by a deleted cluster, or a Service
 * deleted while no CCM ran (a long-standing Go CCM complaint). They are listed on `/plan`. With
 * `--cleanup-orphaned-nodebalancers` they are deleted, but only one carrying this cluster's ownership tag (so
 * this CCM made or adopted it for a Service) and this cluster's identity tag (`ownership.ts`: another cluster
 * with the same `--cluster-name` cannot carry it), seen orphaned on two checks in a row, on a listing and a
 * Service informer that can be trusted; never one any rule ties to a Service (ownership tag, status address
 * or hostname, `nodebalancer-id`), never on doubt, never while the identity is unknown, and at most
 * `MAX_DELETIONS_PER_CHECK` per check (a Warning says how many wait), so a mistake cannot empty an account.
 */
import type { V1Service } from "@kubernetes/client-node";
import type { NodeBalancerSummary } from "../../cache/types.ts";
import type { Logger } from "../../common/log.ts";
import type { Registry } from "../../common/metrics.ts";
import { type EventSink, warnEvent } from "../../kube/events.ts";
import { objectKey } from "../../kube/keys.ts";
import { isNotFound } from "../../linode/errors.ts";
import type { WriteContext } from "../loop/runtime.ts";
import { AnnotationReader } from "./annotations/table.ts";
import { type FirewallDeps, releaseManaged } from "./firewall/reconcile.ts";
import { nodeBalancerTarget, type NodeBalancerWrites, releaseAction } from "./nodebalancer/writes.ts";
import {
  type ClusterIdentity,
  contestedTags,
  IDENTITY_NAMESPACE,
  isOwnedByCluster,
  ownershipTag,
} from "./ownership.ts";
import {
  AnnotatedNodeBalancerMissingError,
  findByStatus,
  findNodeBalancer,
  findRulesOf,
  LB_FINALIZER,
  lifecycleOf,
  NodeBalancerNotOwnedError,
  ownershipTagOf,
} from "./read.ts";
import {
  finalizerWrite,
  isNodeBalancerGone,
  markStage,
  note,
  statusWrite,
  type SyncContext,
  type SyncDeps,
  warnOnce,
} from "./apply.ts";

// ---------------------------------------------------------------------------------------------------------
// Deleting a Service's NodeBalancer.

async function findForCleanup(
  deps: SyncDeps,
  svc: V1Service,
  nodeBalancerId: number | null,
  ctx: SyncContext,
) {
  const rules = await findRulesOf(deps, svc, nodeBalancerId);
  try {
    return await findNodeBalancer(deps, svc, rules, ctx);
  } catch (e) {
    // The annotated NodeBalancer is gone already: nothing to delete.
    if (e instanceof AnnotatedNodeBalancerMissingError) return undefined;
    // Not ours to delete: left as it is, and the Service may go (its finalizer is released).
    if (e instanceof NodeBalancerNotOwnedError) {
      warnOnce(deps, svc, { reason: "LoadBalancerNotOwned", text: e.message });
      return undefined;
    }
    throw markStage(e, "check-exists");
  }
}

/** The reserved IPv4 of a deleted NodeBalancer, when `retain-reserved-ipv4` is false. */
export interface ReservedIps {
  deleteReservedIpv4(address: string): Promise<void>;
}

async function deleteNodeBalancer(deps: SyncDeps, svc: V1Service, nbId: number): Promise<void> {
  try {
    await releaseManaged(deps, nbId, ownershipTagOf(deps, svc));
    await deps.nodeBalancers.delete(nbId);
  } catch (e) {
    // Deleted already (by hand, or by an earlier try whose answer was lost): nothing is left to release.
    if (!isNodeBalancerGone(e)) throw e;
  }
  deps.cache.forget(nbId);
  deps.log.info("{service}: deleted NodeBalancer {nodeBalancerId}", {
    service: objectKey(svc),
    nodeBalancerId: nbId,
  });
}

/**
 * Hands a preserved NodeBalancer back: this Service's ownership tag and this cluster's identity tag come off
 * (the cluster name the Go CCM tags with stays), so the orphan check never takes it for this cluster's.
 */
async function releasePreserved(
  deps: SyncDeps,
  svc: V1Service,
  nb: NodeBalancerSummary,
  ctx: SyncContext,
): Promise<void> {
  const idTag = await deps.identity.tag();
  const ours = new Set([ownershipTagOf(deps, svc), idTag]);
  const tags = nb.tags.filter((t) => !ours.has(t));
  if (tags.length !== nb.tags.length) {
    const changes = [{ field: "tags", old: [...nb.tags], new: tags }];
    await ctx.writes.apply({
      api: "linode",
      action: releaseAction(svc, nb.id, { preserve: true, changes }),
      send: () => deps.nodeBalancers.update(nb.id, { tags }),
      record: (updated) => deps.cache.record(updated),
    });
  }
  note(deps, svc, "PreservedLoadBalancer", "Kept NodeBalancer {nodeBalancerId} (preserve annotation)", {
    nodeBalancerId: nb.id,
  });
}

/** Deletes the Service's NodeBalancer (unless preserved), clears the status, then drops the finalizer. */
export async function ensureLoadBalancerDeleted(
  deps: SyncDeps & { reservedIps?: ReservedIps },
  service: V1Service,
  ctx: SyncContext,
): Promise<void> {
  let svc = service;
  const lifecycle = lifecycleOf(svc);
  const found = await findForCleanup(deps, svc, lifecycle.nodeBalancerId, ctx);
  if (found) note(deps, svc, "DeletingLoadBalancer", "Deleting load balancer");
  if (found && lifecycle.preserve) {
    await releasePreserved(deps, svc, found.nb, ctx).catch((e) => {
      throw markStage(e, "delete");
    });
  } else if (found) {
    // As the Go CCM: the NodeBalancer's address goes back unless the reserved IP is to be kept.
    const releaseIp = !lifecycle.retainReservedIpv4 && deps.reservedIps !== undefined;
    const changes = [
      { field: "nodebalancer", old: nodeBalancerTarget(found.nb.id), new: null },
      ...(releaseIp ? [{ field: "reserved ipv4", old: found.nb.ipv4, new: null }] : []),
    ];
    await ctx.writes.apply({
      api: "linode",
      action: releaseAction(svc, found.nb.id, { preserve: false, changes }),
      send: async () => {
        // The address goes back first, as in the Go CCM: should that fail (a 429, a 5xx), the retry still finds
        // the NodeBalancer and releases again (a released address counts as done). Released after the delete, a
        // failure leaked it: the retry found no NodeBalancer and dropped the finalizer. A released address stays
        // on the NodeBalancer as an ordinary one until the delete.
        if (releaseIp) await deps.reservedIps?.deleteReservedIpv4(found.nb.ipv4);
        await deleteNodeBalancer(deps, svc, found.nb.id);
      },
    }).catch((e) => {
      throw markStage(e, "delete");
    });
  }
  deps.tls.forget(objectKey(svc));
  deps.notices.forget(objectKey(svc));
  if (!svc.metadata?.deletionTimestamp && (svc.status?.loadBalancer?.ingress ?? []).length) {
    const cleared = await ctx.writes.apply(statusWrite(deps, svc, [])).catch((e) => {
      throw markStage(e, "status");
    });
    if (cleared.sent) svc = cleared.answer;
  }
  const finalizers = (svc.metadata?.finalizers ?? []).filter((f) => f !== LB_FINALIZER);
  if (finalizers.length === (svc.metadata?.finalizers ?? []).length) {
    note(deps, svc, "DeletedLoadBalancer", "Deleted load balancer");
    return;
  }
  const dropped = await ctx.writes.apply(finalizerWrite(deps, svc, finalizers)).catch((e) => {
    throw markStage(e, "remove-finalizer");
  });
  if (dropped.sent) note(deps, svc, "DeletedLoadBalancer", "Deleted load balancer");
}

// ---------------------------------------------------------------------------------------------------------
// Orphaned NodeBalancers.

/** What happens to an orphan. */
export type OrphanFate =
  | "deleting"
  | "kept: it claims two owners"
  | "kept: no ownership tag of this cluster"
  | "kept: no identity tag of this cluster"
  | "kept: cluster identity unknown"
  | "kept: --cleanup-orphaned-nodebalancers is off"
  | "kept: waiting for a second check"
  | "kept: deletion limit of this check reached";

/** The Warning on the `kube-system` Namespace naming orphans kept because they claim two owners. */
export const CONTESTED_REASON = "ContestedNodeBalancer";

/** The most orphans one check deletes; the rest wait for the next check (an hour later). */
export const MAX_DELETIONS_PER_CHECK = 3;

/** A NodeBalancer of this cluster that no Service is tied to, as `/plan` lists it. */
export interface OrphanedNodeBalancer {
  readonly id: number;
  readonly label: string | null;
  readonly ipv4: string;
  readonly hostname: string | null;
  readonly tags: readonly string[];
  /** Carries an ownership tag and the identity tag of this cluster: `--cleanup-orphaned-nodebalancers` may delete it. */
  readonly owned: boolean;
  readonly fate: OrphanFate;
}

/** The ties of every Service to NodeBalancers; `doubt` when one cannot be read. */
function serviceTies(services: readonly V1Service[], clusterName: string) {
  const tags = new Set<string>();
  const ids = new Set<number>();
  let doubt = false;
  for (const svc of services) {
    try {
      tags.add(ownershipTag(clusterName, svc.metadata?.uid ?? ""));
    } catch {
      doubt = true;
    }
    const reader = new AnnotationReader(svc.metadata?.annotations);
    const id = reader.id("nodebalancer-id");
    if (id !== undefined) ids.add(id);
    if (reader.errors.length) doubt = true;
  }
  return { tags, ids, doubt };
}

/**
 * The NodeBalancers carrying the cluster name or an ownership tag of this cluster that no Service is tied
 * to, and whether the ties could all be read (`doubt` false). Pure.
 */
export function findOrphans(
  nodeBalancers: readonly NodeBalancerSummary[],
  services: readonly V1Service[],
  clusterName: string,
  clusterIdTag?: string,
): { orphans: NodeBalancerSummary[]; doubt: boolean } {
  const ties = serviceTies(services, clusterName);
  const ours = nodeBalancers.filter((nb) =>
    (clusterName !== "" && nb.tags.includes(clusterName)) || isOwnedByCluster(nb.tags, clusterName) ||
    (clusterIdTag !== undefined && nb.tags.includes(clusterIdTag))
  );
  const orphans = ours.filter((nb) =>
    !ties.ids.has(nb.id) && !nb.tags.some((t) => ties.tags.has(t)) &&
    !services.some((svc) => findByStatus(svc, [nb]))
  );
  return { orphans, doubt: ties.doubt };
}

/** What the orphan check reads and writes. */
export interface OrphanDeps {
  cache: SyncDeps["cache"];
  nodeBalancers: Pick<NodeBalancerWrites, "delete">;
  firewalls: FirewallDeps["firewalls"];
  /** Every Service (any type), and whether the informer holds a complete, current list. */
  services: { list(): readonly V1Service[]; trusted(): boolean };
  /** The cluster identity: without it nothing is deleted. */
  identity: Pick<ClusterIdentity, "tag">;
  /** Where the Warning about deletions left for later goes (on the `kube-system` Namespace). */
  events?: EventSink;
  log: Logger;
  metrics: Registry;
}

/** Settings of the orphan check. */
export interface OrphanOptions {
  clusterName: string;
  /** `--cleanup-orphaned-nodebalancers`. */
  cleanup: boolean;
}

/** The orphans found by the last check, kept for `/plan` across leadership terms. */
export class OrphanCheck {
  readonly #o: OrphanOptions;
  #last: readonly OrphanedNodeBalancer[] = [];

  constructor(options: OrphanOptions) {
    this.#o = options;
  }

  /** The orphans as last checked. */
  list(): readonly OrphanedNodeBalancer[] {
    return this.#last;
  }

  /** Lists NodeBalancers (cached within the TTL), finds the orphans and deletes those it may. */
  async check(deps: OrphanDeps, writes: WriteContext): Promise<void> {
    const idTag = await deps.identity.tag().catch((e) => {
      deps.log.warning("orphaned NodeBalancers are not cleaned up: {error}", {
        error: String(e?.message ?? e),
      });
      return undefined;
    });
    const snapshot = await deps.cache.list();
    const found = findOrphans(snapshot.data, deps.services.list(), this.#o.clusterName, idTag);
    const trusted = !snapshot.stale && !snapshot.suspicious && deps.services.trusted() && !found.doubt;
    const before = new Set(this.#last.map((o) => o.id));
    this.#last = this.#limit(deps, found.orphans.map((nb) => this.#describe(nb, before.has(nb.id), idTag)));
    this.#warnContested(deps);
    const gauge = deps.metrics.gauge(
      "ccm_orphaned_nodebalancers",
      "NodeBalancers of this cluster no Service is tied to",
    );
    gauge.set(undefined, this.#last.length);
    if (!trusted) {
      if (this.#last.length) deps.log.info("orphaned NodeBalancers left alone: listing or Services in doubt");
      return;
    }
    for (const orphan of this.#last.filter((o) => o.fate === "deleting")) {
      await this.#delete(deps, orphan, writes);
    }
    gauge.set(undefined, this.#last.length);
  }

  /** Marks the deletions past the per-check limit as kept, with a Warning naming how many wait. */
  #limit(deps: OrphanDeps, orphans: OrphanedNodeBalancer[]): OrphanedNodeBalancer[] {
    let left = MAX_DELETIONS_PER_CHECK;
    const out = orphans.map((o): OrphanedNodeBalancer =>
      o.fate !== "deleting"
        ? o
        : left-- > 0
        ? o
        : { ...o, fate: "kept: deletion limit of this check reached" }
    );
    const waiting = out.filter((o) => o.fate === "kept: deletion limit of this check reached").length;
    if (waiting > 0 && deps.events) {
      warnEvent({ log: deps.log, events: deps.events }, {
        ref: { kind: "Namespace", apiVersion: "v1", name: IDENTITY_NAMESPACE },
        reason: "OrphanCleanupLimited",
        message:
          "{count} more orphaned NodeBalancers wait for later checks: at most {limit} are deleted per check",
        props: { count: waiting, limit: MAX_DELETIONS_PER_CHECK },
      });
    } else if (waiting > 0) {
      deps.log.warning("{count} more orphaned NodeBalancers wait for later checks", { count: waiting });
    }
    return out;
  }

  /**
   * A Warning (on the `kube-system` Namespace) naming each orphan kept because it claims two owners: a tag was
   * forged or copied, and deleting it could delete another cluster's or another Service's live NodeBalancer.
   * Said with cleanup on only, where it is what stops a deletion.
   */
  #warnContested(deps: OrphanDeps): void {
    const kept = this.#last.filter((o) => o.fate === "kept: it claims two owners");
    if (!this.#o.cleanup || kept.length === 0) return;
    const list = kept.map((o) => `${o.id} (${contestedTags(o.tags)?.join(", ")})`).join("; ");
    const message =
      "Orphaned NodeBalancers claiming two owners are never deleted: {list}; remove the wrong tag by hand";
    if (deps.events) {
      warnEvent({ log: deps.log, events: deps.events }, {
        ref: { kind: "Namespace", apiVersion: "v1", name: IDENTITY_NAMESPACE },
        reason: CONTESTED_REASON,
        message,
        props: { list },
      });
    } else deps.log.warning(message, { list });
  }

  #describe(nb: NodeBalancerSummary, seenBefore: boolean, idTag: string | undefined): OrphanedNodeBalancer {
    const contested = contestedTags(nb.tags) !== undefined;
    const owned = !contested && isOwnedByCluster(nb.tags, this.#o.clusterName) && idTag !== undefined &&
      nb.tags.includes(idTag);
    const fate: OrphanFate = contested
      ? "kept: it claims two owners"
      : !isOwnedByCluster(nb.tags, this.#o.clusterName)
      ? "kept: no ownership tag of this cluster"
      : idTag === undefined
      ? "kept: cluster identity unknown"
      : !nb.tags.includes(idTag)
      ? "kept: no identity tag of this cluster"
      : !this.#o.cleanup
      ? "kept: --cleanup-orphaned-nodebalancers is off"
      : !seenBefore
      ? "kept: waiting for a second check"
      : "deleting";
    const { id, label, ipv4, hostname, tags } = nb;
    return { id, label, ipv4, hostname, tags: [...tags], owned, fate };
  }

  async #delete(deps: OrphanDeps, orphan: OrphanedNodeBalancer, writes: WriteContext): Promise<void> {
    const object = `nodebalancer ${orphan.id}`;
    const changes = [{ field: "label", old: orphan.label, new: null }, {
      field: "tags",
      old: orphan.tags,
      new: null,
    }];
    // Its ownership tag names a Service that is gone: the firewall made for that Service goes with it.
    const tag = orphan.tags.find((t) => isOwnedByCluster([t], this.#o.clusterName)) ?? "";
    const applied = await writes.apply({
      api: "linode",
      action: { action: "delete-orphaned-nodebalancer", object, changes },
      send: async () => {
        if (tag === "") return false;
        await releaseManaged(deps, orphan.id, tag);
        try {
          await deps.nodeBalancers.delete(orphan.id);
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
        return true;
      },
      record: (deleted) => {
        if (deleted) deps.cache.forget(orphan.id);
      },
    });
    if (!applied.sent || !applied.answer) return;
    this.#last = this.#last.filter((o) => o.id !== orphan.id);
    deps.log.info("deleted orphaned NodeBalancer {id} ({label}): no Service is tied to it", {
      id: orphan.id,
      label: orphan.label,
    });
  }
}
