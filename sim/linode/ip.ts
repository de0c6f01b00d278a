/** IPv4 arithmetic for address allocation and CIDR validation. Pure functions. */

/** A parsed IPv4 CIDR block: network base as an unsigned 32-bit number and the prefix length. */
export interface Cidr {
  base: number;
  prefix: number;
}

/** Parses a dotted-quad IPv4 address into an unsigned 32-bit number, or undefined when malformed. */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/** Formats an unsigned 32-bit number as a dotted-quad IPv4 address. */
export function formatIpv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".");
}

/** Parses "a.b.c.d/n" strictly: the address must be the network base, as the Linode API requires. */
export function parseCidr(text: string): Cidr | undefined {
  const match = /^([0-9.]+)\/(\d{1,2})$/.exec(text);
  if (!match) return undefined;
  const ip = parseIpv4(match[1] ?? "");
  const prefix = Number(match[2]);
  if (ip === undefined || prefix > 32) return undefined;
  const base = (ip & maskOf(prefix)) >>> 0;
  return base === ip ? { base, prefix } : undefined;
}

/** The netmask of a prefix length as an unsigned 32-bit number. */
export function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** Number of addresses in a block. */
export function sizeOf(cidr: Cidr): number {
  return 2 ** (32 - cidr.prefix);
}

/** True when the two blocks share any address. */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  const aEnd = a.base + sizeOf(a) - 1;
  const bEnd = b.base + sizeOf(b) - 1;
  return a.base <= bEnd && b.base <= aEnd;
}

/** True when `ip` lies inside `cidr`. */
export function cidrContains(cidr: Cidr, ip: number): boolean {
  return ip >= cidr.base && ip < cidr.base + sizeOf(cidr);
}

const PRIVATE_BLOCKS: readonly Cidr[] = [
  { base: 0x0a000000, prefix: 8 },
  { base: 0xac100000, prefix: 12 },
  { base: 0xc0a80000, prefix: 16 },
];

/**
 * Linode's private network, 192.168.128.0/17: where a Linode's private IPv4 comes from, the only place a
 * non-VPC NodeBalancer backend may be, and a block VPC subnets must not overlap (the VPC reference, v4.208:
 * "The range must not overlap with 192.168.128.0/17").
 */
export const LINODE_PRIVATE_NETWORK: Cidr = { base: 0xc0a88000, prefix: 17 };

/** True when a whole block lies in one RFC 1918 block. */
export function isPrivateCidr(cidr: Cidr): boolean {
  return PRIVATE_BLOCKS.some((block) => cidrWithin(block, cidr));
}

/** True for RFC 1918 addresses. */
export function isPrivateIpv4(text: string): boolean {
  const ip = parseIpv4(text);
  return ip !== undefined && PRIVATE_BLOCKS.some((block) => cidrContains(block, ip));
}

/** Formats a block as "a.b.c.d/n". */
export function formatCidr(cidr: Cidr): string {
  return `${formatIpv4(cidr.base)}/${cidr.prefix}`;
}

/** True when `inner` lies entirely inside `outer`. */
export function cidrWithin(outer: Cidr, inner: Cidr): boolean {
  return inner.prefix >= outer.prefix && cidrContains(outer, inner.base);
}

/** True when `block` holds one of a subnet's first two or last two addresses (network, gateway, ...). */
export function holdsReservedAddress(subnet: Cidr, block: Cidr): boolean {
  const last = subnet.base + sizeOf(subnet) - 1;
  const reserved = [subnet.base, subnet.base + 1, last - 1, last];
  return reserved.some((ip) => cidrContains(block, ip));
}
