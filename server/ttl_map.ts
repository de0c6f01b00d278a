/** A bounded map whose entries expire: the secure port's review caches. */
import type { Clock } from "../common/clock.ts";

/** Upstream's webhook caches hold a few thousand answers; beyond it the oldest entry goes first. */
export const DEFAULT_MAX_ENTRIES = 4096;

/** Keys to values that expire `ttlMs` after they were set (0: not kept at all). */
export class TtlMap<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  readonly #clock: Pick<Clock, "monotonic">;
  readonly #maxEntries: number;

  constructor(clock: Pick<Clock, "monotonic">, maxEntries = DEFAULT_MAX_ENTRIES) {
    this.#clock = clock;
    this.#maxEntries = maxEntries;
  }

  /** The value of `key` while it has not expired, else undefined. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (this.#clock.monotonic() < entry.expiresAt) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Keeps `value` under `key` for `ttlMs`. */
  set(key: string, value: V, ttlMs: number): void {
    this.#entries.delete(key);
    if (ttlMs <= 0) return;
    this.#entries.set(key, { value, expiresAt: this.#clock.monotonic() + ttlMs });
    // Map order is insertion order: the first entries are the oldest.
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(oldest);
    }
  }

  /** Number of entries held (expired ones included until read). */
  get size(): number {
    return this.#entries.size;
  }
}
