/**
 * Finding the NodeBalancer a Service already has, by the rules that tie one to it, in order: the
 * `nodebalancer-id` annotation; this CCM's ownership tag; else, as the Go CCM does, the NodeBalancer at the
 * Service's status IP, or at its status hostname. Nothing else ties a NodeBalancer to a Service: nothing
 * else is ever adopted, changed or deleted.
 *
 * "Not found" is only said on data listed during this leadership term: every NodeBalancer this process
 * creates is written into the cache, so a listing from this term knows them all, and one from before (or a
 * failed refresh) could miss one made by the other replica. That is what keeps a Service whose status was
 * lost from getting a second NodeBalancer.
 */
import type { V1Service } from "@kubernetes/client-node";
import type { NodeBalancerCache } from "../../../cache/nodebalancers.ts";
import type { NodeBalancerSummary } from "../../../cache/types.ts";
import { isNotFound } from "../../../linode/errors.ts";
import { InvalidInputError } from "../../loop/runtime.ts";
import { isAdoptable, type OwnershipContext, ownershipOf, whyNotAdoptable } from "../ownership.ts";
import type { NodeBalancerWrites } from "./writes.ts";

/** Which rule tied the NodeBalancer to the Service. */
export type FoundVia = "annotation" | "ownership-tag" | "status-ip" | "status-hostname";

/** A Service's NodeBalancer and the rule that found it. */
export interface FoundNodeBalancer {
  readonly nb: NodeBalancerSummary;
  readonly via: FoundVia;
}

/** What finding reads: the cached listing, and a direct GET for `nodebalancer-id`. */
export interface FinderDeps {
  cache: Pick<NodeBalancerCache, "list" | "peek" | "record">;
  nodeBalancers: Pick<NodeBalancerWrites, "get">;
}

/** How fresh the listing must be: requested within this many ms, asked when needed (the term's age). */
export interface FindOptions {
  maxAgeMs(): number;
}

/** The annotated NodeBalancer does not exist (yet): retried, never replaced by a new one. */
export class AnnotatedNodeBalancerMissingError extends Error {
  override name = "AnnotatedNodeBalancerMissingError";
}

/**
 * The NodeBalancer a rule points at is provably not this Service's to take (another cluster's, another live
 * Service's, or not provably this cluster's): nothing is written to it; a Warning, no retry until a change.
 */
export class NodeBalancerNotOwnedError extends InvalidInputError {
  override name = "NodeBalancerNotOwnedError";
  constructor(readonly nodeBalancerId: number, message: string) {
    super(message);
  }
}

/** The listing could not be refreshed: whether the Service has a NodeBalancer is unknown. */
export class NodeBalancersUnknownError extends Error {
  override name = "NodeBalancersUnknownError";
}

/** The status addresses and hostnames of a Service, in order. */
export function statusIngress(svc: V1Service): { ips: string[]; hostnames: string[] } {
  const ingress = svc.status?.loadBalancer?.ingress ?? [];
  return {
    ips: ingress.flatMap((i) => i.ip ? [i.ip] : []),
    hostnames: ingress.flatMap((i) => i.hostname ? [i.hostname] : []),
  };
}

/** The NodeBalancer at one of the Service's status addresses, else at one of its status hostnames. */
export function findByStatus(
  svc: V1Service,
  list: readonly NodeBalancerSummary[],
): FoundNodeBalancer | undefined {
  const { ips, hostnames } = statusIngress(svc);
  for (const ip of ips) {
    const nb = list.find((n) => n.ipv4 === ip || sameIpv6(n.ipv6, ip));
    if (nb) return { nb, via: "status-ip" };
  }
  for (const hostname of hostnames) {
    const nb = list.find((n) => n.hostname === hostname);
    if (nb) return { nb, via: "status-hostname" };
  }
  return undefined;
}

function sameIpv6(nbIpv6: string | null, ip: string): boolean {
  if (!nbIpv6 || !ip.includes(":")) return false;
  // The listing may carry a prefix length; the status has the bare address.
  return nbIpv6.split("/")[0]?.toLowerCase() === ip.toLowerCase();
}

async function byAnnotation(deps: FinderDeps, id: number): Promise<NodeBalancerSummary> {
  const cached = deps.cache.peek(id);
  if (cached) return cached;
  try {
    const nb = await deps.nodeBalancers.get(id);
    deps.cache.record(nb);
    return nb;
  } catch (e) {
    if (!isNotFound(e)) throw e;
    // The Go CCM waits too: an annotation naming a NodeBalancer says one is coming.
    throw new AnnotatedNodeBalancerMissingError(
      `NodeBalancer ${id} named by the nodebalancer-id annotation does not exist`,
    );
  }
}

/**
 * The Service's NodeBalancer, or undefined when a listing from this term shows none. Throws
 * `NodeBalancersUnknownError` when the listing is stale, and the annotation's error when it names a missing one.
 */
export async function findNodeBalancer(
  deps: FinderDeps,
  svc: V1Service,
  rules: { nodeBalancerId?: number; ownershipTag: string; owner: OwnershipContext },
  options: FindOptions,
): Promise<FoundNodeBalancer | undefined> {
  if (rules.nodeBalancerId !== undefined) {
    return checkOwner({ nb: await byAnnotation(deps, rules.nodeBalancerId), via: "annotation" }, rules.owner);
  }
  const snapshot = await deps.cache.list({ maxAgeMs: options.maxAgeMs() });
  // A foreign identity tag beside our ownership tag (a 64-bit UID prefix shared across clusters): not ours.
  const owned = snapshot.data.filter((nb) =>
    nb.tags.includes(rules.ownershipTag) && ownershipOf(nb.tags, rules.owner).kind === "this-service"
  );
  if (owned.length) {
    // Two would be a leftover of a crash between create and status: the one in the status wins.
    const oldest = owned.reduce((a, b) => a.id <= b.id ? a : b);
    return { nb: findByStatus(svc, owned)?.nb ?? oldest, via: "ownership-tag" };
  }
  const found = findByStatus(svc, snapshot.data);
  if (found) return checkOwner(found, rules.owner);
  if (snapshot.stale || snapshot.ageMs > options.maxAgeMs()) {
    throw new NodeBalancersUnknownError(
      "Cannot tell whether the Service has a NodeBalancer: the listing is stale",
    );
  }
  return undefined;
}

/** The found NodeBalancer when this Service may take it; else `NodeBalancerNotOwnedError`. */
function checkOwner(found: FoundNodeBalancer, owner: OwnershipContext): FoundNodeBalancer {
  const ownership = ownershipOf(found.nb.tags, owner);
  if (isAdoptable(ownership)) return found;
  throw new NodeBalancerNotOwnedError(found.nb.id, whyNotAdoptable(found.nb.id, ownership));
}
