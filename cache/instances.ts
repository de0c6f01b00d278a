/** The account's Linodes in our region (and tag), refreshed as one paged listing per TTL. */
import type { Clock } from "../common/clock.ts";
import type { BackoffOptions } from "../common/backoff.ts";
import type { Registry } from "../server/metrics.ts";
import { InstanceIndex, vpcIpv4ByLinode } from "./instance_index.ts";
import { type GetOptions, TtlCell } from "./ttl_cache.ts";
import type { LinodeInstance, Snapshot, VpcIp } from "./types.ts";
import { isNotFound } from "../linode/errors.ts";

/** Lists instances matching an X-Filter, all pages (500 per page). `LinodeClient.instances` implements it. */
export interface InstanceSource {
  list(filter?: Record<string, unknown>): Promise<readonly LinodeInstance[]>;
  /** One Linode; rejects with a `not_found` `LinodeApiError` when it does not exist. */
  get?(linodeId: number): Promise<LinodeInstance>;
}

/** What a targeted read looks for: one Linode by id, or the Linodes labelled so. */
export type InstanceKey = { readonly id: number } | { readonly label: string };

/** The VPC addresses to merge into the index. `VpcIpCache` implements it. */
export interface VpcIpReader {
  get(options?: GetOptions): Promise<Snapshot<readonly VpcIp[]>>;
  peek(): Snapshot<readonly VpcIp[]> | undefined;
  onChange(listener: (previous: readonly VpcIp[] | undefined, next: readonly VpcIp[]) => void): () => void;
  /** Reads one Linode's interfaces and records its VPC entries (see `VpcIpCache.learnLinode`). */
  learnLinode?(linodeId: number): Promise<readonly VpcIp[]>;
}

/** Options of `InstanceCache`. */
export interface InstanceCacheOptions {
  clock: Clock;
  metrics: Registry;
  /** `LINODE_INSTANCE_CACHE_TTL` in ms (default 15 s). */
  ttlMs?: number;
  /** Only Linodes in this region (`--linode-region` / `LINODE_REGION`). */
  region?: string;
  /** Only Linodes carrying this tag (`--linode-tag-filter`). */
  tagFilter?: string;
  /** VPC addresses of the configured VPCs, indexed as InternalIPs. */
  vpcIps?: VpcIpReader;
  retry?: BackoffOptions;
}

/** Options of `InstanceCache.view`. */
export interface ViewOptions extends GetOptions {
  /** Refresh the VPC addresses first when older than this (default: their TTL). */
  vpcMaxAgeMs?: number;
}

/** Default `LINODE_INSTANCE_CACHE_TTL`. */
export const DEFAULT_INSTANCE_TTL_MS = 15_000;

/** Listener of cache changes, with the ids of the Linodes that were added, changed or removed. */
export type InstanceChangeListener = (ids: ReadonlySet<number>) => void;

function fingerprint(i: LinodeInstance): string {
  return JSON.stringify([i.label, i.status, i.type, i.region, i.ipv4, i.ipv6, i.host_uuid ?? null]);
}

function diffInstances(a: readonly LinodeInstance[] | undefined, b: readonly LinodeInstance[]): Set<number> {
  const before = new Map((a ?? []).map((i) => [i.id, fingerprint(i)]));
  const changed = new Set<number>();
  for (const i of b) {
    if (before.get(i.id) !== fingerprint(i)) changed.add(i.id);
    before.delete(i.id);
  }
  for (const id of before.keys()) changed.add(id);
  return changed;
}

function diffVpcIps(a: readonly VpcIp[] | undefined, b: readonly VpcIp[]): Set<number> {
  const before = vpcIpv4ByLinode(a ?? []);
  const after = vpcIpv4ByLinode(b);
  const changed = new Set<number>();
  for (const id of new Set([...before.keys(), ...after.keys()])) {
    if (JSON.stringify(before.get(id) ?? []) !== JSON.stringify(after.get(id) ?? [])) changed.add(id);
  }
  return changed;
}

/** Cached Linodes with lookups by id, label and IP; every loop reads Linodes through it. */
export class InstanceCache {
  readonly #cell: TtlCell<readonly LinodeInstance[]>;
  readonly #vpcIps: VpcIpReader | undefined;
  readonly #listeners = new Set<InstanceChangeListener>();
  readonly #source: InstanceSource;
  readonly #filter: Record<string, unknown>;
  readonly #region: string | undefined;
  readonly #tag: string | undefined;
  #index: { key: string; index: InstanceIndex } | undefined;
  #lastVpc: Snapshot<readonly VpcIp[]> | undefined;
  /** Counts changes of the VPC addresses (not of routed ranges): the index is rebuilt only when they change. */
  #vpcAddressGeneration = 0;

