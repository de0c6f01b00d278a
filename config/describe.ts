/** Turns a `Config` into plain data that is safe to print: the one place that knows how secrets show. */
import { Secret } from "./env.ts";
import type { Config } from "./types.ts";

/** The config as a plain object for one startup log line: token `***`, sets as sorted arrays. */
export function describeConfig(config: Config): Record<string, unknown> {
  const json = JSON.stringify(config, (_key, value: unknown) => {
    if (value instanceof Set) return [...value].sort();
    if (value instanceof Secret) return "***";
    return value;
  });
  return JSON.parse(json);
}
