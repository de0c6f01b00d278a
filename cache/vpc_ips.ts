/**
 * Addresses and routed ranges of the configured VPCs (`GET /vpcs/{id}/ips` and `/ipv6s`, paged, per VPC),
 * refreshed once per TTL for every reader (node addresses and routes alike). A listing that fails in any
 * VPC fails the refresh: the last good data stays, marked stale.
 */
import type { Clock } from "../common/clock.ts";
import type { BackoffOptions } from "../common/backoff.ts";
import type { Registry } from "../common/metrics.ts";
import { isNotFound } from "../linode/errors.ts";
import { type GetOptions, sameEntries, TtlCell } from "./ttl_cache.ts";
import { type Snapshot, toVpcIp, type Vpc, type VpcIp } from "./types.ts";
import { DEFAULT_VPC_TTL_MS } from "./vpcs.ts";
import { type LinodeInterfaceSource, readLinodeVpcIps } from "./linode_vpc_ips.ts";

/** Lists one VPC's addresses, all pages. `LinodeClient.vpcs` implements it. */
export interface VpcIpSource {
  listIps(vpcId: number): Promise<readonly VpcIp[]>;
  /** The VPC's IPv6 (SLAAC) entries (`GET /vpcs/{id}/ipv6s`), listed beside the IPv4 ones as the Go CCM does. */
  listIpv6s?(vpcId: number): Promise<readonly VpcIp[]>;
}

/** The resolved VPCs whose addresses are listed. `VpcCache` implements it. */
export interface VpcReader {
  readonly configured: boolean;
  get(options?: GetOptions): Promise<Snapshot<readonly Vpc[]>>;
}

/** Options of `VpcIpCache`. */
export interface VpcIpCacheOptions {
  clock: Clock;
  metrics: Registry;
  /** `LINODE_ROUTES_CACHE_TTL_SECONDS` in ms (default 60 s). */
  ttlMs?: number;
  retry?: BackoffOptions;
  /** Targeted reads of one Linode's interfaces (`learnLinode`); without it, `learnLinode` reads nothing. */
  interfaces?: LinodeInterfaceSource;
}

/** One VPC interface: the VPC it is in, its Linode and its id (config or Linode interface alike). */
export interface VpcInterfaceRef {
  readonly vpcId: number;
  readonly linodeId: number;
  readonly interfaceId: number;
}

/** The routed ranges one VPC interface now holds, as this CCM wrote them. */
export interface RangeRecord {
  readonly target: VpcInterfaceRef;
  readonly ranges: readonly string[];
}

/** True when `ip` is an entry of the record's interface. */
function isOf(record: RangeRecord | undefined, ip: VpcIp): record is RangeRecord {
  return record !== undefined && ip.vpc_id === record.target.vpcId && ip.linode_id === record.target.linodeId;
}

/**
 * Replaces the routed ranges of each recorded VPC interface, keeping its addresses and every other
 * interface's entries, in one walk of the listing (a cold start records thousands of writes; one walk per
 * write made that quadratic). Works for both interface generations: the new entries copy the interface's
 * address entry (`config_id` included, null for a Linode interface). Nothing is recorded for an interface
 * without an address entry (not in this listing). Of two records of one interface the later wins. Pure.
 */
export function withIpRangesOf(ips: readonly VpcIp[], records: Iterable<RangeRecord>): VpcIp[] {
  // By interface id (unique in the account), checked against the VPC and Linode of each entry.
  const byInterface = new Map<number, RangeRecord>();
  for (const r of records) byInterface.set(r.target.interfaceId, r);
  if (byInterface.size === 0) return [...ips];
  const recordOf = (ip: VpcIp) => {
    const record = typeof ip.interface_id === "number" ? byInterface.get(ip.interface_id) : undefined;
    return isOf(record, ip) ? record : undefined;
  };
  const templates = new Map<RangeRecord, VpcIp>();
  for (const ip of ips) {
    if (!ip.address) continue;
    const record = recordOf(ip);
    if (record && !templates.has(record)) templates.set(record, ip);
  }
  // An interface missing from the listing (no address entry) keeps what it has: nothing to attach ranges to.
  if (templates.size === 0) return [...ips];
  // The new ranges follow their interface's address entry, where the API lists them, so a later listing of
  // the same entries compares equal entry by entry (`sameEntries`' cheap path).
  const out: VpcIp[] = [];
  for (const ip of ips) {
    const record = recordOf(ip);
    const recorded = record !== undefined && templates.has(record);
    if (ip.address_range && recorded) continue;
    out.push(ip);
    if (recorded && templates.get(record) === ip) {
      for (const range of record.ranges) {
        out.push({ ...ip, address: null, address_range: range, nat_1_1: null });
      }
    }
  }
  return out;
}

/** Replaces every entry of Linode `linodeId` with `entries` (a targeted read of that Linode). Pure. */
export function withLinodeIps(ips: readonly VpcIp[], linodeId: number, entries: readonly VpcIp[]): VpcIp[] {
  return [...ips.filter((ip) => ip.linode_id !== linodeId), ...entries];
}

async function listAll(source: VpcIpSource, vpcs: Snapshot<readonly Vpc[]>): Promise<VpcIp[]> {
  if (vpcs.stale) throw new Error("Cannot list VPC addresses while the VPC list is stale");
  const lists = await Promise.all(vpcs.data.flatMap((v) => [
    source.listIps(v.id),
    // IPv6 entries carry no IPv4 `address` or `address_range`, so readers of those never see them.
    ...(source.listIpv6s ? [source.listIpv6s(v.id)] : []),
  ]));
  // Only the fields read are kept: a listed entry also carries region, gateway, prefix and subnet mask.
  return lists.flat().map(toVpcIp);
}

