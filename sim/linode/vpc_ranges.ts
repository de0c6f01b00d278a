/**
 * The rules for ranges routed to a VPC interface: `ip_ranges` of a config profile interface and
 * `vpc.ipv4.ranges` of a Linode interface. Sources: the API's OpenAPI spec (techdocs, 2025), field
 * descriptions of `put-linode-config-interface` and `put-linode-interface`, and linodego's recorded
 * `TestInstance_ConfigInterface_Update` (a /32 inside the subnet, next to the interface's address).
 */
import { ApiError, fieldError } from "./http.ts";
import {
  type Cidr,
  cidrsOverlap,
  cidrWithin,
  formatCidr,
  holdsReservedAddress,
  isPrivateCidr,
  parseCidr,
  sizeOf,
} from "./ip.ts";
import type { SubnetInfo, VpcStore } from "./store_vpcs.ts";

/** The interface whose ranges are being set. */
export interface RangeTarget {
  subnetId: number;
  interfaceId: number;
  /**
   * `linode`: "If specified as CIDR notation, it must belong to the VPC subnet" and may be a size only
   * (`/28`). `legacy_config`: "A range can't include any addresses that are assigned to an active Linode or
   * another VPC subnet", which allows a range outside the interface's own subnet.
   */
  generation: "legacy_config" | "linode";
}

const INVALID = "is not a valid IPv4 range in CIDR notation, e.g. 10.192.0.0/24";

/** Why `cidr` may not be routed to the target, or undefined when it may. */
function problemOf(vpcs: VpcStore, target: RangeTarget, own: SubnetInfo, cidr: Cidr): string | undefined {
  const text = formatCidr(cidr);
  // The docs name no rule for ranges outside RFC 1918; VPC subnets must be private, and so are the ranges
  // every documented example uses, so the sim refuses public ones.
  if (!isPrivateCidr(cidr)) return `${text} is not a private (RFC 1918) range`;
  if (target.generation === "linode" && !cidrWithin(own.cidr, cidr)) {
    return `${text} is not within the interface's subnet ${formatCidr(own.cidr)}`;
  }
  const other = vpcs.subnetsOf(own.vpcId).find((s) => s.id !== own.id && cidrsOverlap(s.cidr, cidr));
  if (other) return `${text} overlaps subnet ${other.label} (${formatCidr(other.cidr)}) of this VPC`;
  // Documented for Linode interfaces (and for `ipv4.vpc`); the docs leave it open for legacy ranges, where
  // the sim applies it too: the network address and the gateway cannot be routed to one interface.
  if (cidrsOverlap(own.cidr, cidr) && holdsReservedAddress(own.cidr, cidr)) {
    return `${text} includes one of the first two or last two addresses of subnet ${formatCidr(own.cidr)}`;
  }
  // The docs say "assigned to an active Linode"; the sim refuses any assigned address, active or not.
  const assigned = vpcs.assignedIn(own.vpcId, cidr);
  if (assigned !== undefined) return `${text} includes ${assigned}, an address assigned in this VPC`;
  for (const m of vpcs.membersOf(own.vpcId)) {
    if (m.interfaceId === target.interfaceId) continue;
    const hit = m.ranges().find((r) => {
      const c = vpcs.cidrOf(r);
      return c !== undefined && cidrsOverlap(c, cidr);
    });
    if (hit !== undefined) return `${text} overlaps ${hit}, already routed to linode ${m.linodeId}`;
  }
  return undefined;
}

/** Parses one requested entry: a CIDR, or (Linode interfaces only) a size such as "/28". */
function parseEntry(value: unknown, target: RangeTarget, field: string): Cidr | number {
  if (typeof value !== "string") throw fieldError(field, `${JSON.stringify(value)} ${INVALID}`);
  const size = /^\/(\d{1,2})$/.exec(value);
  if (size && target.generation === "linode") return Number(size[1]);
  // The spec's example lists an IPv6 range; the sim's subnets have no IPv6, so none can be routed.
  if (value.includes(":")) throw fieldError(field, `${value} is IPv6; this VPC subnet has no IPv6 range`);
  const cidr = parseCidr(value);
  // The docs leave host bits open (10.0.0.5/24); the sim refuses rather than guess the API's rounding.
  if (!cidr) throw fieldError(field, `${value} ${INVALID}`);
  return cidr;
}

/** The first free aligned block of `prefix` bits in the subnet, avoiding `taken`. */
function freeBlock(vpcs: VpcStore, target: RangeTarget, own: SubnetInfo, prefix: number, taken: Cidr[]) {
  if (prefix < own.cidr.prefix || prefix > 32) return undefined;
  const size = 2 ** (32 - prefix);
  for (let base = own.cidr.base; base < own.cidr.base + sizeOf(own.cidr); base += size) {
    const cidr = { base, prefix };
    if (taken.some((t) => cidrsOverlap(t, cidr))) continue;
    if (problemOf(vpcs, target, own, cidr) === undefined) return cidr;
  }
  return undefined;
}

/**
 * Validates a requested list of ranges (the whole new list, as both PUTs replace it) and returns it as
 * CIDR strings in request order; a violation is a 400 on `fieldOf(i)`. No documented limit on the count.
 */
export function checkRanges(
  vpcs: VpcStore,
  target: RangeTarget,
  values: readonly unknown[],
  fieldOf: (i: number) => string,
): string[] {
  const own = vpcs.subnetInfo(target.subnetId);
  if (!own) throw new ApiError(500, [{ reason: "Interface subnet missing" }]);
  const parsed = values.map((v, i) => parseEntry(v, target, fieldOf(i)));
  const out: (Cidr | undefined)[] = parsed.map(() => undefined);
  // Explicit ranges first, so a size request never takes a block that a later explicit range names.
  parsed.forEach((p, i) => {
    if (typeof p === "number") return;
    const problem = problemOf(vpcs, target, own, p);
    if (problem !== undefined) throw fieldError(fieldOf(i), problem);
    const dup = out.findIndex((o) => o !== undefined && cidrsOverlap(o, p));
    if (dup >= 0) throw fieldError(fieldOf(i), `${formatCidr(p)} overlaps ${fieldOf(dup)}`);
    out[i] = p;
  });
  parsed.forEach((p, i) => {
    if (typeof p !== "number") return;
    const block = freeBlock(vpcs, target, own, p, out.filter((o) => o !== undefined));
    if (!block) throw fieldError(fieldOf(i), `No free /${p} range is left in subnet ${formatCidr(own.cidr)}`);
    out[i] = block;
  });
  return out.map((c) => formatCidr(c as Cidr));
}
