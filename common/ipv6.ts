/**
 * IPv6 arithmetic on 128-bit `bigint`s: parsing, RFC 5952 text (what Go's `net.IP.String()` prints, so CIDRs
 * compare as text with what the Go CCM wrote), prefixes. Pure; shared by node IPAM and the Linode emulator.
 */

/** An IPv6 CIDR: `base` with the host bits cleared. */
export interface Cidr6 {
  readonly base: bigint;
  readonly prefix: number;
}

const ALL = (1n << 128n) - 1n;

function parseHextets(part: string): number[] | undefined {
  if (part === "") return [];
  const out: number[] = [];
  for (const h of part.split(":")) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(h)) return undefined;
    out.push(parseInt(h, 16));
  }
  return out;
}

/** Parses an IPv6 address (`::` shorthand, no zone, no embedded IPv4); undefined when not one. */
export function parseIpv6(text: string): bigint | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = parseHextets(halves[0] ?? "");
  const tail = halves.length === 2 ? parseHextets(halves[1] ?? "") : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const words = [...head, ...new Array<number>(missing).fill(0), ...tail];
  return words.reduce((acc, w) => (acc << 16n) | BigInt(w), 0n);
}

/** RFC 5952 text: lower case, leading zeros dropped, the longest run of two or more zero hextets as `::`. */
export function formatIpv6(value: bigint): string {
  const words = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = (ws: number[]) => ws.map((w) => w.toString(16)).join(":");
  if (best.at < 0) return hex(words);
  return `${hex(words.slice(0, best.at))}::${hex(words.slice(best.at + best.len))}`;
}

/** The netmask of a prefix length. */
export function mask6(prefix: number): bigint {
  return prefix === 0 ? 0n : (ALL << BigInt(128 - prefix)) & ALL;
}

/** Parses `addr/n` (host bits cleared, as Go's `net.ParseCIDR`); undefined when not an IPv6 CIDR. */
export function parseCidr6(text: string): Cidr6 | undefined {
  const [ip = "", bits = "", ...rest] = text.trim().split("/");
  const value = parseIpv6(ip);
  if (value === undefined || rest.length > 0 || !/^(0|[1-9][0-9]{0,2})$/.test(bits)) return undefined;
  const prefix = Number(bits);
  if (prefix > 128) return undefined;
  return { base: value & mask6(prefix), prefix };
}

/** The address part of `addr/n` as written (host bits kept), or undefined. */
export function cidrAddress6(text: string): bigint | undefined {
  return parseCidr6(text) && parseIpv6(text.trim().split("/")[0] ?? "");
}

/** `base/prefix` in RFC 5952 text. */
export function formatCidr6(c: Cidr6): string {
  return `${formatIpv6(c.base)}/${c.prefix}`;
}

/** True when `inner` lies wholly inside `outer`. */
export function cidr6Within(inner: Cidr6, outer: Cidr6): boolean {
  return inner.prefix >= outer.prefix && (inner.base & mask6(outer.prefix)) === outer.base;
}

/** True when the two blocks share an address. */
export function cidrs6Overlap(a: Cidr6, b: Cidr6): boolean {
  return cidr6Within(a, b) || cidr6Within(b, a);
}

/** The `index`-th block of size `/prefix` inside `outer` (undefined past its end). */
export function nthBlock6(outer: Cidr6, prefix: number, index: bigint): Cidr6 | undefined {
  if (prefix < outer.prefix || index < 0n || index >= 1n << BigInt(prefix - outer.prefix)) return undefined;
  return { base: outer.base | (index << BigInt(128 - prefix)), prefix };
}
