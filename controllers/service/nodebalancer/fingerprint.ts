/** The fingerprint a NodeBalancer created by this CCM is recorded with (`NodeBalancerDetails.isAsCreated`). */
import { createHash } from "node:crypto";
import type { DesiredNodeBalancer } from "./desired.ts";

/**
 * What a NodeBalancer is created from, as a SHA-256 digest of its text: the same plan later means the
 * NodeBalancer needs no read. The digest, not the text, is kept: the text lists every backend (about 60 KiB
 * per Service at 5,000 Nodes).
 */
export function planFingerprint(desired: DesiredNodeBalancer): string {
  // A TLS key serialises redacted; its certificate (and fingerprint) does not, so a new pair still differs.
  return createHash("sha256").update(JSON.stringify(desired)).digest("base64");
}
