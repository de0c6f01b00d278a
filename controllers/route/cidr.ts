/** CIDR arithmetic of the route controller: which ranges are ours (inside `--cluster-cidr`), in canonical form. */
import { ipv4ToNumber } from "../node/addresses.ts";

/** An IPv4 CIDR as numbers: `base` has the host bits cleared. */
export interface Cidr4 {
  readonly base: number;
  readonly prefix: number;
}

/** What a pod CIDR is to the route controller. */
export type CidrFamily = "ipv4" | "ipv6" | "invalid";

function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** Parses `a.b.c.d/n` (host bits ignored, as Go's `net.ParseCIDR`); undefined for anything else. */
export function parseCidr4(text: string): Cidr4 | undefined {
  const [ip = "", bits = "", ...rest] = text.trim().split("/");
  const n = ipv4ToNumber(ip);
  if (n === undefined || rest.length > 0 || !/^(0|[1-9][0-9]?)$/.test(bits)) return undefined;
  const prefix = Number(bits);
  if (prefix > 32) return undefined;
  return { base: (n & maskOf(prefix)) >>> 0, prefix };
}

/** `a.b.c.d/n` with the host bits cleared. */
export function formatCidr4(c: Cidr4): string {
  const b = c.base;
  return `${b >>> 24}.${(b >>> 16) & 255}.${(b >>> 8) & 255}.${b & 255}/${c.prefix}`;
}

/** The canonical text of an IPv4 CIDR (`10.192.1.7/24` → `10.192.1.0/24`), or undefined when not one. */
export function canonicalCidr4(text: string): string | undefined {
  const c = parseCidr4(text);
  return c && formatCidr4(c);
}

/** True when `inner` lies wholly inside `outer`. */
export function cidrWithin(inner: Cidr4, outer: Cidr4): boolean {
  return inner.prefix >= outer.prefix && ((inner.base & maskOf(outer.prefix)) >>> 0) === outer.base;
}

/** IPv4, IPv6 (any text with a colon and a prefix) or invalid. */
export function cidrFamily(text: string): CidrFamily {
  if (parseCidr4(text)) return "ipv4";
  return /^[0-9a-fA-F:.]*:[0-9a-fA-F:.]*\/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8])$/.test(text.trim())
    ? "ipv6"
    : "invalid";
}

/** The IPv4 CIDRs of `--cluster-cidr` (its IPv6 part needs no routes). */
export function clusterCidrs4(cidrs: readonly string[]): Cidr4[] {
  return cidrs.map(parseCidr4).filter((c): c is Cidr4 => c !== undefined);
}

/** True when the range (text) lies inside one of the cluster CIDRs: only such ranges are ever changed. */
export function isClusterRange(range: string, cluster: readonly Cidr4[]): boolean {
  const c = parseCidr4(range);
  return c !== undefined && cluster.some((outer) => cidrWithin(c, outer));
}

type Parsed = { cidr: Cidr4 | undefined; canonical: string | undefined };

/**
 * The parses of `cidr.ts`, remembered by text. Every route pass plans every Node: at 5,000 Nodes a cold
 * start's passes parsed the same pod CIDRs and ranges millions of times (bench/startup_scaling.ts). One memo
 * lives as long as the controller; a text not read in the last two passes (`endPass`) is forgotten, so the
 * pod CIDRs and ranges of deleted Nodes are not kept (a soak adds and removes Nodes for ever).
 */
export class CidrMemo {
  #current = new Map<string, Parsed>();
  #previous = new Map<string, Parsed>();

  /** `parseCidr4` and `canonicalCidr4` of `text` in one. */
  #get(text: string): Parsed {
    let hit = this.#current.get(text);
    if (!hit) {
      hit = this.#previous.get(text);
      if (!hit) {
        const cidr = parseCidr4(text);
        hit = { cidr, canonical: cidr && formatCidr4(cidr) };
      }
      this.#current.set(text, hit);
    }
    return hit;
  }

  /** Ends a pass: what was not read during it or the pass before is forgotten. */
  endPass(): void {
    this.#previous = this.#current;
    this.#current = new Map();
  }

  /** How many texts are remembered (for tests). */
  get size(): number {
    return new Set([...this.#current.keys(), ...this.#previous.keys()]).size;
  }

  /** `canonicalCidr4(text)`. */
  canonical(text: string): string | undefined {
    return this.#get(text).canonical;
  }

  /** `isClusterRange(text, cluster)`. */
  inCluster(text: string, cluster: readonly Cidr4[]): boolean {
    const c = this.#get(text).cidr;
    return c !== undefined && cluster.some((outer) => cidrWithin(c, outer));
  }

  /** `cidrFamily(text)`. */
  family(text: string): CidrFamily {
    return this.#get(text).cidr ? "ipv4" : cidrFamily(text);
  }
}
