/**
 * A Service going away, or no longer a LoadBalancer: its NodeBalancer (found by the same rules that tie one
 * to it, never another) is deleted with its managed firewall unless `preserve` says keep it; then the status
 * is cleared and the finalizer dropped, as upstream's `EnsureLoadBalancerDeleted` path.
 */
import type { V1Service } from "@kubernetes/client-node";
import { isNotFound } from "../../linode/errors.ts";
import { objectKey } from "../../kube/keys.ts";
import {
  AnnotatedNodeBalancerMissingError,
  findNodeBalancer,
  NodeBalancerNotOwnedError,
} from "./nodebalancer/find.ts";
import { releaseManaged } from "./firewall/reconcile.ts";
import { lifecycleOf } from "./planner.ts";
import {
  LB_FINALIZER,
  note,
  ownerContextOf,
  ownershipTagOf,
  type SyncContext,
  type SyncDeps,
  warnOnce,
} from "./sync.ts";
import { finalizerWrite, statusWrite } from "./plan_actions.ts";
import { nodeBalancerTarget, releaseAction } from "./nodebalancer/writes.ts";

async function findForCleanup(
  deps: SyncDeps,
  svc: V1Service,
  nodeBalancerId: number | null,
  ctx: SyncContext,
) {
  const rules = {
    nodeBalancerId: nodeBalancerId ?? undefined,
    ownershipTag: ownershipTagOf(deps, svc),
    owner: await ownerContextOf(deps, svc),
  };
  try {
    return await findNodeBalancer(deps, svc, rules, ctx);
  } catch (e) {
    // The annotated NodeBalancer is gone already: nothing to delete.
    if (e instanceof AnnotatedNodeBalancerMissingError) return undefined;
    // Not ours to delete: left as it is, and the Service may go (its finalizer is released).
    if (e instanceof NodeBalancerNotOwnedError) {
      warnOnce(deps, svc, "LoadBalancerNotOwned", e.message);
      return undefined;
    }
    throw e;
  }
}

/** The reserved IPv4 of a deleted NodeBalancer, when `retain-reserved-ipv4` is false. */
export interface ReservedIps {
  deleteReservedIpv4(address: string): Promise<void>;
}

async function deleteNodeBalancer(deps: SyncDeps, svc: V1Service, nbId: number): Promise<void> {
  note(deps, svc, "DeletingLoadBalancer", "Deleting load balancer");
  await releaseManaged(deps, nbId, ownershipTagOf(deps, svc));
  try {
    await deps.nodeBalancers.delete(nbId);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  deps.cache.forget(nbId);
  note(deps, svc, "DeletedLoadBalancer", "Deleted load balancer: NodeBalancer {nodeBalancerId}", {
    nodeBalancerId: nbId,
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
  if (found && lifecycle.preserve) {
    note(deps, svc, "PreservedLoadBalancer", "Kept NodeBalancer {nodeBalancerId} (preserve annotation)", {
      nodeBalancerId: found.nb.id,
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
    });
  }
  deps.tls.forget(objectKey(svc));
  deps.notices.forget(objectKey(svc));
  if (!svc.metadata?.deletionTimestamp && (svc.status?.loadBalancer?.ingress ?? []).length) {
    const cleared = await ctx.writes.apply(statusWrite(deps, svc, []));
    if (cleared.sent) svc = cleared.answer;
  }
  const finalizers = (svc.metadata?.finalizers ?? []).filter((f) => f !== LB_FINALIZER);
  await ctx.writes.apply(finalizerWrite(deps, svc, finalizers));
}
