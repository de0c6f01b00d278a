/**
 * The annotations the Go CCM reads leniently, read the same way so a bad value never stops a Service: the
 * value the Go CCM would use applies to a new NodeBalancer, an existing one keeps what it has for the field
 * the value governs (`keep`), and the value is reported (`AnnotationReader.tolerate`: a Warning Event, a
 * `lint` error). Values the Go CCM refuses too stay errors. Pure.
 */
import type { ServiceDefaults } from "./defaults.ts";
import type { NodeBalancerType } from "./spec.ts";
import { type AnnotationReader, parseWholeNumber } from "./values.ts";
import { TAG_MAX_CHARS, TAG_MIN_CHARS } from "../ownership.ts";
import { parseGoBool } from "../../../config/env.ts";
import { BOOL_ACCEPTED } from "./table.ts";

/** The Go CCM's connection throttle default per its README. */
export const DEFAULT_THROTTLE = 20;
const MAX_THROTTLE = 20;

const NB_TYPES: readonly NodeBalancerType[] = ["common", "premium", "premium_40gb"];

/** Why a lenient bool reads as false: the Go CCM's `getServiceBoolAnnotation` does so. */
export const AS_GO_READS_IT = "as the Go CCM reads it";

/** A value and whether an existing NodeBalancer keeps its own instead. */
export interface Lenient<T> {
  readonly value: T;
  readonly keep: boolean;
}

/** `throttle`: the Go CCM clamps a number to 0–20 and reads anything else as 0 (`getConnectionThrottle`). */
export function readThrottle(reader: AnnotationReader): Lenient<number> {
  const raw = reader.raw("throttle");
  if (raw === undefined) return { value: DEFAULT_THROTTLE, keep: false };
  const n = parseWholeNumber(raw);
  if (n !== undefined && n >= 0 && n <= MAX_THROTTLE) return { value: n, keep: false };
  const used = n === undefined ? 0 : Math.min(Math.max(n, 0), MAX_THROTTLE);
  reader.tolerate(
    "throttle",
    raw,
    `${used} on a new NodeBalancer, ${AS_GO_READS_IT}; an existing one keeps its client_conn_throttle`,
  );
  return { value: used, keep: true };
}

/** `nodebalancer-type`: the Go CCM uses `--default-nodebalancer-type` for an unknown type (`GetLinodeNBType`). */
export function readNodeBalancerType(
  reader: AnnotationReader,
  defaults: ServiceDefaults,
): Lenient<NodeBalancerType> {
  const fallback = defaults.services.defaultNodeBalancerType;
  const raw = reader.raw("nodebalancer-type");
  if (raw === undefined) return { value: fallback, keep: false };
  const found = NB_TYPES.find((t) => t === raw.toLowerCase());
  if (found !== undefined) return { value: found, keep: false };
  reader.tolerate(
    "nodebalancer-type",
    raw,
    `${fallback} (--default-nodebalancer-type) on a new NodeBalancer, as the Go CCM; an existing one keeps its type`,
  );
  return { value: fallback, keep: true };
}

/**
 * `nodebalancer-id`: the Go CCM ignores `0` and what is not a number (`strconv.Atoi` fails), finding the
 * NodeBalancer through the status instead; a negative ID it looks up and fails on, so that stays an error.
 */
export function readNodeBalancerId(reader: AnnotationReader): number | null {
  const raw = reader.raw("nodebalancer-id");
  if (raw === undefined) return null;
  const n = parseWholeNumber(raw);
  if (n !== undefined && n > 0) return n;
  if (n === undefined || n === 0) {
    reader.tolerate(
      "nodebalancer-id",
      raw,
      "none: the NodeBalancer is found by its ownership tag or status, as the Go CCM finds it",
    );
  } else {
    reader.fail("nodebalancer-id", raw);
  }
  return null;
}

/**
 * `tags`: the Go CCM sends every tag and the API refuses one outside 3–50 characters, failing the whole
 * create or update; here such tags are left out of a new NodeBalancer, and an existing one keeps every tag
 * it has (the valid ones are added).
 */
export function readTags(reader: AnnotationReader): Lenient<string[]> {
  const raw = reader.raw("tags");
  if (raw === undefined) return { value: [], keep: false };
  // The Go CCM splits without trimming; trimmed tags are what a person means by "a, b".
  const tags = [...new Set(raw.split(",").map((t) => t.trim()).filter((t) => t !== ""))];
  const fits = (t: string) => t.length >= TAG_MIN_CHARS && t.length <= TAG_MAX_CHARS;
  const bad = tags.filter((t) => !fits(t));
  if (bad.length > 0) {
    const named = bad.map((t) => JSON.stringify(t)).join(", ");
    const used =
      `the other tags, without ${named} (the API refuses them); an existing NodeBalancer keeps its tags`;
    reader.tolerate("tags", raw, used);
  }
  return { value: tags.filter(fits), keep: bad.length > 0 };
}

/**
 * A bool the Go CCM reads as false when unparsable (`getServiceBoolAnnotation`) and which governs something an
 * existing NodeBalancer or Service already shows: `current` (what it shows, when known) is kept, else false.
 * `shows` names what is kept, for the Warning.
 */
export function readShapeBool(
  reader: AnnotationReader,
  name: string,
  current: boolean | undefined,
  shows: string,
): Lenient<boolean> | undefined {
  const raw = reader.raw(name);
  if (raw === undefined) return undefined;
  const parsed = parseGoBool(raw);
  if (parsed !== undefined) return { value: parsed, keep: false };
  const used = current === undefined
    ? `false (${AS_GO_READS_IT}); ${shows}`
    : `${current} (kept: ${shows}; the Go CCM would read false)`;
  reader.tolerate(name, raw, used, BOOL_ACCEPTED);
  return { value: current ?? false, keep: true };
}
