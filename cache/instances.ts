/**
 * The cluster's Linodes, refreshed as one paged listing per TTL. Membership follows the Go CCM: every region
 * (a Node's Linode may be anywhere the account has Linodes), a tag containing `--linode-tag-filter`, and with
 * `--vpc-names`/`--vpc-ids` only Linodes with an address in those VPCs.
 */
import type { Clock } from "../common/clock.ts";
import type { BackoffOptions } from "../common/backoff.ts";
import type { Registry } from "../common/metrics.ts";
import { clusterMembers, hasTagContaining, InstanceIndex, vpcAddressesByLinode } from "./instance_index.ts";
import { type GetOptions, sameEntries, TtlCell } from "./ttl_cache.ts";
import { type LinodeInstance, type Snapshot, toLinodeInstance, type VpcIp } from "./types.ts";
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
  /** The listing for its addresses: routed ranges this CCM wrote since the last read may be missing. */
  addresses(options?: GetOptions): Promise<Snapshot<readonly VpcIp[]>>;
  /** `addresses` without a refresh (undefined before the first load). */
  peekAddresses(): Snapshot<readonly VpcIp[]> | undefined;
  onChange(listener: (previous: readonly VpcIp[] | undefined, next: readonly VpcIp[]) => void): () => void;
  /** Reads one Linode's interfaces and records its VPC entries (see `VpcIpCache.learnLinode`). */
  learnLinode?(linodeId: number): Promise<readonly VpcIp[]>;
  /** Drops one Linode's entries after the API confirmed it gone (see `VpcIpCache.forgetLinode`). */
  forgetLinode?(linodeId: number): void;
}

/** Options of `InstanceCache`. */
export interface InstanceCacheOptions {
  clock: Clock;
  metrics: Registry;
  /** `LINODE_INSTANCE_CACHE_TTL` in ms (default 15 s). */
  ttlMs?: number;
  /** Only Linodes with a tag containing this text (`--linode-tag-filter`). */
  tagFilter?: string;
  /** VPC addresses of the configured VPCs, indexed as InternalIPs; when given, only their Linodes count. */
  vpcIps?: VpcIpReader;
  /**
   * With `--subnet-names`/`--subnet-ids`: the ids of those subnets as last resolved (empty while unknown), so
   * only their addresses count, as the Go CCM's `subnet_id` filter.
   */
  subnetIds?: () => ReadonlySet<number>;
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
  const before = vpcAddressesByLinode(a ?? []);
  const after = vpcAddressesByLinode(b);
  const changed = new Set<number>();
  for (const id of new Set([...before.keys(), ...after.keys()])) {
    if (JSON.stringify(before.get(id) ?? []) !== JSON.stringify(after.get(id) ?? [])) changed.add(id);
  }
  return changed;
}

/**
 * `list` with `instance` in place of the entry with its id, or, when new, before the first entry with a larger
 * id: where a listing (by id) has it, so the next drift re-list compares equal entry by entry. Pure.
 */
export function withInstance(list: readonly LinodeInstance[], instance: LinodeInstance): LinodeInstance[] {
  const at = list.findIndex((i) => i.id === instance.id);
  if (at >= 0) return list.with(at, instance);
  const before = list.findIndex((i) => i.id > instance.id);
  return before < 0 ? [...list, instance] : [...list.slice(0, before), instance, ...list.slice(before)];
}

/** Cached Linodes with lookups by id, label and IP; every loop reads Linodes through it. */
export class InstanceCache {
  readonly #cell: TtlCell<readonly LinodeInstance[]>;
  readonly #vpcIps: VpcIpReader | undefined;
  readonly #listeners = new Set<InstanceChangeListener>();
  readonly #source: InstanceSource;
  readonly #filter: Record<string, unknown> | undefined;
  readonly #tagFilter: string | undefined;
  readonly #subnetIds: (() => ReadonlySet<number>) | undefined;
  #index: { key: string; index: InstanceIndex } | undefined;
  /** Counts changes of the VPC addresses (not of routed ranges): the index is rebuilt only when they change. */
  #vpcAddressGeneration = 0;

