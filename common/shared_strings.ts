/**
 * One copy per value of a string from a small vocabulary. Decoded JSON gives every object its own copy of
 * each string longer than V8 internalises on parse (10 characters): at 5,000 Nodes, `KubeletReady`,
 * `g6-standard-2` or `legacy_config` would be held 5,000 times over. Past `MAX_SHARED` distinct values a
 * string is returned as it is, so a field that turns out not to be a small vocabulary costs nothing more.
 */

/** At most this many distinct strings are shared. */
export const MAX_SHARED = 2048;

const shared = new Map<string, string>();

/** The shared copy of `value` (the first one seen), or `value` itself once the table is full. */
export function share<T extends string | null | undefined>(value: T): T {
  if (typeof value !== "string") return value;
  const found = shared.get(value);
  if (found !== undefined) return found as T;
  if (shared.size < MAX_SHARED) shared.set(value, value);
  return value;
}
