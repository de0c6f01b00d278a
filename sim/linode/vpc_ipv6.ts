/**
 * IPv6 on a VPC interface: its /64 range, the SLAAC address the Linode takes in it, and the entries of
 * `GET /vpcs/{id}/ipv6s`. Shapes from the API reference ("List a VPC's IPv6 addresses", the `ipv6` object of
 * config and Linode VPC interfaces) and linodego's `VPCIP`/`VPCIPIPv6Address`.
 */
import { isIPv6 } from "node:net";
import { fieldError } from "./http.ts";
import { macOf } from "./iface_members.ts";
import type { VpcIpEntry } from "./vpc_ips.ts";

/** The `ipv6` object of a VPC interface (config profile interface or Linode interface `vpc` part). */
export interface VpcInterfaceIpv6 {
  is_public: boolean;
  ranges: { range: string }[];
  slaac: { range: string; address: string }[];
}

/** What `world.addInstance` takes for a VPC interface's IPv6: its /64 and whether it is publicly routed. */
export interface AddInstanceVpcIpv6 {
  /** The interface's SLAAC /64, e.g. `2600:3c11:e5b9:1::/64`. */
  range: string;
  isPublic?: boolean;
}

/** What the IPv6 listing needs of a member: its SLAAC range and address, and `is_public`. */
export interface VpcMemberIpv6 {
  range: string;
  address: string;
  isPublic: boolean;
}

function expand(ip: string): number[] | undefined {
  if (!isIPv6(ip) || ip.includes(".")) return undefined;
  const [head = "", tail] = ip.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const zeros = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array(zeros).fill("0"), ...right].map((h) => parseInt(h, 16));
}

function format(hextets: readonly number[]): string {
  // Compresses the longest run of zero hextets, as RFC 5952 (and the API) write addresses.
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && hextets[j] === 0) j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  const hex = hextets.map((h) => h.toString(16));
  if (best.at < 0) return hex.join(":");
  return `${hex.slice(0, best.at).join(":")}::${hex.slice(best.at + best.len).join(":")}`;
}

/**
 * The SLAAC address a Linode takes in `range`: the /64 prefix plus the EUI-64 identifier of the interface's
 * MAC address (what SLAAC derives). Throws a field error unless `range` is an IPv6 /64.
 */
export function slaacAddress(range: string, interfaceId: number, field: string): string {
  const [base = "", prefix] = range.split("/");
  const hextets = expand(base);
  if (!hextets || prefix !== "64") throw fieldError(field, "Must be an IPv6 /64 range");
  const mac = macOf(interfaceId).split(":").map((b) => parseInt(b, 16));
  const [m0 = 0, m1 = 0, m2 = 0, m3 = 0, m4 = 0, m5 = 0] = mac;
  const id = [((m0 ^ 0x02) << 8) | m1, (m2 << 8) | 0xff, (0xfe << 8) | m3, (m4 << 8) | m5];
  return format([...hextets.slice(0, 4), ...id]);
}

/** The normalised /64 of `range` (`2600:3c11:e5b9:1:0::/64` → `2600:3c11:e5b9:1::/64`). */
export function normaliseRange(range: string): string {
  const [base = "", prefix = ""] = range.split("/");
  const hextets = expand(base) ?? [];
  return `${format([...hextets.slice(0, 4), 0, 0, 0, 0])}/${prefix}`;
}

/** The interface's `ipv6` object for a seeded SLAAC range. */
export function interfaceIpv6(
  input: AddInstanceVpcIpv6,
  interfaceId: number,
  field: string,
): VpcInterfaceIpv6 {
  const address = slaacAddress(input.range, interfaceId, `${field}.range`);
  return {
    is_public: input.isPublic ?? false,
    ranges: [],
    slaac: [{ range: normaliseRange(input.range), address }],
  };
}

/** The member's IPv6 as the listing needs it, read from the interface's `ipv6` object. */
export function memberIpv6(ipv6: VpcInterfaceIpv6 | null | undefined): VpcMemberIpv6 | undefined {
  const slaac = ipv6?.slaac[0];
  return ipv6 && slaac ? { range: slaac.range, address: slaac.address, isPublic: ipv6.is_public } : undefined;
}

/**
 * One `GET /vpcs/{id}/ipv6s` entry: IPv4 keys null (the reference example sends `address` and `address_range`
 * null), the SLAAC address under `ipv6_addresses`, the range and `ipv6_is_public`.
 */
export function ipv6Entry(
  base: Omit<VpcIpEntry, "address" | "address_range" | "gateway" | "nat_1_1" | "prefix">,
  v6: VpcMemberIpv6,
): VpcIpEntry {
  return {
    ...base,
    address: null,
    address_range: null,
    gateway: null,
    nat_1_1: null,
    prefix: 64,
    ipv6_range: v6.range,
    ipv6_is_public: v6.isPublic,
    ipv6_addresses: [{ slaac_address: v6.address }],
  };
}
