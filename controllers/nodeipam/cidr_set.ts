/**
 * The IPv4 pod CIDRs of `--cluster-cidr` cut into `/--node-cidr-mask-size-ipv4` blocks, each free or owned by
 * one Node (upstream's `cidrset`, with owners: a range two Nodes claim stays with the first, and releasing it
 * for the second frees nothing). Handing out goes round the set from after the last block given, as upstream
 * does, so a range freed by a deleted Node is reused last. Pure: no I/O, no clock.
 */
import { type Cidr4, formatCidr4, parseCidr4 } from "../route/cidr.ts";

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
