/**
 * One copy per value of a string from a small vocabulary. Decoded JSON gives every object its own copy of
 * each string longer than V8 internalises on parse (10 characters): `KubeletReady`, `g6-standard-2` or
 * `legacy_config` would be held once per Node (docs/measurements.md, "Shared strings"). Past its bound a table returns a new
 * value as it is, so a field that turns out not to be a small vocabulary costs nothing more.
 */

/** At most this many distinct strings are shared by `share`. */
export const MAX_SHARED = 2048;

/** A bounded table of shared strings. */
export class StringTable {
  readonly #shared = new Map<string, string>();

  constructor(readonly max: number) {}

  /** How many distinct values are shared. */
  get size(): number {
    return this.#shared.size;
  }

  /** The shared copy of `value` (the first one seen), or `value` itself once the table is full. */
  share<T extends string | null | undefined>(value: T): T {
    if (typeof value !== "string") return value;
    const found = this.#shared.get(value);
    if (found !== undefined) return found as T;
    if (this.#shared.size < this.max) this.#shared.set(value, value);
    return value;
  }
}

const table = new StringTable(MAX_SHARED);

/** The process's shared copy of `value` (see `StringTable.share`). */
export function share<T extends string | null | undefined>(value: T): T {
  return table.share(value);
}
