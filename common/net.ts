/**
 * IP addresses and CIDRs, IPv4 and IPv6, with one set of rules: Go's `net.ParseIP` and `net.ParseCIDR`, which
 * the Go CCM and the apiserver's validation use. An IPv4 address is a dotted quad without leading zeros; an
 * IPv6 address takes `::` shorthand and an embedded IPv4 tail, never a zone; a prefix length is decimal digits
 * (leading zeros allowed, as Go's `dtoi`) up to 32 or 128. Nothing is trimmed: callers trim user text. IPv4
 * values are 32-bit numbers, IPv6 values 128-bit `bigint`s; text output is what Go prints (RFC 5952 for IPv6),
 * so CIDRs compare as text with what the Go CCM wrote. Pure.
 */

/** An address family, as Go's `len(ip)` tells it. */
export type IpFamily = 4 | 6;

/** An IPv4 CIDR: `base` with the host bits cleared. */
export interface Cidr4 {
  readonly base: number;
  readonly prefix: number;
}

/** An IPv6 CIDR: `base` with the host bits cleared. */
export interface Cidr6 {
  readonly base: bigint;
  readonly prefix: number;
}

const ALL6 = (1n << 128n) - 1n;
const OCTET = /^(0|[1-9][0-9]{0,2})$/;

/** The 32-bit value of a dotted-quad IPv4 address (no leading zeros), or undefined when `text` is not one. */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!OCTET.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

/** The dotted quad of a 32-bit value. */
export function formatIpv4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

function parseHextets(part: string): number[] | undefined {
  if (part === "") return [];
  const out: number[] = [];
  for (const h of part.split(":")) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(h)) return undefined;
    out.push(parseInt(h, 16));
  }
  return out;
}

/** The embedded IPv4 tail of an IPv6 text (`::ffff:10.0.0.1`) as two hextets, else the text unchanged. */
function expandIpv4Tail(text: string): string | undefined {
  const colon = text.lastIndexOf(":");
  const tail = text.slice(colon + 1);
  if (!tail.includes(".")) return text;
  const v4 = parseIpv4(tail);
  if (v4 === undefined) return undefined;
  return `${text.slice(0, colon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
}

/** The 128-bit value of an IPv6 address (`::` shorthand, an IPv4 tail, no zone), or undefined. */
export function parseIpv6(text: string): bigint | undefined {
  const expanded = text.includes(":") ? expandIpv4Tail(text) : undefined;
  if (expanded === undefined) return undefined;
  const halves = expanded.split("::");
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

/** The family of an IP address, or undefined when `text` is neither (Go's `net.ParseIP`). */
export function ipFamily(text: string): IpFamily | undefined {
  if (parseIpv4(text) !== undefined) return 4;
  return parseIpv6(text) !== undefined ? 6 : undefined;
}

/** True for an IPv4 or IPv6 address without a zone. */
export function isIpAddress(text: string): boolean {
  return ipFamily(text) !== undefined;
}

/** The netmask of an IPv4 prefix length, as a 32-bit value. */
export function mask4(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** The netmask of an IPv6 prefix length. */
export function mask6(prefix: number): bigint {
  return prefix === 0 ? 0n : (ALL6 << BigInt(128 - prefix)) & ALL6;
}

/** The address and prefix length of `addr/n` (Go's `dtoi`: digits only, leading zeros allowed). */
function splitCidr(text: string, maxBits: number): { ip: string; prefix: number } | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const bits = text.slice(slash + 1);
  if (!/^[0-9]{1,8}$/.test(bits) || Number(bits) > maxBits) return undefined;
  return { ip: text.slice(0, slash), prefix: Number(bits) };
}

/** Parses `a.b.c.d/n` (host bits cleared, as Go's `net.ParseCIDR`); undefined for anything else. */
export function parseCidr4(text: string): Cidr4 | undefined {
  const split = splitCidr(text, 32);
  const n = split && parseIpv4(split.ip);
  if (split === undefined || n === undefined) return undefined;
  return { base: (n & mask4(split.prefix)) >>> 0, prefix: split.prefix };
}

/** Parses `addr/n` (host bits cleared, as Go's `net.ParseCIDR`); undefined when not an IPv6 CIDR. */
export function parseCidr6(text: string): Cidr6 | undefined {
  const split = splitCidr(text, 128);
  const value = split && parseIpv6(split.ip);
  if (split === undefined || value === undefined) return undefined;
  return { base: value & mask6(split.prefix), prefix: split.prefix };
}

/** The family of a CIDR, or undefined when `text` is not one (Go's `net.ParseCIDR`). */
export function cidrFamily(text: string): IpFamily | undefined {
  if (parseCidr4(text)) return 4;
  return parseCidr6(text) ? 6 : undefined;
}

/** The address part of an IPv6 `addr/n` as written (host bits kept), or undefined. */
export function cidrAddress6(text: string): bigint | undefined {
  return parseCidr6(text) && parseIpv6(text.slice(0, text.indexOf("/")));
}

/** `a.b.c.d/n` with the host bits cleared. */
export function formatCidr4(c: Cidr4): string {
  return `${formatIpv4(c.base)}/${c.prefix}`;
}

/** `base/prefix` in RFC 5952 text. */
export function formatCidr6(c: Cidr6): string {
  return `${formatIpv6(c.base)}/${c.prefix}`;
}

/** The canonical text of an IPv4 CIDR (`10.192.1.7/24` → `10.192.1.0/24`), or undefined when not one. */
export function canonicalCidr4(text: string): string | undefined {
  const c = parseCidr4(text);
  return c && formatCidr4(c);
}

/** True when the IPv4 address `ip` (text or value) is inside `cidr`. */
export function cidr4Contains(cidr: Cidr4, ip: string | number): boolean {
  const n = typeof ip === "number" ? ip : parseIpv4(ip);
  return n !== undefined && ((n & mask4(cidr.prefix)) >>> 0) === cidr.base;
}

/** True when `inner` lies wholly inside `outer`. */
export function cidr4Within(inner: Cidr4, outer: Cidr4): boolean {
  return inner.prefix >= outer.prefix && ((inner.base & mask4(outer.prefix)) >>> 0) === outer.base;
}

/** The last address of an IPv4 CIDR, as a value. */
export function lastAddress4(c: Cidr4): number {
  return c.base + 2 ** (32 - c.prefix) - 1;
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

/** `parseCidr4` of a CIDR the code itself names; throws TypeError for one that is not (a programming error). */
export function builtinCidr4(text: string): Cidr4 {
  const parsed = parseCidr4(text);
  if (!parsed) throw new TypeError(`Invalid built-in CIDR ${text}`);
  return parsed;
}

/** RFC 1918's private IPv4 networks. */
const RFC1918: readonly Cidr4[] = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"].map(builtinCidr4);

/** True for an RFC 1918 IPv4 address that is not inside `except` (`LINODE_EXTERNAL_SUBNET`). */
export function isPrivateIpv4(ip: string, except?: Cidr4): boolean {
  const n = parseIpv4(ip);
  if (n === undefined || !RFC1918.some((c) => cidr4Contains(c, n))) return false;
  return !except || !cidr4Contains(except, n);
}
