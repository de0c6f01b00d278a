/**
 * The read stage of a Service's sync: what the Service shows and what it already has, before anything is
 * decided. Which Services are ours (a LoadBalancer of no other `loadBalancerClass`, or one holding our
 * finalizer), and which of their fields a sync depends on (`syncFields`); the few settings its deletion needs
 * (`lifecycleOf`); the owner its NodeBalancer must have; the NodeBalancer it already has (`findNodeBalancer`,
 * `currentOf`); and the `status.loadBalancer` that NodeBalancer gives it.
 *
 * Finding the NodeBalancer a Service already has goes by the rules that tie one to it, in order: the
 * `nodebalancer-id` annotation; this CCM's ownership tag; else, as the Go CCM does, the NodeBalancer at the
 * Service's status IP, or at its status hostname. Nothing else ties a NodeBalancer to a Service: nothing
 * else is ever adopted, changed or deleted. The annotation is the one rule a Service author controls, so a
 * NodeBalancer without ownership tags is taken through it only when nothing shows it serves someone else
 * (`inUseEvidence`: backends that are not this cluster's Nodes, another Service pointing at it), unless the
 * Service's own status already names it (the switch from the Go CCM) or `--nodebalancer-id-adopts-any` says
 * adopt anything, as the Go CCM. Two NodeBalancers carrying the Service's ownership tag are taken only with
 * proof of which is its own (the status names it, or this process created it).
 *
 * "Not found" is only said on data listed during this leadership term: every NodeBalancer this process
 * creates is written into the cache, so a listing from this term knows them all, and one from before (or a
 * failed refresh) could miss one made by the other replica. That is what keeps a Service whose status was
 * lost from getting a second NodeBalancer.
 */
import type { V1LoadBalancerIngress, V1Node, V1Service } from "@kubernetes/client-node";
import type { NodeBalancerCache } from "../../cache/nodebalancers.ts";
import type { NodeBalancerSummary } from "../../cache/types.ts";
import { isNotFound } from "../../linode/errors.ts";
import { InvalidInputError } from "../loop/runtime.ts";
import { AnnotationReader, readNodeBalancerId } from "./annotations/table.ts";
import { InvalidServiceError, type ServiceDefaults } from "./annotations/spec.ts";
import type { CurrentNodeBalancer } from "./nodebalancer/diff.ts";
import type { NodeBalancerWrites } from "./nodebalancer/writes.ts";
import {
  type ClusterIdentity,
  foreignBackendsOf,
  isAdoptable,
  nodeAddressesOf,
  type OwnershipContext,
  ownershipOf,
  ownershipTag,
  uidPrefixOf,
  whyInUse,
  whyNotAdoptable,
} from "./ownership.ts";

// ---------------------------------------------------------------------------------------------------------
// Which Services are ours, and what their deletion needs.

/** The finalizer that keeps a Service until its NodeBalancer is gone (upstream's name). */
export const LB_FINALIZER = "service.kubernetes.io/load-balancer-cleanup";

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

/** The settings that decide what happens to a NodeBalancer when its Service goes. */
export interface ServiceLifecycle {
  readonly preserve: boolean;
  readonly nodeBalancerId: number | null;
  readonly retainReservedIpv4: boolean;
}

/**
 * `preserve`, `nodebalancer-id` and `retain-reserved-ipv4` alone, so a Service with some other bad annotation
 * can still go. A bad `preserve` or `retain-reserved-ipv4` throws (the Go CCM reads false and deletes; here
 * guessing could delete what was to be kept); a `nodebalancer-id` of 0 or not a number is ignored, as the Go
 * CCM ignores it (the NodeBalancer is found by its ownership tag or status).
 */
export function lifecycleOf(svc: V1Service): ServiceLifecycle {
  const reader = new AnnotationReader(svc.metadata?.annotations);
  const lifecycle = {
    preserve: reader.bool("preserve") ?? false,
    nodeBalancerId: readNodeBalancerId(reader),
    retainReservedIpv4: reader.bool("retain-reserved-ipv4") ?? true,
  };
  if (reader.errors.length) throw new InvalidServiceError(reader.errors);
  return lifecycle;
}

/**
 * The Service fields a sync depends on; other changes enqueue nothing and leave a plan as it was. The
 * ingress is among them so that a lost or edited status is restored at once.
 */
