/**
 * Who a Service's NodeBalancer belongs to. Names this CCM gives it: its label and the ownership tag that ties
 * it to one Service of one cluster. Both derive from the Service UID, never from the clock, so planning stays
 * pure and a retried create asks for the same label. `ownershipOf` judges a NodeBalancer's tags.
 *
 * The cluster's identity in the Linode account: the UID of its `kube-system` Namespace, which no other cluster
 * shares (unlike `--cluster-name`, which defaults to `kubernetes` in every cluster). It is written on every
 * NodeBalancer this CCM makes or adopts as the tag `ccm-cluster:<32 hex digits>`, and only a NodeBalancer
 * carrying it may be deleted as an orphan. Until it is read, nothing is created and no orphan is deleted.
 * What shows that a NodeBalancer without those tags serves someone else (`whyInUse`: backends no Node of this
 * cluster has) is judged here too. Everything here is pure but `ClusterIdentity`, which reads the Namespace once.
 */
import type { V1Node } from "@kubernetes/client-node";
import type { NodeBalancerConfigState } from "../../cache/types.ts";
import { PRIVATE_IP_ANNOTATION, PUBLIC_IPV6_ANNOTATION } from "../node/addresses.ts";
import { CLUSTER_TAG_PREFIX, OWNERSHIP_TAG_PREFIX, TAG_MAX_CHARS } from "./annotations/table.ts";

/** Hex digits of the Service UID kept in the ownership tag (64 bits). */
const UID_DIGITS = 16;
/** Room left for the cluster name: 50 - prefix - "/" - UID digits. */
const CLUSTER_CHARS = TAG_MAX_CHARS - OWNERSHIP_TAG_PREFIX.length - 1 - UID_DIGITS;

/** The UID's hex digits, lower case (`0f1e2d3c-…` → `0f1e2d3c…`); empty when it has none. */
function uidHex(uid: string): string {
  return uid.toLowerCase().replace(/[^0-9a-f]/g, "");
}

/** 32-bit FNV-1a of a string, as 8 hex digits: a short stable stand-in for a long cluster name. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** The cluster part of the tag: the name when it fits, else its start, `~` and a hash of the whole. */
function clusterPart(clusterName: string): string {
  if (clusterName.length <= CLUSTER_CHARS) return clusterName;
  return `${clusterName.slice(0, CLUSTER_CHARS - 9)}~${fnv1a(clusterName)}`;
}

/**
 * The tag marking a NodeBalancer as this Service's: `ccm-owner:<cluster>/<first 16 hex digits of the UID>`,
 * at most 50 characters (Linode's tag limit). Throws RangeError for a UID without 16 hex digits.
 */
export function ownershipTag(clusterName: string, uid: string): string {
  const hex = uidHex(uid);
  if (hex.length < UID_DIGITS) throw new RangeError(`Invalid Service UID ${JSON.stringify(uid)}`);
  return `${OWNERSHIP_TAG_PREFIX}${clusterPart(clusterName)}/${hex.slice(0, UID_DIGITS)}`;
}

/** What an ownership tag says: the cluster part and the UID digits; undefined for other tags. */
export function parseOwnershipTag(tag: string): { cluster: string; uidPrefix: string } | undefined {
  if (!tag.startsWith(OWNERSHIP_TAG_PREFIX)) return undefined;
  const rest = tag.slice(OWNERSHIP_TAG_PREFIX.length);
  const slash = rest.lastIndexOf("/");
  const uidPrefix = rest.slice(slash + 1);
  if (slash < 1 || !/^[0-9a-f]{16}$/.test(uidPrefix)) return undefined;
  return { cluster: rest.slice(0, slash), uidPrefix };
}

/** True when `tags` hold this Service's ownership tag. */
export function isOwnedBy(tags: readonly string[], clusterName: string, uid: string): boolean {
  const mine = ownershipTag(clusterName, uid);
  return tags.includes(mine);
}

