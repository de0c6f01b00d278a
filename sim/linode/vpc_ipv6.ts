/**
 * IPv6 in VPCs (limited availability at Linode): a VPC's `ipv6` (one prefix: `/52` by default, or `/48`,
 * `/44`), a subnet's `ipv6` (a `/52`–`/62` of the VPC's prefix: `auto`, a prefix length, or an explicit range
 * in it) and a VPC interface's `ipv6` (`slaac`: a `/64` of its subnet's range with the Linode's SLAAC address
 * in it, `is_public`), which `GET /vpcs/{id}/ipv6s` and `ipv6.vpc` of a Linode's `/ips` list. Rules from the API reference's
 * VPC and interface schemas and the `@linode/validation` schemas that Cloud Manager applies before sending.
 * The docs leave open whether a subnet may hold IPv6 in a VPC without it, and how many ranges a subnet may
 * list: here a subnet needs its VPC's IPv6 and holds at most one range. An explicit VPC prefix must be one
 * the account owns, and the emulated account owns none.
 */
import {
  type Cidr6,
  cidr6Within,
  cidrs6Overlap,
  formatCidr6,
  formatIpv6,
  nthBlock6,
  parseCidr6,
} from "../../common/net.ts";
import { ApiError, fieldError, isRecord } from "./http.ts";
import type { CreateVpcInput } from "./vpc_input.ts";

/** Where VPC prefixes are carved from (a documentation-like range of the emulated region). */
const POOL = parseCidr6("2600:3c05::/32") as Cidr6;
/** The VPC prefix lengths `ipv6[].range` may name. */
const VPC_PREFIXES = [44, 48, 52];
const DEFAULT_VPC_PREFIX = 52;
/** A subnet's range: a /52 to a /62 of its VPC's prefix; `auto` gives a /56. */
const SUBNET_MIN = 52;
const SUBNET_MAX = 62;
const AUTO_SUBNET_PREFIX = 56;
/** A VPC interface's SLAAC range. */
const INTERFACE_PREFIX = 64;

/** A request for an IPv6 block: a prefix length to carve, or an explicit range. */
export type Ipv6Request = { prefix: number } | { cidr: Cidr6 };

/** `ipv6` of `POST /vpcs`: at most one entry; `range` a prefix length of 44, 48 or 52 (default 52). */
export function parseVpcIpv6(raw: unknown): Ipv6Request | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw fieldError("ipv6", "ipv6 must be an array");
  if (raw.length === 0) return undefined;
  if (raw.length > 1) throw fieldError("ipv6", "A VPC may have at most one IPv6 range");
  const entry = raw[0];
  if (!isRecord(entry)) throw fieldError("ipv6[0]", "Must be an object");
  if (entry.allocation_class !== undefined && typeof entry.allocation_class !== "string") {
    throw fieldError("ipv6[0].allocation_class", "allocation_class must be a string");
  }
  const range = entry.range;
  if (range === undefined || range === null || range === "") return { prefix: DEFAULT_VPC_PREFIX };
  if (typeof range !== "string") throw fieldError("ipv6[0].range", "range must be a string");
  const length = /^\/(\d{1,3})$/.exec(range);
  if (length && VPC_PREFIXES.includes(Number(length[1]))) return { prefix: Number(length[1]) };
  if (length || !parseCidr6(range)) {
    throw fieldError("ipv6[0].range", "Must be the prefix length 52, 48, or 44 of the IP, e.g. /52");
  }
  throw fieldError("ipv6[0].range", "Must be an IPv6 prefix owned by this account");
}

/** `subnets[i].ipv6`: at most one entry whose `range` is `auto`, `/52`–`/62`, or a range of that size. */
export function parseSubnetIpv6(raw: unknown, field: string): Ipv6Request | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw fieldError(field, "ipv6 must be an array");
  if (raw.length === 0) return undefined;
  if (raw.length > 1) throw fieldError(field, "A subnet may have at most one IPv6 range");
  const entry = raw[0];
  const range = isRecord(entry) ? entry.range : undefined;
  if (typeof range !== "string" || range === "") throw fieldError(`${field}[0].range`, "range is required");
  if (range === "auto") return { prefix: AUTO_SUBNET_PREFIX };
  const length = /^\/(\d{1,3})$/.exec(range);
  const cidr = length ? undefined : parseCidr6(range);
  const prefix = length ? Number(length[1]) : cidr?.prefix ?? -1;
  if (prefix < SUBNET_MIN || prefix > SUBNET_MAX) {
    throw fieldError(`${field}[0].range`, "Must be the prefix length (52-62) of the IP, e.g. /52");
  }
  return cidr ? { cidr } : { prefix };
}

/** The first free aligned block of `/prefix` inside `outer`, not overlapping `taken`; undefined when none. */
export function carve(outer: Cidr6, prefix: number, taken: readonly Cidr6[]): Cidr6 | undefined {
  const count = 1n << BigInt(prefix - outer.prefix);
  for (let i = 0n; i < count && i < 1_000_000n; i++) {
    const block = nthBlock6(outer, prefix, i);
    if (block && !taken.some((t) => cidrs6Overlap(t, block))) return block;
  }
  return undefined;
}

/** A new VPC's prefix, from the emulator's pool (the first block is left out, as never handed out). */
export function carveVpcPrefix(request: Ipv6Request, taken: readonly Cidr6[]): Cidr6 {
  const prefix = "prefix" in request ? request.prefix : request.cidr.prefix;
  const block = carve(POOL, prefix, [{ base: POOL.base, prefix }, ...taken]);
  if (!block) throw fieldError("ipv6[0].range", "No IPv6 prefixes of this size are available");
  return block;
}