  constructor(source: InstanceSource, options: InstanceCacheOptions) {
    const filter: Record<string, unknown> = {};
    if (options.region) filter.region = options.region;
    if (options.tagFilter) filter.tags = options.tagFilter;
    this.#source = source;
    this.#filter = filter;
    this.#region = options.region;
    this.#tag = options.tagFilter;
    this.#cell = new TtlCell({
      name: "instances",
      ttlMs: options.ttlMs ?? DEFAULT_INSTANCE_TTL_MS,
      clock: options.clock,
      metrics: options.metrics,
      retry: options.retry,
      load: () => source.list(Object.keys(filter).length ? filter : undefined),
      isEmpty: (list) => list.length === 0,
    });
    this.#vpcIps = options.vpcIps;
    this.#cell.onChange((a, b) => this.#emit(diffInstances(a, b)));
    this.#vpcIps?.onChange((a, b) => {
      const changed = diffVpcIps(a, b);
      if (changed.size > 0 || a === undefined) this.#vpcAddressGeneration++;
      this.#emit(changed);
    });
  }

  /**
   * The index, refreshing instances (and VPC IPs) first when older than their TTLs (or the given ages).
   * `ageMs` and `suspicious` are the instance list's (the VPC addresses' age is `vpcAgeMs()`): a miss in a
   * fresh instance list is a real miss whatever the age of the VPC data. `stale` covers both.
   */
  async view(options: ViewOptions = {}): Promise<Snapshot<InstanceIndex>> {
    const vpcOptions = options.vpcMaxAgeMs === undefined ? undefined : { maxAgeMs: options.vpcMaxAgeMs };
    const [instances, vpc] = await Promise.all([
      this.#cell.get({ maxAgeMs: options.maxAgeMs }),
      this.#vpcIps?.get(vpcOptions),
    ]);
    return this.#combine(instances, vpc);
  }

  /** The index as cached, without any refresh (undefined before the first load). */
  peek(): Snapshot<InstanceIndex> | undefined {
    const instances = this.#cell.peek();
    return instances && this.#combine(instances, undefined);
  }

  /** Age of the VPC addresses merged into the index; undefined without configured VPCs or before a load. */
  vpcAgeMs(): number | undefined {
    return this.#vpcIps?.peek()?.ageMs;
  }

  /** Forces a refresh now (single-flight). */
  refresh(): Promise<void> {
    return this.#cell.refresh();
  }

  /**
   * A targeted read of one Linode (by id: `GET /linode/instances/{id}`; by label: a listing filtered to that
   * label, one page) for a Node newer than the cached listing, instead of a listing of every Linode. What
   * it finds (in our region and tag) is recorded in the cache; a 404 is a confirmed absence. Rejects when
   * the read fails.
   */
  async fetch(key: InstanceKey): Promise<readonly LinodeInstance[]> {
    let found: readonly LinodeInstance[];
    if ("id" in key) {
      if (!this.#source.get) return [];
      try {
        found = [await this.#source.get(key.id)];
      } catch (error) {
        if (!isNotFound(error)) throw error;
        this.forgetInstance(key.id);
        return [];
      }
    } else found = await this.#source.list({ ...this.#filter, label: key.label });
    const mine = found.filter((i) =>
      (!this.#region || i.region === this.#region) && (!this.#tag || i.tags.includes(this.#tag))
    );
    for (const i of mine) this.recordInstance(i);
    return mine;
  }

  /** Reads one Linode's VPC interfaces into the merged VPC addresses (nothing without configured VPCs). */
  async learnVpcIps(linodeId: number): Promise<void> {
    await this.#vpcIps?.learnLinode?.(linodeId);
  }

  /** Write-through after this CCM changed or read a Linode, so the next read does not go to the API. */
  recordInstance(instance: LinodeInstance): void {
    this.#cell.write((list) => [...list.filter((i) => i.id !== instance.id), instance]);
  }

  /** Write-through after a confirmed 404: the Linode is gone. */
  forgetInstance(id: number): void {
    this.#cell.write((list) => list.filter((i) => i.id !== id));
  }

  /** Calls `listener` with the changed Linode ids after each refresh or write; returns the unsubscribe. */
  onChange(listener: InstanceChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(ids: ReadonlySet<number>): void {
    if (ids.size === 0) return;
    for (const listener of this.#listeners) listener(ids);
  }

  #combine(
    i: Snapshot<readonly LinodeInstance[]>,
    v: Snapshot<readonly VpcIp[]> | undefined,
  ): Snapshot<InstanceIndex> {
    const vpc = v ?? this.#lastVpc;
    if (v) this.#lastVpc = v;
    const key = `${i.generation}/${vpc ? this.#vpcAddressGeneration : -1}`;
    if (this.#index?.key !== key) {
      this.#index = { key, index: new InstanceIndex(i.data, vpcIpv4ByLinode(vpc?.data ?? [])) };
    }
    return {
      data: this.#index.index,
      ageMs: i.ageMs,
      stale: i.stale || (vpc?.stale ?? false),
      suspicious: i.suspicious,
      generation: i.generation + (vpc?.generation ?? 0),
    };
  }
}
