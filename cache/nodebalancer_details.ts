/**
 * What the NodeBalancer listing does not hold: each NodeBalancer's configs with their backend nodes, and
 * the Cloud Firewalls attached to it. Read once per NodeBalancer (single-flight), then kept current by
 * write-through, so an unchanged Service costs no Linode call however often it is reconciled. The service
 * controller forgets a NodeBalancer's details when a write suggests they drifted (a 404 or 400), and the
 * next read loads them again. Changes made by others that no write reveals (a backend node removed by hand)
 * are found by reading the details again once they are older than the drift period (`DEFAULT_NB_DRIFT_MS`):
 * a read of the details then costs ~3 calls per NodeBalancer per period.
 */
import type { Clock } from "../common/clock.ts";
import type { Counter, Registry } from "../common/metrics.ts";
import type { FirewallState, NodeBalancerConfigState, NodeBalancerNodeState } from "./types.ts";

/** Reads a NodeBalancer's configs, nodes and firewalls. `LinodeClient.nodeBalancers` implements it. */
export interface NodeBalancerDetailSource {
  listConfigs(nodeBalancerId: number): Promise<readonly Omit<NodeBalancerConfigState, "nodes">[]>;
  listConfigNodes(nodeBalancerId: number, configId: number): Promise<readonly NodeBalancerNodeState[]>;
  listFirewalls(nodeBalancerId: number): Promise<readonly FirewallState[]>;
}

/**
 * Default age after which a NodeBalancer's details are read again to find changes made by others: 1 h. A node
 * removed by hand is then put back within this period plus one Service resync, at a few calls per NodeBalancer
 * per period (docs/measurements.md, "NodeBalancer drift period").
 */
export const DEFAULT_NB_DRIFT_MS = 3_600_000;

interface Entry<T> {
  value?: T;
  loading?: Promise<T>;
  /** When the value was read from the API (monotonic ms); write-through keeps it. */
  loadedAt?: number;
}

/** When details expire: the clock and the age limit (no expiry without a clock). */
interface Expiry {
  clock?: Clock;
  maxAgeMs: number;
}

/** One kind of per-NodeBalancer detail, loaded on first read and written through after. */
class DetailMap<T> {
  readonly #entries = new Map<number, Entry<T>>();
  readonly #load: (id: number) => Promise<T>;
  readonly #hits: Counter;
  readonly #misses: Counter;
  readonly #labels: { cache: string };
  readonly #expiry: Expiry;

  constructor(name: string, metrics: Registry, load: (id: number) => Promise<T>, expiry: Expiry) {
    this.#load = load;
    this.#expiry = expiry;
    this.#labels = { cache: name };
    this.#hits = metrics.counter("ccm_cache_hits_total", "Cache reads served without a refresh", ["cache"]);
    this.#misses = metrics.counter("ccm_cache_misses_total", "Cache reads that needed a refresh", ["cache"]);
  }

  get(id: number): Promise<T> {
    const entry = this.#entries.get(id);
    if (entry?.value !== undefined && !this.#expired(entry)) {
      this.#hits.inc(this.#labels);
      return Promise.resolve(entry.value);
    }
    if (entry?.loading) return entry.loading;
    this.#misses.inc(this.#labels);
    const fresh: Entry<T> = {};
    const startedAt = this.#now();
    fresh.loading = this.#load(id).then((value) => {
      // Forgotten or replaced while loading: the caller gets the value, the cache does not keep it.
      if (this.#entries.get(id) === fresh) {
        fresh.value = value;
        fresh.loading = undefined;
        fresh.loadedAt = startedAt;
      }
      return value;
    }, (e: unknown) => {
      if (this.#entries.get(id) === fresh) this.#entries.delete(id);
      throw e;
    });
    this.#entries.set(id, fresh);
    return fresh.loading;
  }

  peek(id: number): T | undefined {
    return this.#entries.get(id)?.value;
  }

  /** Replaces the whole value (a load in flight is superseded): as current as a read. */
  set(id: number, value: T): void {
    this.#entries.set(id, { value, loadedAt: this.#now() });
  }

  /** Changes a loaded value; does nothing before the first load (the next read loads everything). */
  update(id: number, change: (value: T) => T): void {
    const entry = this.#entries.get(id);
    // One part written through says nothing of the rest: the age of the last read stays.
    if (entry?.value !== undefined) {
      this.#entries.set(id, { value: change(entry.value), loadedAt: entry.loadedAt });
    } else if (entry?.loading) this.#entries.delete(id);
  }

  forget(id: number): void {
    this.#entries.delete(id);
  }

  /** Forgets everything (loads in flight are not kept when they finish). */
  clear(): void {
    this.#entries.clear();
  }

  #now(): number {
    return this.#expiry.clock?.monotonic() ?? 0;
  }

  #expired(entry: Entry<T>): boolean {
    if (!this.#expiry.clock || entry.loadedAt === undefined) return false;
    return this.#now() - entry.loadedAt > this.#expiry.maxAgeMs;
  }
}

