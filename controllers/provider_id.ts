/** Provider IDs of Linode nodes: `linode://<id>`, parsed strictly. */

/** The scheme every Linode providerID starts with. */
export const PROVIDER_ID_PREFIX = "linode://";

/** What a Node's `spec.providerID` says about the Node's owner. */
export type ProviderIdKind = "empty" | "linode" | "foreign" | "invalid";

const STRICT = /^linode:\/\/([1-9][0-9]{0,15})$/;

/** Builds `linode://<id>` for a Linode id. */
export function toProviderId(linodeId: number): string {
  if (!Number.isSafeInteger(linodeId) || linodeId <= 0) throw new RangeError(`Invalid linode id ${linodeId}`);
  return `${PROVIDER_ID_PREFIX}${linodeId}`;
}

/** The Linode id in a strict `linode://<id>` providerID, or undefined for anything else. */
export function parseProviderId(providerID: string | undefined): number | undefined {
  const match = STRICT.exec(providerID ?? "");
  if (!match?.[1]) return undefined;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}

/**
 * Classifies a providerID: `empty` (not set yet), `linode` (ours, valid), `invalid` (ours by prefix but
 * malformed, e.g. `linode://abc`) or `foreign` (another provider's Node, which we never touch).
 */
export function classifyProviderId(providerID: string | undefined): ProviderIdKind {
  if (!providerID) return "empty";
  if (parseProviderId(providerID) !== undefined) return "linode";
  return providerID.startsWith(PROVIDER_ID_PREFIX) ? "invalid" : "foreign";
}