/** True when `tags` hold an ownership tag of this cluster (any Service). */
export function isOwnedByCluster(tags: readonly string[], clusterName: string): boolean {
  const part = clusterPart(clusterName);
  return tags.some((t) => parseOwnershipTag(t)?.cluster === part);
}

/**
 * The label of a new NodeBalancer: `<--nodebalancer-prefix>-<12 hex digits>`, as the Go CCM forms it, with the
 * digits taken from the end of the Service UID instead of the clock (prefix ≤ 19, so ≤ 32 characters).
 */
export function nodeBalancerLabel(prefix: string, uid: string): string {
  const hex = uidHex(uid);
  if (hex.length < 12) throw new RangeError(`Invalid Service UID ${JSON.stringify(uid)}`);
  return `${prefix}-${hex.slice(-12)}`;
}

/**
 * The tags of a Service's NodeBalancer: cluster name (as the Go CCM), flag tags, annotation tags, ownership,
 * and the cluster identity tag (below) when known.
 */
export function nodeBalancerTags(
  clusterName: string,
  flagTags: readonly string[],
  annotationTags: readonly string[],
  uid: string,
  clusterIdTag?: string,
): string[] {
  const all = [
    clusterName,
    ...flagTags,
    ...annotationTags,
    ownershipTag(clusterName, uid),
    clusterIdTag ?? "",
  ];
  return [...new Set(all.filter((t) => t !== ""))];
}

/**
 * The tags by which a NodeBalancer claims two owners: two different identity tags, or two ownership tags;
 * undefined when it claims at most one. Such a NodeBalancer belongs to nobody (`contested`): a tag was forged
 * or copied, and which claim is true cannot be told from the tags.
 */
export function contestedTags(tags: readonly string[]): string[] | undefined {
  const ids = [...new Set(clusterTagsOf(tags))];
  if (ids.length > 1) return ids;
  const owners = [...new Set(tags.filter((t) => t.startsWith(OWNERSHIP_TAG_PREFIX)))];
  return owners.length > 1 ? owners : undefined;
}

/**
 * Whose a NodeBalancer is, as far as its tags prove it:
 * - `contested`: it claims two owners (`contestedTags`): nobody's;
 * - `this-service`: it carries this Service's ownership tag (and no other cluster's identity);
 * - `untagged`: no ownership or identity tag at all, as the Go CCM leaves them: adopted, so the switch works;
 * - `released`: this cluster's identity tag and no live Service's ownership tag (kept with `preserve`);
 * - `foreign-cluster`: another cluster's identity tag, or, without ours, an ownership tag of another cluster name;
 * - `other-service`: a live Service of this cluster owns it;
 * - `ambiguous`: an ownership tag of this cluster name but no identity tag, and no live Service here owns it:
 *   a cluster elsewhere with the same name may (the default name `kubernetes` is everyone's).
 */
export type Ownership =
  | { readonly kind: "this-service" | "untagged" | "released" }
  | { readonly kind: "foreign-cluster" | "other-service" | "ambiguous"; readonly tag: string }
  | { readonly kind: "contested"; readonly tags: readonly string[] };

/** What judging a NodeBalancer's tags needs to know about this cluster and Service. */
export interface OwnershipContext {
  readonly clusterName: string;
  /** This cluster's identity tag. */
  readonly clusterIdTag: string;
  /** The Service asking. */
  readonly serviceUid: string;
  /** True when a Service of this cluster has a UID starting with these 16 hex digits. */
  isLiveService(uidPrefix: string): boolean;
}