export function syncFields(svc: V1Service): string {
  const m = svc.metadata ?? {};
  const ingress = svc.status?.loadBalancer?.ingress;
  return JSON.stringify([
    m.uid,
    m.annotations,
    m.finalizers,
    m.deletionTimestamp !== undefined,
    svc.spec,
    ingress,
  ]);
}

/** The fields upstream's `portEqualForLB` compares, per port in order. */
function lbPorts(svc: V1Service): string {
  return JSON.stringify((svc.spec?.ports ?? []).map((p) => [
    p.name ?? "",
    p.protocol ?? "",
    p.port,
    p.nodePort ?? 0,
    p.targetPort ?? null,
    p.appProtocol ?? null,
  ]));
}

/** What upstream's `needsUpdate` compares when both old and new want a load balancer. */
function lbFields(svc: V1Service): string {
  const spec = svc.spec ?? {};
  return JSON.stringify([
    spec.loadBalancerSourceRanges ?? null,
    lbPorts(svc),
    spec.sessionAffinity ?? "",
    spec.sessionAffinityConfig ?? null,
    spec.loadBalancerIP ?? "",
    spec.externalIPs ?? [],
    svc.metadata?.annotations ?? {},
    svc.metadata?.uid ?? "",
    spec.externalTrafficPolicy ?? "",
    spec.healthCheckNodePort ?? 0,
    (spec.ipFamilies ?? []).length,
  ]);
}

/**
 * True when upstream's service controller syncs the Service on this event (its informer handlers with
 * `needsUpdate` and `needsCleanup`, k8s.io/cloud-provider v0.35.4): an added Service that wants a load
 * balancer or needs cleanup; an update that changes what the load balancer is made of (type, ports, source
 * ranges, annotations, ...), or of a Service that needs cleanup. This CCM's own finalizer and status writes
 * are not such a change. Pure.
 */
export function upstreamSyncs(old: V1Service | undefined, svc: V1Service): boolean {
  if (needsCleanup(svc)) return true;
  if (!old) return wantsLoadBalancer(svc);
  const wantedBefore = wantsLoadBalancer(old);
  const wants = wantsLoadBalancer(svc);
  if (!wantedBefore && !wants) return false;
  return wantedBefore !== wants || lbFields(old) !== lbFields(svc);
}

// ---------------------------------------------------------------------------------------------------------
// Its owner.

/** What naming and judging a Service's owner reads. */
interface OwnerDeps {
  defaults: ServiceDefaults;
  /** The cluster identity: a NodeBalancer of another cluster is never this Service's. */
  identity: Pick<ClusterIdentity, "tag">;
  /** Every Service, to tell a NodeBalancer of a live Service from one left behind. */
  services: { list(): readonly V1Service[] };
  /** The Nodes, whose addresses tell this cluster's backends from others'. */
  nodes: { list(): readonly V1Node[] };
}

/** The tag that marks the Service's NodeBalancer and managed firewall as its own. */
export function ownershipTagOf(deps: Pick<OwnerDeps, "defaults">, svc: V1Service): string {
  return ownershipTag(deps.defaults.clusterName, svc.metadata?.uid ?? "");
}

