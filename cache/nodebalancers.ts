/**
 * The account's NodeBalancers in our region, for the service controller: listed lazily (no call until a
 * controller asks), at most once per TTL with single-flight, and kept current by write-through so a
 * controller never re-reads what it just wrote. Each NodeBalancer's configs, nodes and firewalls are in
 * `details` (read once, then written through).
 */
import type { Clock } from "../common/clock.ts";
import type { BackoffOptions } from "../common/backoff.ts";
import type { Registry } from "../common/metrics.ts";
import { DEFAULT_INSTANCE_TTL_MS } from "./instances.ts";
import { NodeBalancerDetailCache, type NodeBalancerDetailSource } from "./nodebalancer_details.ts";
import { type GetOptions, TtlCell } from "./ttl_cache.ts";
import type { NodeBalancerSummary, Snapshot } from "./types.ts";

/**
 * Lists NodeBalancers matching an X-Filter (all pages), and reads their details. `LinodeClient.nodeBalancers`
 * implements it.
 */
export interface NodeBalancerSource extends NodeBalancerDetailSource {
  list(filter?: Record<string, unknown>): Promise<readonly NodeBalancerSummary[]>;
}

/** Options of `NodeBalancerCache`. */
export interface NodeBalancerCacheOptions {
  clock: Clock;
  metrics: Registry;
  /** Only NodeBalancers in this region. */
  region?: string;
  /** Refresh interval (default: `LINODE_INSTANCE_CACHE_TTL`, 15 s). */
  ttlMs?: number;
  /** Age after which a NodeBalancer's configs, nodes and firewalls are read again (default 1 h). */
  detailsMaxAgeMs?: number;
  retry?: BackoffOptions;
}

/** Cached NodeBalancers with lookups by id and label. */
export class NodeBalancerCache {
  readonly #cell: TtlCell<readonly NodeBalancerSummary[]>;
  /** Configs with nodes, and attached firewalls, per NodeBalancer. */
  readonly details: NodeBalancerDetailCache;
  /** Ids this process created and has not seen deleted. */
  readonly #createdHere = new Set<number>();

  constructor(source: NodeBalancerSource, options: NodeBalancerCacheOptions) {
    this.details = new NodeBalancerDetailCache(source, options.metrics, {
      clock: options.clock,
      maxAgeMs: options.detailsMaxAgeMs,
    });
    const filter = options.region ? { region: options.region } : undefined;
    this.#cell = new TtlCell({
      name: "nodebalancers",
      ttlMs: options.ttlMs ?? DEFAULT_INSTANCE_TTL_MS,
      clock: options.clock,
      metrics: options.metrics,
      retry: options.retry,
      load: async () => this.#forgetChanged(await source.list(filter)),
      isEmpty: (list) => list.length === 0,
    });
  }

  /** All NodeBalancers, refreshed first when older than the TTL (or `maxAgeMs`). */
  list(options?: GetOptions): Promise<Snapshot<readonly NodeBalancerSummary[]>> {
    return this.#cell.get(options);
  }

  /** One NodeBalancer by id, from data no older than the TTL. */
  async byId(id: number, options?: GetOptions): Promise<NodeBalancerSummary | undefined> {
    return (await this.list(options)).data.find((nb) => nb.id === id);
  }

  /** One NodeBalancer by label (labels are unique per account), from data no older than the TTL. */
  async byLabel(label: string, options?: GetOptions): Promise<NodeBalancerSummary | undefined> {
    return (await this.list(options)).data.find((nb) => nb.label === label);
  }

  /**
   * Forgets the details of NodeBalancers whose `updated` moved since the data held (its own writes are
   * recorded with the time the API answered, so they do not count): someone else changed them, and the next
   * reconcile reads them again instead of trusting details that are only ever written through.
   */
  #forgetChanged(next: readonly NodeBalancerSummary[]): readonly NodeBalancerSummary[] {
    const held = this.#cell.peek()?.data;
    if (!held) return next;
    const before = new Map(held.map((nb) => [nb.id, nb.updated]));
    for (const nb of next) {
      const was = before.get(nb.id);
      if (was !== undefined && nb.updated !== undefined && was !== nb.updated) this.details.forget(nb.id);
    }
    return next;
  }

  /** Write-through after this CCM created or updated a NodeBalancer. */
  record(nodeBalancer: NodeBalancerSummary): void {
    this.#cell.write((list) => [...list.filter((nb) => nb.id !== nodeBalancer.id), nodeBalancer]);
  }

  /**
   * Write-through after this process created a NodeBalancer, also remembered for the life of the process
   * (`createdHere`, kept across leadership terms): proof of which NodeBalancer a Service's is, when a copied
   * ownership tag makes two claim it.
   */
  recordCreated(nodeBalancer: NodeBalancerSummary): void {
    this.record(nodeBalancer);
    this.#createdHere.add(nodeBalancer.id);
  }

  /** True when this process created the NodeBalancer (`recordCreated`) and has not seen it deleted. */
  createdHere(id: number): boolean {
    return this.#createdHere.has(id);
  }

  /** Write-through after this CCM deleted a NodeBalancer (or a GET answered 404); its details go too. */
  forget(id: number): void {
    this.#cell.write((list) => list.filter((nb) => nb.id !== id));
    this.details.forget(id);
    this.#createdHere.delete(id);
  }

  /**
   * At the start of a leadership term: the listing turns stale and every NodeBalancer's details are dropped, so
   * nothing is decided from what this process saw in an earlier term (another leader wrote in between).
   */
  expire(): void {
    this.#cell.expire();
    this.details.clear();
  }

  /** The NodeBalancer as last listed or written, without any refresh. */
  peek(id: number): NodeBalancerSummary | undefined {
    return this.#cell.peek()?.data.find((nb) => nb.id === id);
  }

  /** True when loaded within `maxAgeMs` and the last refresh neither failed nor looked suspicious. */
  isFreshEnough(maxAgeMs: number): boolean {
    return this.#cell.isFreshEnough(maxAgeMs);
  }
}
