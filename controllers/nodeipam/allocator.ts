/**
 * Node IPAM's pure part: the IPv4 pod CIDRs of `--cluster-cidr` cut into blocks each free or owned by one Node
 * (`CidrSet`, upstream's `cidrset` with owners), which block each Node holds or is about to be given
 * (`NodeAllocator`), and a Node's IPv6 pod CIDR carved from its Linode's VPC interface range as the Go CCM's
 * cloud allocator does (`ipv6PodCidr`). No I/O, no clock.
 */
import type { V1Node } from "@kubernetes/client-node";
import {
  type Cidr4,
  type Cidr6,
  cidr6Within,
  cidrAddress6,
  cidrFamily,
  formatCidr4,
  formatCidr6,
  mask6,
  parseCidr4,
  parseCidr6,
} from "../../common/net.ts";

/** Upstream's limit on the difference between the cluster and node mask sizes (`clusterSubnetMaxDiff`). */
export const MAX_MASK_DIFF = 16;

/** What `occupy` did with a Node's existing pod CIDR. */
export type OccupyResult = "occupied" | "already" | "outside" | "invalid" | { takenBy: string };

/** Cluster CIDR blocks and their owners. */
export class CidrSet {
  readonly cluster: Cidr4;
  readonly nodePrefix: number;
  /** Number of blocks. */
  readonly size: number;
  readonly #owners = new Map<number, string>();
  #next = 0;

  constructor(cluster: Cidr4, nodePrefix: number) {
    if (nodePrefix < cluster.prefix || nodePrefix > 32 || nodePrefix - cluster.prefix > MAX_MASK_DIFF) {
      throw new RangeError(
        `Cannot cut ${formatCidr4(cluster)} into /${nodePrefix} blocks (at most ${MAX_MASK_DIFF} bits apart)`,
      );
    }
    this.cluster = cluster;
    this.nodePrefix = nodePrefix;
    this.size = 2 ** (nodePrefix - cluster.prefix);
  }

  /** Blocks nobody owns. */
  get free(): number {
    return this.size - this.#owners.size;
  }

  /** The block at `index` as text (`10.192.3.0/24`). */
  blockAt(index: number): string {
    return formatCidr4({
      base: (this.cluster.base + index * 2 ** (32 - this.nodePrefix)) >>> 0,
      prefix: this.nodePrefix,
    });
  }

