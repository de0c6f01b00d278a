/** One cached collection: refreshed at most once per TTL, single-flight, write-through, stale on failure. */
import type { Clock } from "../common/clock.ts";
import { Backoff, type BackoffOptions } from "../common/backoff.ts";
import type { Counter, Gauge, Registry } from "../common/metrics.ts";
import type { Snapshot } from "./types.ts";

/** How a `TtlCell` loads and judges its data. */
export interface TtlCellOptions<T> {
  /** The `cache` label of the metrics, e.g. `instances`. */
  name: string;
  ttlMs: number;
  clock: Clock;
  metrics: Registry;
  /** Fetches the whole collection (all pages). */
  load: () => Promise<T>;
  /** True when a loaded value is empty, so an empty-after-non-empty result can be flagged. */
  isEmpty?: (data: T) => boolean;
  /** Consecutive empty results needed before an empty list replaces a non-empty one (default 2). */
  confirmEmptyAfter?: number;
  /** Backoff between failed refreshes (default 1 s doubling up to 60 s). */
  retry?: BackoffOptions;
  /**
   * True when a loaded value says nothing new: the cell then keeps the value it holds (and its generation,
   * and tells no listener), so what was computed from it stays valid. Without it every load is a change.
   */
  same?: (held: T, loaded: T) => boolean;
}

/**
 * Deep equality of plain JSON-shaped values (objects, arrays, strings, numbers, booleans, null), without
 * allocating: a re-listed collection is compared entry by entry with the one held.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const k in x) {
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
    keys++;
  }
  for (const _ in y) keys--;
  return keys === 0;
}

/** JSON text of a JSON-shaped value with every object's keys sorted: equal for `sameJson`-equal values. */
function canonicalJson(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "undefined";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const record = value as Record<string, unknown>;
  return `{${
    Object.keys(record).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(",")
  }}`;
}

/**
 * Equality of two lists of JSON-shaped entries in any order (each entry as often in both). Entry by entry
 * first, without allocating; only lists that differ there are counted by canonical entry text. For listings
 * whose order carries no meaning but differs from the cache's write-through order (VPC addresses: the cache
 * appends a write's ranges, the API lists each interface's entries together).
 */
export function sameEntries(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  if (sameJson(a, b)) return true;
  const counts = new Map<string, number>();
  for (const entry of a) {
    const key = canonicalJson(entry);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const entry of b) {
    const key = canonicalJson(entry);
    const left = counts.get(key);
    if (!left) return false;
    counts.set(key, left - 1);
  }
  return true;
}

/** Read options of `TtlCell.get`. */
export interface GetOptions {
  /** Refresh when the data is older than this (default: the TTL). */
  maxAgeMs?: number;
}

/** Listener of data replacements. */
export type CellListener<T> = (previous: T | undefined, next: T) => void;

/** Default backoff between failed refreshes of one cell: whatever reads it, it asks the API no more often. */
export const DEFAULT_REFRESH_RETRY: BackoffOptions = { baseMs: 1000, maxMs: 60_000 };

/** A single-flight TTL cache of one value (usually a list). */
export class TtlCell<T> {
  readonly #o: TtlCellOptions<T>;
  readonly #retry: Backoff;
  readonly #listeners = new Set<CellListener<T>>();
  readonly #refreshes: Counter;
  readonly #hits: Counter;
  readonly #misses: Counter;
  readonly #age: Gauge;
  #data: { value: T } | undefined;
  #loadedAt = 0;
  #stale = false;
  #suspicious = false;
  #emptyStreak = 0;
  #generation = 0;
  /** Moves on with each `expire()`: a load started before it is not trusted. */
  #epoch = 0;
  #nextAttemptAt = 0;
  #lastError: unknown;
  #inflight: Promise<void> | undefined;
  #pendingWrites: ((data: T) => T)[] = [];