/** Cached VPC addresses; the route controller records its `ip_ranges` writes here. */
export class VpcIpCache {
  readonly #cell: TtlCell<readonly VpcIp[]>;
  readonly #vpcs: VpcReader;
  readonly #interfaces: LinodeInterfaceSource | undefined;
  readonly #learning = new Map<number, Promise<readonly VpcIp[]>>();
  /** True while a range write-through is applied: addresses do not change, so their listeners are not told. */
  #rangesOnly = false;
  /** Range writes recorded since the last read: applied in one walk of the listing when it is next read. */
  #unreadRanges: RangeRecord[] = [];

  constructor(source: VpcIpSource, vpcs: VpcReader, options: VpcIpCacheOptions) {
    this.#vpcs = vpcs;
    this.#interfaces = options.interfaces;
    this.#cell = new TtlCell<readonly VpcIp[]>({
      name: "vpc_ips",
      ttlMs: options.ttlMs ?? DEFAULT_VPC_TTL_MS,
      clock: options.clock,
      metrics: options.metrics,
      retry: options.retry,
      // A re-list that finds what is held (the usual drift check) changes nothing downstream, in whatever
      // order it lists the entries (the API's order is not documented; write-through appends ranges).
      same: sameEntries,
      load: async () => {
        if (!vpcs.configured) return [];
        // The flags' VPC names resolve to ids that only change when a VPC is replaced: reuse the resolved
        // list, and resolve again only when one of its VPCs answers 404.
        try {
          return await listAll(source, await vpcs.get({ maxAgeMs: Infinity }));
        } catch (e) {
          if (!isNotFound(e)) throw e;
          return await listAll(source, await vpcs.get({ maxAgeMs: 0 }));
        }
      },
    });
  }

  /** The addresses, refreshed first when older than the TTL. */
  get(options?: GetOptions): Promise<Snapshot<readonly VpcIp[]>> {
    this.#flushRanges();
    return this.#cell.get(options);
  }

  /** Marks the data stale at the start of a leadership term: the next read loads it again. */
  expire(): void {
    this.#flushRanges();
    this.#cell.expire();
  }

  /**
   * The listing for readers of addresses only (the instance index): routed ranges recorded since the last
   * `get` are not applied for them, since they change no address, so reading costs no walk of the listing.
   */
  addresses(options?: GetOptions): Promise<Snapshot<readonly VpcIp[]>> {
    return this.#cell.get(options);
  }

  /** `addresses` without a refresh (undefined before the first load). */
  peekAddresses(): Snapshot<readonly VpcIp[]> | undefined {
    return this.#cell.peek();
  }

  /**
   * Write-through after this CCM replaced the routed ranges of a VPC interface (either generation). Writes
   * between two reads are applied together at the next read, in the order they were recorded, so no reader
   * ever sees the listing without them.
   */
  recordIpRanges(target: VpcInterfaceRef, ranges: readonly string[]): void {
    this.#unreadRanges.push({ target, ranges: [...ranges] });
  }

  #flushRanges(): void {
    if (this.#unreadRanges.length === 0) return;
    const records = this.#unreadRanges;
    this.#unreadRanges = [];
    this.#rangesOnly = true;
    try {
      this.#cell.write((ips) => withIpRangesOf(ips, records));
    } finally {
      this.#rangesOnly = false;
    }
  }

  /**
   * Reads one Linode's interfaces (one call, or two for a Linode without configuration-profile interfaces)
   * and records its entries in the configured VPCs in place of the cached ones: what a new Node needs,
   * without listing the whole VPC. Single-flight per Linode; rejects when the read fails (nothing recorded).
   * Resolves to the Linode's entries.
   */
  learnLinode(linodeId: number): Promise<readonly VpcIp[]> {
    const inflight = this.#learning.get(linodeId);
    if (inflight) return inflight;
    const p = this.#learn(linodeId).finally(() => this.#learning.delete(linodeId));
    this.#learning.set(linodeId, p);
    return p;
  }

  async #learn(linodeId: number): Promise<readonly VpcIp[]> {
    if (!this.#interfaces || !this.#vpcs.configured) return [];
    const vpcs = await this.#vpcs.get({ maxAgeMs: Infinity });
    const entries = await readLinodeVpcIps(this.#interfaces, linodeId, new Set(vpcs.data.map((v) => v.id)));
    this.#flushRanges();
    this.#cell.write((ips) => withLinodeIps(ips, linodeId, entries));
    return entries;
  }

  /**
   * Write-through after the API answered 404 for Linode `linodeId` itself: its interfaces went with it, so
   * its entries are dropped, here and from a listing in flight (the next drift re-list would drop them too).
   */
  forgetLinode(linodeId: number): void {
    this.#flushRanges();
    this.#cell.write((ips) => withLinodeIps(ips, linodeId, []));
  }

  /**
   * Calls `listener` whenever the addresses may have changed (a listing, a targeted read), not on this CCM's
   * own range writes: each write would otherwise make every listener compare the whole listing, once per Node
   * during a cold start (docs/measurements.md, "VPC listing listeners"). Returns the unsubscribe.
   */
  onChange(listener: (previous: readonly VpcIp[] | undefined, next: readonly VpcIp[]) => void): () => void {
    return this.#cell.onChange((previous, next) => {
      if (!this.#rangesOnly) listener(previous, next);
    });
  }
}