/** Judges a NodeBalancer's tags; see `Ownership`. Pure. */
export function ownershipOf(tags: readonly string[], ctx: OwnershipContext): Ownership {
  const contested = contestedTags(tags);
  if (contested) return { kind: "contested", tags: contested };
  const idTags = clusterTagsOf(tags);
  const foreignId = idTags.find((t) => t !== ctx.clusterIdTag);
  if (foreignId) return { kind: "foreign-cluster", tag: foreignId };
  const ours = idTags.length > 0;
  const owners = tags.flatMap((tag) => {
    const parsed = parseOwnershipTag(tag);
    return parsed ? [{ tag, ...parsed }] : [];
  });
  const part = clusterPart(ctx.clusterName);
  // With our identity tag the cluster is proven, whatever name it had when tagged (`--cluster-name` changed).
  const otherName = ours ? undefined : owners.find((o) => o.cluster !== part);
  if (otherName) return { kind: "foreign-cluster", tag: otherName.tag };
  const mine = uidHex(ctx.serviceUid).slice(0, UID_DIGITS);
  if (owners.some((o) => o.uidPrefix === mine)) return { kind: "this-service" };
  const live = owners.find((o) => ctx.isLiveService(o.uidPrefix));
  if (live) return { kind: "other-service", tag: live.tag };
  if (owners.length === 0) return { kind: ours ? "released" : "untagged" };
  return ours ? { kind: "released" } : { kind: "ambiguous", tag: owners[0]?.tag ?? "" };
}

/** True when a Service may adopt, change and delete a NodeBalancer so judged. */
export function isAdoptable(ownership: Ownership): boolean {
  return ownership.kind === "this-service" || ownership.kind === "untagged" || ownership.kind === "released";
}

/** Why a NodeBalancer is left alone, for a Warning Event. */
export function whyNotAdoptable(nbId: number, ownership: Ownership): string {
  switch (ownership.kind) {
    case "foreign-cluster":
      return `NodeBalancer ${nbId} belongs to another cluster (tag ${ownership.tag}): it is neither adopted, changed nor deleted`;
    case "other-service":
      return `NodeBalancer ${nbId} belongs to another Service of this cluster (tag ${ownership.tag}): it is neither adopted, changed nor deleted`;
    case "contested":
      return `NodeBalancer ${nbId} claims two owners (tags ${
        ownership.tags.join(", ")
      }): it belongs to nobody, ` +
        `so it is neither adopted, changed nor deleted (remove the wrong tag by hand)`;
    case "ambiguous":
      return `NodeBalancer ${nbId} carries ownership tag ${ownership.tag} of a cluster with this name but no cluster identity: ` +
        `it may be another cluster's, so it is neither adopted, changed nor deleted (remove that tag by hand to let this Service adopt it)`;
    default:
      return "";
  }
}

/** What shows that an untagged NodeBalancer named by `nodebalancer-id` serves someone else. */
export interface InUseEvidence {
  /** Its backends (`ip:port`) at an address no Node of this cluster has. */
  readonly foreignBackends: readonly string[];
  /** Other Services of this cluster pointing at it: `ns/name (how)`. */
  readonly otherServices: readonly string[];
}

/** Backends named in a Warning at most; the rest are counted. */
const BACKENDS_NAMED = 5;

/**
 * Why an untagged NodeBalancer is not adopted through `nodebalancer-id` (a Service author could otherwise take
 * over any NodeBalancer in the account), or undefined when nothing shows it serves someone else. Pure.
 */
export function whyInUse(nbId: number, evidence: InUseEvidence): string | undefined {
  const { foreignBackends, otherServices } = evidence;
  const reasons: string[] = [];
  if (foreignBackends.length > 0) {
    const named = foreignBackends.slice(0, BACKENDS_NAMED);
    const more = foreignBackends.length - named.length;
    reasons.push(
      `backends at addresses no Node of this cluster has (${named.join(", ")}${
        more > 0 ? ` and ${more} more` : ""
      })`,
    );
  }
  if (otherServices.length > 0) reasons.push(`used by Service ${otherServices.join(", ")}`);
  if (reasons.length === 0) return undefined;
  return `NodeBalancer ${nbId} named by nodebalancer-id has no ownership tag and serves someone else: ` +
    `${reasons.join("; ")}. It is neither adopted, changed nor deleted ` +
    `(--nodebalancer-id-adopts-any adopts it anyway, as the Go CCM does)`;
}