  constructor(options: TtlCellOptions<T>) {
    this.#o = options;
    this.#retry = new Backoff(options.retry ?? DEFAULT_REFRESH_RETRY);
    const m = options.metrics;
    this.#refreshes = m.counter("ccm_cache_refreshes_total", "Cache refreshes by result", [
      "cache",
      "result",
    ]);
    this.#hits = m.counter("ccm_cache_hits_total", "Cache reads served without a refresh", ["cache"]);
    this.#misses = m.counter("ccm_cache_misses_total", "Cache reads that needed a refresh", ["cache"]);
    this.#age = m.gauge("ccm_cache_age_seconds", "Age of the cached data", ["cache"]);
  }

  /** The data, refreshed first when older than the TTL (or `maxAgeMs`). Throws only when nothing was ever loaded. */
  async get(options: GetOptions = {}): Promise<Snapshot<T>> {
    const maxAgeMs = options.maxAgeMs ?? this.#o.ttlMs;
    const labels = { cache: this.#o.name };
    const now = this.#o.clock.monotonic();
    const data = this.#data;
    const fresh = data && now - this.#loadedAt <= maxAgeMs && !this.#stale;
    const backingOff = now < this.#nextAttemptAt && !this.#inflight;
    if (data && (fresh || backingOff)) {
      this.#hits.inc(labels);
      return this.#snapshot(data);
    }
    if (backingOff) throw this.#lastError;
    this.#misses.inc(labels);
    await this.refresh();
    if (!this.#data) throw this.#lastError;
    return this.#snapshot(this.#data);
  }

  /** Refreshes now (joining a refresh already in flight). Never throws: failures mark the data stale. */
  refresh(): Promise<void> {
    if (!this.#inflight) {
      const loading: Promise<void> = this.#load().finally(() => {
        if (this.#inflight === loading) this.#inflight = undefined;
      });
      this.#inflight = loading;
    }
    return this.#inflight;
  }

  /**
   * Marks the data stale (a new leadership term must not act on the previous term's view): the next read loads
   * again, and a load already in flight is discarded. Until a load succeeds, reads get the old data flagged
   * `stale`, on which nothing destructive is done.
   */
  expire(): void {
    this.#epoch++;
    this.#inflight = undefined;
    this.#pendingWrites = [];
    this.#stale = true;
    this.#nextAttemptAt = 0;
  }

  /**
   * A read of the same API outside the cell (a targeted read of one object), under the cell's backoff: while
   * refreshes back off after a failure it is refused with the last error and sends nothing, and its own
   * failure backs refreshes off as a failed refresh does, so reads of any kind stay within one backoff. Its
   * result is the caller's; the cached data is not changed.
   */
  async guard<R>(read: () => Promise<R>): Promise<R> {
    if (this.#o.clock.monotonic() < this.#nextAttemptAt) throw this.#lastError;
    try {
      return await read();
    } catch (error) {
      this.#lastError = error;
      this.#nextAttemptAt = this.#o.clock.monotonic() + this.#retry.next();
      throw error;
    }
  }

  /** The current data without any refresh, or undefined before the first load. */
  peek(): Snapshot<T> | undefined {
    return this.#data ? this.#snapshot(this.#data) : undefined;
  }

  /** True when the data was loaded within `maxAgeMs`, and the last refresh neither failed nor looked suspicious. */
  isFreshEnough(maxAgeMs: number): boolean {
    return this.#data !== undefined && !this.#stale && this.#o.clock.monotonic() - this.#loadedAt <= maxAgeMs;
  }

  /** Write-through: applies `update` now and to the result of any refresh already in flight. */
  write(update: (data: T) => T): void {
    if (this.#inflight) this.#pendingWrites.push(update);
    if (this.#data) this.#replace(update(this.#data.value));
  }

  /** Calls `listener` whenever the data is replaced; returns the unsubscribe function. */
  onChange(listener: CellListener<T>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async #load(): Promise<void> {
    const labels = { cache: this.#o.name };
    // Data is as old as the request that fetched it: anything that changed after it was sent may be missing.
    const requestedAt = this.#o.clock.monotonic();
    const epoch = this.#epoch;
    this.#pendingWrites = [];
    let next: T;
    try {
      next = await this.#o.load();
    } catch (e) {
      if (epoch !== this.#epoch) return;
      this.#fail(e);
      this.#refreshes.inc({ ...labels, result: "error" });
      return;
    }
    if (epoch !== this.#epoch) return;
    for (const w of this.#pendingWrites) next = w(next);
    this.#pendingWrites = [];
    if (this.#isSuspicious(next)) {
      this.#suspicious = true;
      this.#fail(new Error(`Refusing an empty ${this.#o.name} list until confirmed`));
      this.#refreshes.inc({ ...labels, result: "suspicious" });
      return;
    }
    this.#loadedAt = requestedAt;
    this.#stale = false;
    this.#suspicious = false;
    this.#nextAttemptAt = 0;
    this.#retry.reset();
    const held = this.#data;
    if (!held || !this.#o.same?.(held.value, next)) this.#replace(next);
    this.#age.set(labels, 0);
    this.#refreshes.inc({ ...labels, result: "success" });
  }

  #isSuspicious(next: T): boolean {
    const isEmpty = this.#o.isEmpty;
    if (!isEmpty || !isEmpty(next)) {
      this.#emptyStreak = 0;
      return false;
    }
    this.#emptyStreak++;
    const hadData = this.#data !== undefined && !isEmpty(this.#data.value);
    return hadData && this.#emptyStreak < (this.#o.confirmEmptyAfter ?? 2);
  }

  #fail(error: unknown): void {
    this.#lastError = error;
    this.#stale = true;
    this.#nextAttemptAt = this.#o.clock.monotonic() + this.#retry.next();
  }

  #replace(next: T): void {
    const previous = this.#data?.value;
    this.#data = { value: next };
    this.#generation++;
    for (const listener of this.#listeners) listener(previous, next);
  }

  #snapshot(data: { value: T }): Snapshot<T> {
    const ageMs = Math.max(0, this.#o.clock.monotonic() - this.#loadedAt);
    this.#age.set({ cache: this.#o.name }, ageMs / 1000);
    return {
      data: data.value,
      ageMs,
      stale: this.#stale,
      suspicious: this.#suspicious,
      generation: this.#generation,
    };
  }
}