  constructor(source: InstanceSource, options: InstanceCacheOptions) {
    // No region filter: the Go CCM lists every region, and a region filter could hide a real member.
    const tagFilter = options.tagFilter;
    const filter = tagFilter ? { tags: { "+contains": tagFilter } } : undefined;
    this.#source = source;
    this.#filter = filter;
    this.#tagFilter = tagFilter;
    this.#subnetIds = options.subnetIds;
    this.#cell = new TtlCell<readonly LinodeInstance[]>({
      name: "instances",
      ttlMs: options.ttlMs ?? DEFAULT_INSTANCE_TTL_MS,
      clock: options.clock,
      metrics: options.metrics,
      retry: options.retry,
      // A re-list that finds what is held (the usual drift check) changes nothing downstream, in whatever
      // order it lists them (a Linode recorded by a targeted read is appended).
      same: sameEntries,
      // Only the fields read are kept: a listed Linode carries ~30 more.
      load: async () => (await source.list(filter)).map(toLinodeInstance),
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
      this.#vpcIps?.addresses(vpcOptions),
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
    return this.#vpcIps?.peekAddresses()?.ageMs;
  }

  /** Marks the data stale at the start of a leadership term: the next read loads it again. */
  expire(): void {
    this.#cell.expire();
  }

  /** Forces a refresh now (single-flight). */
  refresh(): Promise<void> {
    return this.#cell.refresh();
  }

  /**
   * A targeted read of one Linode (by id: `GET /linode/instances/{id}`; by label: a listing filtered to that
   * label and the tag filter, one page) for a Node newer than the cached listing, instead of a listing of every
   * Linode. What it finds with a tag containing the tag filter is recorded in the cache, and with VPCs
   * configured its interfaces are read too (one call), since VPC membership decides whether it counts; the
   * index applies the same membership rules as to the listing. A 404 is a confirmed absence. Rejects when a
   * read fails.
   */
  async fetch(key: InstanceKey): Promise<readonly LinodeInstance[]> {
    const source = this.#source;
    let found: readonly LinodeInstance[];
    if ("id" in key) {
      const get = source.get?.bind(source);
      if (!get) return [];
      // Under the listing's backoff: while the API fails, a new Node's retries add no calls beyond it.
      const one = await this.#cell.guard(() =>
        get(key.id).catch((e) => isNotFound(e) ? undefined : Promise.reject(e))
      );
      if (!one) {
        this.forgetInstance(key.id);
        return [];
      }
      found = [one];
    } else found = await this.#cell.guard(() => source.list({ ...this.#filter, label: key.label }));
    const tagFilter = this.#tagFilter;
    const mine = found.filter((i) => !tagFilter || hasTagContaining(i.tags, tagFilter));
    // Interfaces first: a Linode recorded without its VPC addresses would not count as a member yet.
    for (const i of mine) await this.learnVpcIps(i.id);
    for (const i of mine) this.recordInstance(i);
    return mine;
  }

  /** Reads one Linode's VPC interfaces into the merged VPC addresses (nothing without configured VPCs). */
  async learnVpcIps(linodeId: number): Promise<void> {
    await this.#vpcIps?.learnLinode?.(linodeId);
  }

  /** Write-through after this CCM changed or read a Linode, so the next read does not go to the API. */
  recordInstance(instance: LinodeInstance): void {
    const kept = toLinodeInstance(instance);
    this.#cell.write((list) => withInstance(list, kept));
  }

  /**
   * Write-through after a confirmed 404: the Linode is gone, and its VPC interfaces with it, so nothing is
   * planned for them any more (a route removal from a deleted Node's Linode would only meet the same 404).
   */
  forgetInstance(id: number): void {
    this.#cell.write((list) => list.filter((i) => i.id !== id));
    this.#vpcIps?.forgetLinode?.(id);
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
    // Without a read just made, the addresses as cached now: no copy of an earlier listing is kept.
    const vpc = v ?? this.#vpcIps?.peekAddresses();
    const subnetIds = this.#subnetIds?.();
    const key = `${i.generation}/${vpc ? this.#vpcAddressGeneration : -1}/${[...subnetIds ?? []].join(",")}`;
    if (this.#index?.key !== key) {
      const vpcAddresses = vpcAddressesByLinode(vpc?.data ?? [], subnetIds);
      // Write-through records (a Linode read by id) pass the same rules as the listing. Without VPC data yet
      // (only `peek` before the first load) membership in the VPC is unknown, so nobody is left out for it.
      const vpcMembers = this.#vpcIps && vpc ? new Set(vpcAddresses.keys()) : undefined;
      const members = clusterMembers(i.data, { tagFilter: this.#tagFilter, vpcMembers });
      this.#index = { key, index: new InstanceIndex(members, vpcAddresses) };
    }
    return {
      data: this.#index.index,
      ageMs: i.ageMs,
      stale: i.stale || (vpc?.stale ?? false) || (this.#vpcIps !== undefined && vpc === undefined),
      suspicious: i.suspicious,
      generation: i.generation + (vpc?.generation ?? 0),
    };
  }
}