/** The host of a backend address (`ip:port`, `[ip]:port`), lower case. */
function backendHost(address: string): string {
  const bracketed = /^\[([^\]]+)\]:\d+$/.exec(address);
  if (bracketed) return (bracketed[1] ?? "").toLowerCase();
  const colon = address.lastIndexOf(":");
  return (colon > 0 && !address.slice(0, colon).includes(":") ? address.slice(0, colon) : address)
    .toLowerCase();
}

/** Every address of this cluster's Nodes: status addresses and the Linode addresses the node controller annotates. */
export function nodeAddressesOf(nodes: readonly V1Node[]): Set<string> {
  const out = new Set<string>();
  for (const node of nodes) {
    for (const a of node.status?.addresses ?? []) out.add(a.address.toLowerCase());
    const annotations = node.metadata?.annotations ?? {};
    for (const key of [PRIVATE_IP_ANNOTATION, PUBLIC_IPV6_ANNOTATION]) {
      const ip = annotations[key]?.split("/")[0];
      if (ip) out.add(ip.toLowerCase());
    }
  }
  return out;
}

/** The backends (`ip:port`) of `configs` at an address outside `addresses`. Pure. */
export function foreignBackendsOf(
  configs: readonly NodeBalancerConfigState[],
  addresses: ReadonlySet<string>,
): string[] {
  return configs.flatMap((c) => c.nodes.map((n) => n.address)).filter((a) => !addresses.has(backendHost(a)));
}

/** The 16 hex digits of a Service UID kept in ownership tags. */
export function uidPrefixOf(uid: string): string {
  return uidHex(uid).slice(0, UID_DIGITS);
}

// ---------------------------------------------------------------------------------------------------------
// The cluster identity.

/** The Namespace whose UID names the cluster: created with the cluster, never deleted. */
export const IDENTITY_NAMESPACE = "kube-system";

/** The identity could not be read: creating or cleaning up now could mix clusters, so retry. */
export class ClusterIdentityUnknownError extends Error {
  override name = "ClusterIdentityUnknownError";
}

/** The tag naming the cluster whose `kube-system` Namespace has `uid`; throws RangeError for a UID without 32 hex digits. */
export function clusterTag(uid: string): string {
  const hex = uid.toLowerCase().replace(/[^0-9a-f]/g, "");
  if (hex.length !== 32) throw new RangeError(`Invalid Namespace UID ${JSON.stringify(uid)}`);
  return `${CLUSTER_TAG_PREFIX}${hex}`;
}

/** The cluster identity tags among `tags` (normally none or one). */
export function clusterTagsOf(tags: readonly string[]): string[] {
  return tags.filter((t) => t.startsWith(CLUSTER_TAG_PREFIX));
}

/** Reads the `kube-system` Namespace's UID. */
export interface NamespaceUidReader {
  namespaceUid(name: string): Promise<string>;
}

/** The cluster identity, read once per process (a Namespace's UID never changes) and retried until read. */
export class ClusterIdentity {
  readonly #reader: NamespaceUidReader;
  #tag: string | undefined;

  constructor(reader: NamespaceUidReader) {
    this.#reader = reader;
  }

  /** The identity tag when already read, else undefined (no request). */
  known(): string | undefined {
    return this.#tag;
  }

  /** The identity tag; throws `ClusterIdentityUnknownError` while the Namespace cannot be read. */
  async tag(): Promise<string> {
    if (this.#tag) return this.#tag;
    let uid: string;
    try {
      uid = await this.#reader.namespaceUid(IDENTITY_NAMESPACE);
    } catch (e) {
      throw new ClusterIdentityUnknownError(
        `Cannot read the cluster identity (Namespace ${IDENTITY_NAMESPACE}): nothing is created or cleaned up until it is read`,
        { cause: e },
      );
    }
    try {
      this.#tag = clusterTag(uid);
    } catch (e) {
      throw new ClusterIdentityUnknownError(`Namespace ${IDENTITY_NAMESPACE} has no usable UID`, {
        cause: e,
      });
    }
    return this.#tag;
  }
}