/** Options of `NodeBalancerDetailCache`. */
export interface NodeBalancerDetailOptions {
  /** Without a clock, details never expire. */
  clock?: Clock;
  /** The drift period (default `DEFAULT_NB_DRIFT_MS`). */
  maxAgeMs?: number;
}

/** Per-NodeBalancer configs (with nodes) and attached firewalls. */
export class NodeBalancerDetailCache {
  readonly #configs: DetailMap<readonly NodeBalancerConfigState[]>;
  readonly #firewalls: DetailMap<readonly FirewallState[]>;
  readonly #expiry: Expiry;
  /** NodeBalancers this CCM created and has not read since: what they were created from, and when. */
  readonly #created = new Map<number, { fingerprint: string; atMs: number }>();

  constructor(source: NodeBalancerDetailSource, metrics: Registry, options: NodeBalancerDetailOptions = {}) {
    const expiry = { clock: options.clock, maxAgeMs: options.maxAgeMs ?? DEFAULT_NB_DRIFT_MS };
    this.#expiry = expiry;
    this.#configs = new DetailMap("nodebalancer_configs", metrics, async (id) => {
      const configs = await source.listConfigs(id);
      return await Promise.all(
        configs.map(async (c) => ({ ...c, nodes: await source.listConfigNodes(id, c.id) })),
      );
    }, expiry);
    this.#firewalls = new DetailMap(
      "nodebalancer_firewalls",
      metrics,
      (id) => source.listFirewalls(id),
      expiry,
    );
  }

  /** The configs of a NodeBalancer, each with its nodes: listed on first read, then from memory. */
  configs(nodeBalancerId: number): Promise<readonly NodeBalancerConfigState[]> {
    return this.#configs.get(nodeBalancerId);
  }

  /** The configs if already loaded. */
  peekConfigs(nodeBalancerId: number): readonly NodeBalancerConfigState[] | undefined {
    return this.#configs.peek(nodeBalancerId);
  }

  /** Write-through of every config at once (a NodeBalancer just created and read back). */
  setConfigs(nodeBalancerId: number, configs: readonly NodeBalancerConfigState[]): void {
    this.#configs.set(nodeBalancerId, configs);
  }

  /** Write-through of one config created, updated or rebuilt by this CCM. */
  recordConfig(nodeBalancerId: number, config: NodeBalancerConfigState): void {
    this.#configs.update(nodeBalancerId, (list) => [...list.filter((c) => c.id !== config.id), config]);
  }

  /** Write-through of a deleted config. */
  forgetConfig(nodeBalancerId: number, configId: number): void {
    this.#configs.update(nodeBalancerId, (list) => list.filter((c) => c.id !== configId));
  }

  /** The firewalls attached to a NodeBalancer: listed on first read, then from memory. */
  firewalls(nodeBalancerId: number): Promise<readonly FirewallState[]> {
    return this.#firewalls.get(nodeBalancerId);
  }

  /** Write-through of the attached firewalls after this CCM attached, detached or changed one. */
  setFirewalls(nodeBalancerId: number, firewalls: readonly FirewallState[]): void {
    this.#firewalls.set(nodeBalancerId, firewalls);
  }

  /** Drops everything: a new leadership term reads each NodeBalancer's details again. */
  clear(): void {
    this.#configs.clear();
    this.#firewalls.clear();
    this.#created.clear();
  }

  /**
   * Records a NodeBalancer this CCM just created in one call from a plan whose `fingerprint` is given: the
   * create answers without config or node ids, so nothing is read back; while the plan stays the same the
   * NodeBalancer is as created and needs no read (`isAsCreated`), and the first different plan reads it.
   */
  recordCreated(nodeBalancerId: number, fingerprint: string): void {
    this.#configs.forget(nodeBalancerId);
    this.#firewalls.forget(nodeBalancerId);
    this.#created.set(nodeBalancerId, { fingerprint, atMs: this.#expiry.clock?.monotonic() ?? 0 });
  }

  /**
   * True while the NodeBalancer is as this CCM created it from a plan with this `fingerprint`, within the
   * drift period (after it, it is read to find changes made by others). A different plan ends it.
   */
  isAsCreated(nodeBalancerId: number, fingerprint: string): boolean {
    const c = this.#created.get(nodeBalancerId);
    if (!c) return false;
    const clock = this.#expiry.clock;
    const fresh = !clock || clock.monotonic() - c.atMs <= this.#expiry.maxAgeMs;
    if (fresh && c.fingerprint === fingerprint) return true;
    this.#created.delete(nodeBalancerId);
    return false;
  }

  /** Drops what is known of a NodeBalancer (deleted, or its state in doubt); the next read lists again. */
  forget(nodeBalancerId: number): void {
    this.#configs.forget(nodeBalancerId);
    this.#firewalls.forget(nodeBalancerId);
    this.#created.delete(nodeBalancerId);
  }
}