/** What judging a NodeBalancer's owner needs for `svc`; throws while the cluster identity is unknown. */
export async function ownerContextOf(
  deps: OwnerDeps,
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

/** The rules that tie a NodeBalancer to `svc`, and what judging a take reads; throws while the identity is unknown. */
export async function findRulesOf(
  deps: OwnerDeps,
  svc: V1Service,
  nodeBalancerId: number | null,
): Promise<FindRules> {
  return {
    nodeBalancerId: nodeBalancerId ?? undefined,
    ownershipTag: ownershipTagOf(deps, svc),
    owner: await ownerContextOf(deps, svc),
    byId: {
      adoptsAny: deps.defaults.services.nodeBalancerIdAdoptsAny,
      nodes: () => deps.nodes.list(),
      services: () => deps.services.list(),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Its NodeBalancer.

/** Which rule tied the NodeBalancer to the Service. */
export type FoundVia = "annotation" | "ownership-tag" | "status-ip" | "status-hostname";

/** A Service's NodeBalancer and the rule that found it. */
export interface FoundNodeBalancer {
  readonly nb: NodeBalancerSummary;
  readonly via: FoundVia;
}

/**
 * What finding reads: the cached listing, a direct GET for `nodebalancer-id`, the backends of an untagged one
 * it names, and which NodeBalancers this process created.
 */
export interface FinderDeps {
  cache: Pick<NodeBalancerCache, "list" | "peek" | "record" | "details" | "createdHere">;
  nodeBalancers: Pick<NodeBalancerWrites, "get">;
}

/** What judging an untagged NodeBalancer named by `nodebalancer-id` reads. */
export interface ByIdContext {
  /** `--nodebalancer-id-adopts-any`: adopt any untagged one, as the Go CCM does. */
  readonly adoptsAny: boolean;
  nodes(): readonly V1Node[];
  services(): readonly V1Service[];
}

/** The rules that tie a NodeBalancer to a Service (`findRulesOf`). */
export interface FindRules {
  readonly nodeBalancerId?: number;
  readonly ownershipTag: string;
  readonly owner: OwnershipContext;
  readonly byId: ByIdContext;
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
  rules: FindRules,
  options: FindOptions,
): Promise<FoundNodeBalancer | undefined> {
  if (rules.nodeBalancerId !== undefined) {
    const found = checkOwner(
      { nb: await byAnnotation(deps, rules.nodeBalancerId), via: "annotation" },
      rules.owner,
    );
    const why = whyInUse(found.nb.id, await inUseEvidence(deps, svc, found.nb, rules));
    if (why) throw new NodeBalancerNotOwnedError(found.nb.id, why);
    return found;
  }
  const snapshot = await deps.cache.list({ maxAgeMs: options.maxAgeMs() });
  const claimants = snapshot.data.filter((nb) => nb.tags.includes(rules.ownershipTag));
  // A foreign identity tag beside our ownership tag (a 64-bit UID prefix shared across clusters): not ours.
  const owned = claimants.filter((nb) => ownershipOf(nb.tags, rules.owner).kind === "this-service");
  if (owned.length) return { nb: provenClaimant(deps, svc, owned, rules.ownershipTag), via: "ownership-tag" };
  // One claiming this Service and another owner: nobody's, and no second NodeBalancer is made beside it.
  const contested = claimants.find((nb) => ownershipOf(nb.tags, rules.owner).kind === "contested");
  if (contested) checkOwner({ nb: contested, via: "ownership-tag" }, rules.owner);
  const found = findByStatus(svc, snapshot.data);
  if (found) return checkOwner(found, rules.owner);
  if (snapshot.stale || snapshot.ageMs > options.maxAgeMs()) {
    throw new NodeBalancersUnknownError(
      "Cannot tell whether the Service has a NodeBalancer: the listing is stale",
    );
  }
  return undefined;
}

/**
 * The one of several NodeBalancers carrying the Service's ownership tag that is provably its own: the one its
 * status names, else the only one this process created. Without proof none is taken (a tag can be copied onto
 * another NodeBalancer; the oldest id proves nothing): `NodeBalancerNotOwnedError` naming them.
 */
function provenClaimant(
  deps: FinderDeps,
  svc: V1Service,
  owned: readonly NodeBalancerSummary[],
  tag: string,
): NodeBalancerSummary {
  const [only] = owned;
  if (only && owned.length === 1) return only;
  const byStatus = findByStatus(svc, owned)?.nb;
  if (byStatus) return byStatus;
  const createdHere = owned.filter((nb) => deps.cache.createdHere(nb.id));
  const [mine] = createdHere;
  if (mine && createdHere.length === 1) return mine;
  const ids = owned.map((nb) => nb.id).sort((a, b) => a - b);
  throw new NodeBalancerNotOwnedError(
    ids[0] ?? 0,
    `NodeBalancers ${
      ids.join(", ")
    } all carry this Service's ownership tag ${tag}, and none is proven its own ` +
      "(named by its status, or created by this CCM process): none is adopted, changed or deleted " +
      "(delete the wrong one, or remove its ownership tag by hand)",
  );
}

/** Services other than `svc` served by this CCM whose annotation or status points at `nb`: `ns/name (how)`. */
export function otherPointersTo(
  nb: NodeBalancerSummary,
  services: readonly V1Service[],
  svc: V1Service,
): string[] {
  const self = svc.metadata?.uid;
  return services.flatMap((other) => {
    if (other.metadata?.uid === self || !(wantsLoadBalancer(other) || hasFinalizer(other))) return [];
    const reader = new AnnotationReader(other.metadata?.annotations);
    const how = readNodeBalancerId(reader) === nb.id
      ? "its nodebalancer-id"
      : findByStatus(other, [nb])
      ? "its status"
      : undefined;
    return how ? [`${other.metadata?.namespace ?? ""}/${other.metadata?.name ?? ""} (${how})`] : [];
  });
}

/**
 * What shows that a NodeBalancer named by `nodebalancer-id` and without this cluster's ownership tags serves
 * someone else (none when it has them, or with `--nodebalancer-id-adopts-any`): another Service of this
 * cluster pointing at it; for one without any ownership tag, backends at addresses none of this cluster's
 * Nodes has, unless the Service's own status names it (a Go CCM Service after the switch: the status rule
 * would adopt it anyway, and a Service author cannot write the status).
 */
async function inUseEvidence(
  deps: FinderDeps,
  svc: V1Service,
  nb: NodeBalancerSummary,
  rules: FindRules,
): Promise<{ foreignBackends: string[]; otherServices: string[] }> {
  const kind = ownershipOf(nb.tags, rules.owner).kind;
  if (rules.byId.adoptsAny || (kind !== "untagged" && kind !== "released")) {
    return { foreignBackends: [], otherServices: [] };
  }
  const otherServices = otherPointersTo(nb, rules.byId.services(), svc);
  if (kind !== "untagged" || findByStatus(svc, [nb])) return { foreignBackends: [], otherServices };
  const addresses = nodeAddressesOf(rules.byId.nodes());
  return {
    foreignBackends: foreignBackendsOf(await deps.cache.details.configs(nb.id), addresses),
    otherServices,
  };
}

/** The found NodeBalancer when this Service may take it; else `NodeBalancerNotOwnedError`. */
function checkOwner(found: FoundNodeBalancer, owner: OwnershipContext): FoundNodeBalancer {
  const ownership = ownershipOf(found.nb.tags, owner);
  if (isAdoptable(ownership)) return found;
  throw new NodeBalancerNotOwnedError(found.nb.id, whyNotAdoptable(found.nb.id, ownership));
}

/** The NodeBalancer as the diff reads it: itself and its configs with their nodes, from the detail cache. */
export async function currentOf(
  deps: { cache: Pick<NodeBalancerCache, "details"> },
  nb: NodeBalancerSummary,
): Promise<CurrentNodeBalancer> {
  const configs = await deps.cache.details.configs(nb.id);
  return {
    nodeBalancer: { ...nb, client_conn_throttle: nb.client_conn_throttle ?? 0 },
    configs,
    nodes: new Map(configs.map((c) => [c.id, [...c.nodes]])),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Its status.

/** Which addresses to report. */
export interface IngressOptions {
  /** Only the hostname (`hostname-only-ingress`, `LINODE_HOSTNAME_ONLY_INGRESS`). */
  hostnameOnlyIngress: boolean;
  /** IPv6 as a second entry (`enable-ipv6-ingress`, `--enable-ipv6-for-loadbalancers`). */
  ipv6Ingress: boolean;
}

/** The ingress list for `nb`: hostname only; IPv4 (and IPv6) each with the hostname. */
export function ingressFor(nb: NodeBalancerSummary, options: IngressOptions): V1LoadBalancerIngress[] {
  const hostname = nb.hostname ?? undefined;
  if (options.hostnameOnlyIngress && hostname) return [{ hostname }];
  const v4: V1LoadBalancerIngress = hostname ? { ip: nb.ipv4, hostname } : { ip: nb.ipv4 };
  if (options.ipv6Ingress && nb.ipv6) {
    const v6: V1LoadBalancerIngress = hostname ? { ip: nb.ipv6, hostname } : { ip: nb.ipv6 };
    return [v4, v6];
  }
  return [v4];
}

function comparable(ingress: readonly V1LoadBalancerIngress[]): string {
  return JSON.stringify(ingress.map((i) => [i.ip ?? "", i.hostname ?? ""]));
}

/** True when the Service already reports exactly these addresses (then no status write is made). */
export function hasIngress(svc: V1Service, ingress: readonly V1LoadBalancerIngress[]): boolean {
  return comparable(svc.status?.loadBalancer?.ingress ?? []) === comparable(ingress);
}
