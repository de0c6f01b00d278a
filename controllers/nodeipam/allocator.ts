/**
 * Which IPv4 pod CIDR each Node holds or is about to be given. Built from every Node the informer lists
 * before anything is handed out, so a restart or a new leader never gives out a range a Node already has; a
 * range handed to a Node whose write has not been seen yet stays that Node's (a retried write asks for the
 * same one). Pure: no I/O, no clock.
 */
import type { V1Node } from "@kubernetes/client-node";
import { cidrFamily } from "../route/cidr.ts";
import type { CidrSet, OccupyResult } from "./cidr_set.ts";

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
    const ipv4 = podCidrsOf(node).find((c) => cidrFamily(c) === "ipv4");
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
    for (const c of podCidrsOf(node)) if (cidrFamily(c) === "ipv4") freed += this.#set.release(c, name);
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