/** A subnet's range inside its VPC's prefix; 400 on the field when it does not fit. */
export function carveSubnetRange(
  vpc: Cidr6 | undefined,
  request: Ipv6Request,
  taken: readonly Cidr6[],
  field: string,
): Cidr6 {
  if (!vpc) throw fieldError(field, "The VPC has no IPv6 range: create it with ipv6 to give subnets IPv6");
  if ("cidr" in request) {
    if (!cidr6Within(request.cidr, vpc)) {
      throw fieldError(`${field}[0].range`, `Must be within the VPC's IPv6 range ${formatCidr6(vpc)}`);
    }
    if (taken.some((t) => cidrs6Overlap(t, request.cidr))) {
      throw fieldError(`${field}[0].range`, "Subnet ranges must not overlap");
    }
    return request.cidr;
  }
  const block = request.prefix >= vpc.prefix ? carve(vpc, request.prefix, taken) : undefined;
  if (!block) throw fieldError(`${field}[0].range`, "No IPv6 range of this size is left in the VPC");
  return block;
}

/**
 * The SLAAC `/64` an interface gets in its subnet's range `subnet`: `wanted` when it lies in it and is not
 * `taken`, else the next free one; a 400 on `field` when none is left. The docs leave open whether a named
 * SLAAC range may be asked for; the emulator takes one inside the subnet's range.
 */
export function pickInterfaceRange(
  subnet: Cidr6,
  taken: readonly Cidr6[],
  field: string,
  wanted?: Cidr6,
): Cidr6 {
  if (wanted) {
    if (!cidr6Within(wanted, subnet) || taken.some((t) => cidrs6Overlap(t, wanted))) {
      throw fieldError(
        `${field}.slaac[0].range`,
        `Range ${formatCidr6(wanted)} is not available in the subnet's IPv6 range ${formatCidr6(subnet)}`,
      );
    }
    return wanted;
  }
  const range = carve(subnet, INTERFACE_PREFIX, taken);
  if (!range) throw new ApiError(400, [{ field, reason: "No IPv6 ranges are available in this subnet" }]);
  return range;
}

/**
 * A new VPC's IPv6 prefix and its subnets' ranges, checked and carved before anything is created; `taken`
 * holds the other VPCs' prefixes.
 */
export function planVpcIpv6(
  input: CreateVpcInput,
  taken: readonly string[],
): { vpc?: Cidr6; subnets: (Cidr6 | undefined)[] } {
  const request = parseVpcIpv6(input.ipv6);
  const requests = (input.subnets ?? []).map((s, i) => parseSubnetIpv6(s.ipv6, `subnets[${i}].ipv6`));
  const vpc = request &&
    carveVpcPrefix(request, taken.map((t) => parseCidr6(t) ?? { base: 0n, prefix: 128 }));
  const subnets: Cidr6[] = [];
  return {
    vpc,
    subnets: requests.map((r, i) => {
      if (!r) return undefined;
      const range = carveSubnetRange(vpc, r, subnets, `subnets[${i}].ipv6`);
      subnets.push(range);
      return range;
    }),
  };
}

/** The `ipv6` part of a VPC interface (either generation), as the API shows it. */
export interface SimVpcIpv6 {
  is_public: boolean;
  slaac: { range: string; address: string }[];
  ranges: { range: string }[];
}

/**
 * What `world.addInstance` takes for a VPC interface's IPv6 (the `ipv6` of the interface request): `false`
 * for none, `true` for the next free SLAAC `/64` of the subnet's range (`slaac: [{range: "auto"}]`), or that `/64` named
 * (`range`) and whether it is publicly routed (`is_public`, default false).
 */
export type AddInstanceVpcIpv6 = boolean | { range?: string; isPublic?: boolean };

/** An interface's IPv6 request, parsed: the `/64` it names (none: the next free one) and `is_public`. */
export interface SlaacRequest {
  cidr?: Cidr6;
  isPublic: boolean;
}

/**
 * Parses an `AddInstanceVpcIpv6`. A named SLAAC range must be a `/64` (the interface schema's SLAAC range
 * size); whether it lies in the subnet's range and is free is the subnet store's check.
 */
export function parseSlaacRequest(input: Exclude<AddInstanceVpcIpv6, false>, field: string): SlaacRequest {
  if (input === true) return { isPublic: false };
  const isPublic = input.isPublic ?? false;
  if (input.range === undefined || input.range === "auto") return { isPublic };
  const cidr = parseCidr6(input.range);
  if (!cidr || cidr.prefix !== INTERFACE_PREFIX) {
    throw fieldError(`${field}.slaac[0].range`, "Must be an IPv6 /64 range, or auto");
  }
  return { cidr, isPublic };
}

/**
 * The SLAAC address a Linode takes in `range`: the `/64` prefix plus the modified EUI-64 identifier of the
 * interface's MAC address (the universal/local bit flipped, `ff:fe` in the middle), as SLAAC derives it.
 */
export function slaacAddress(range: Cidr6, mac: string): string {
  const [m0 = 0, m1 = 0, m2 = 0, m3 = 0, m4 = 0, m5 = 0] = mac.split(":").map((b) => parseInt(b, 16));
  const eui64 = [m0 ^ 0x02, m1, m2, 0xff, 0xfe, m3, m4, m5].reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
  return formatIpv6(range.base | eui64);
}

/** The `ipv6` of an interface with MAC `mac` holding SLAAC range `range`. */
export function vpcIpv6Part(range: Cidr6, mac: string, isPublic: boolean): SimVpcIpv6 {
  return {
    is_public: isPublic,
    slaac: [{ range: formatCidr6(range), address: slaacAddress(range, mac) }],
    ranges: [],
  };
}