  /** The indices of the blocks `cidr` overlaps, or a reason it overlaps none. */
  #indices(cidr: string): { from: number; to: number } | "outside" | "invalid" {
    const c = parseCidr4(cidr);
    if (!c) return "invalid";
    const start = c.base;
    const end = c.base + 2 ** (32 - c.prefix) - 1;
    const clusterEnd = this.cluster.base + 2 ** (32 - this.cluster.prefix) - 1;
    if (end < this.cluster.base || start > clusterEnd) return "outside";
    const blockSize = 2 ** (32 - this.nodePrefix);
    const from = Math.floor((Math.max(start, this.cluster.base) - this.cluster.base) / blockSize);
    const to = Math.floor((Math.min(end, clusterEnd) - this.cluster.base) / blockSize);
    return { from, to };
  }

  /** Records `owner`'s existing pod CIDR (any size: every block it overlaps). */
  occupy(cidr: string, owner: string): OccupyResult {
    const range = this.#indices(cidr);
    if (typeof range === "string") return range;
    for (let i = range.from; i <= range.to; i++) {
      const held = this.#owners.get(i);
      if (held !== undefined && held !== owner) return { takenBy: held };
    }
    let changed = false;
    for (let i = range.from; i <= range.to; i++) {
      if (!this.#owners.has(i)) changed = true;
      this.#owners.set(i, owner);
    }
    return changed ? "occupied" : "already";
  }

  /** Hands the next free block to `owner`; undefined when the set is full. */
  allocateNext(owner: string): string | undefined {
    for (let n = 0; n < this.size; n++) {
      const i = (this.#next + n) % this.size;
      if (this.#owners.has(i)) continue;
      this.#owners.set(i, owner);
      this.#next = (i + 1) % this.size;
      return this.blockAt(i);
    }
    return undefined;
  }

  /** Frees the blocks of `cidr` that `owner` holds; returns how many. */
  release(cidr: string, owner: string): number {
    const range = this.#indices(cidr);
    if (typeof range === "string") return 0;
    let freed = 0;
    for (let i = range.from; i <= range.to; i++) {
      if (this.#owners.get(i) !== owner) continue;
      this.#owners.delete(i);
      freed++;
    }
    return freed;
  }

  /** Who holds the block `cidr` starts in, if anyone. */
  ownerOf(cidr: string): string | undefined {
    const range = this.#indices(cidr);
    return typeof range === "string" ? undefined : this.#owners.get(range.from);
  }
}

/** A Node's pod CIDRs as written: `spec.podCIDRs`, else `spec.podCIDR`. */
export function podCidrsOf(node: V1Node): string[] {
  const list = node.spec?.podCIDRs ?? [];
  if (list.length > 0) return [...list];
  return node.spec?.podCIDR ? [node.spec.podCIDR] : [];
}

/** What recording a Node's existing pod CIDRs found. */
export interface Recorded {
  readonly node: string;
  readonly ipv4?: string;
  readonly result: OccupyResult | "no-ipv4";
}

/** The cluster's IPv4 pod CIDR allocation. */
export class NodeAllocator {
  readonly #set: CidrSet;
  /** Ranges handed out whose write the informer has not shown yet, by Node name. */
  readonly #pending = new Map<string, string>();

  constructor(set: CidrSet) {
    this.#set = set;
  }

  /** An allocator holding every listed Node's range (call before handing anything out). */
  static fromNodes(
    set: CidrSet,
    nodes: readonly V1Node[],
  ): { allocator: NodeAllocator; recorded: Recorded[] } {
    const allocator = new NodeAllocator(set);
    const recorded = nodes.filter((n) => podCidrsOf(n).length > 0).map((n) => allocator.record(n));
    return { allocator, recorded };
  }

  /** Ranges left to hand out. */
  get free(): number {
    return this.#set.free;
  }

  /**
   * Records a Node that has pod CIDRs: its IPv4 one is taken (never changed). A range handed to it before
   * that differs (someone else wrote first) is freed.
   */
  record(node: V1Node): Recorded {
    const name = node.metadata?.name ?? "";
    const ipv4 = podCidrsOf(node).find((c) => cidrFamily(c) === 4);
    const pending = this.#pending.get(name);
    this.#pending.delete(name);
    // Freed first and taken again below when it is the written range: nothing runs in between.
    if (pending !== undefined) this.#set.release(pending, name);
    if (ipv4 === undefined) return { node: name, result: "no-ipv4" };
    const result = this.#set.occupy(ipv4, name);
    return { node: name, ipv4, result };
  }

  /** The range for a Node without one: the one handed to it before, else the next free; undefined when full. */
  assign(name: string): string | undefined {
    const pending = this.#pending.get(name);
    if (pending !== undefined) return pending;
    const next = this.#set.allocateNext(name);
    if (next !== undefined) this.#pending.set(name, next);
    return next;
  }

  /** Frees what a deleted Node held (its written range and any range handed to it). */
  release(node: V1Node): number {
    const name = node.metadata?.name ?? "";
    let freed = 0;
    const pending = this.#pending.get(name);
    this.#pending.delete(name);
    if (pending !== undefined) freed += this.#set.release(pending, name);
    for (const c of podCidrsOf(node)) if (cidrFamily(c) === 4) freed += this.#set.release(c, name);
    return freed;
  }

  /** Keeps the blocks of `cidr` from being handed out (owner `reason`); a block a Node holds stays its own. */
  reserve(cidr: string, reason: string): OccupyResult {
    return this.#set.occupy(cidr, reason);
  }

  /** Who holds the block `cidr` starts in. */
  ownerOf(cidr: string): string | undefined {
    return this.#set.ownerOf(cidr);
  }
}

/*
 * A Node's IPv6 pod CIDR, carved from the IPv6 range of its Linode's VPC interface as the Go CCM's cloud
 * allocator does: with the default `/112`, the stable sub-prefix `<first 64 bits>:0:c::/112`; with another
 * size, the range's address masked to that size. Pure.
 */
/** The mask size the Go CCM derives its stable sub-prefix for. */
export const STABLE_PREFIX = 112;

/** The pod CIDR, or why there is none. */
export type Ipv6PodCidr = { cidr: string } | { error: string };

/**
 * The IPv6 pod CIDR of a Node whose VPC interface holds `range` (`2600:3c05:0:1001::/64`), of size
 * `/maskSize`. Unlike the Go CCM, a size larger than the range itself is refused: it would route addresses of
 * other Linodes to this Node.
 */
export function ipv6PodCidr(range: string, maskSize: number): Ipv6PodCidr {
  const base = parseCidr6(range);
  const address = cidrAddress6(range);
  if (!base || address === undefined) {
    return { error: `the interface's IPv6 range "${range}" is not an IPv6 CIDR` };
  }
  if (maskSize === STABLE_PREFIX) {
    // Hextets 5..7 (1-based) set to 0, c, 0 inside the range's first 64 bits.
    const pod: Cidr6 = { base: ((address & mask6(64)) | (0xcn << 32n)) & mask6(maskSize), prefix: maskSize };
    if (!cidr6Within(pod, base)) {
      return {
        error: `the stable IPv6 pod CIDR ${formatCidr6(pod)} is outside the interface's range ${range}`,
      };
    }
    return { cidr: formatCidr6(pod) };
  }
  const pod: Cidr6 = { base: address & mask6(maskSize), prefix: maskSize };
  if (!cidr6Within(pod, base)) {
    return { error: `a /${maskSize} pod CIDR is larger than the interface's IPv6 range ${range}` };
  }
  return { cidr: formatCidr6(pod) };
}
