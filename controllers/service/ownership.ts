/**
 * Names this CCM gives a Service's NodeBalancer: its label and the ownership tag that ties it to one
 * Service of one cluster. Both derive from the Service UID, never from the clock, so planning stays pure
 * and a retried create asks for the same label. Pure.
 */

/** Shortest Linode tag (the API's `tags` entries hold 3 to 50 characters). */
export const TAG_MIN_CHARS = 3;
/** Longest Linode tag. */
export const TAG_MAX_CHARS = 50;
/** What every ownership tag starts with. */
export const OWNERSHIP_TAG_PREFIX = "ccm-owner:";
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

/** The tags of a Service's NodeBalancer: cluster name (as the Go CCM), flag tags, annotation tags, ownership. */
export function nodeBalancerTags(
  clusterName: string,
  flagTags: readonly string[],
  annotationTags: readonly string[],
  uid: string,
): string[] {
  const all = [clusterName, ...flagTags, ...annotationTags, ownershipTag(clusterName, uid)];
  return [...new Set(all.filter((t) => t !== ""))];
}
