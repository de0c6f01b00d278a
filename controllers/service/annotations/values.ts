/**
 * Reads typed values out of a Service's annotations, collecting every problem instead of stopping at the
 * first, so one Warning Event can name them all. Pure.
 */
import { cidrFamily, isIpAddress } from "../../../common/net.ts";
import { parseGoBool } from "../../../config/env.ts";
import { acceptedText, annotationKey, BOOL_ACCEPTED } from "./table.ts";
import { InvalidAnnotationError } from "../errors.ts";

/** Something worth telling the user that does not stop the Service from being served. */
export interface AnnotationWarning {
  readonly key: string;
  readonly message: string;
}

/**
 * A value the Go CCM reads without complaint (as a default, clamped, or ignored) but which is not what its
 * docs accept: the Service goes on syncing with `used`, a Warning Event says so, and `lint` reports an error.
 */
export interface LenientValue {
  /** The full annotation name. */
  readonly key: string;
  /** The value as written on the Service. */
  readonly value: string;
  /** What is accepted, as in an `InvalidAnnotationError`. */
  readonly accepted: string;
  /** What applies instead, in words: `20 (the Go CCM clamps to 0–20); an existing NodeBalancer keeps its own`. */
  readonly used: string;
  /** `<key>="<value>": expected <accepted>; used <used>`. */
  readonly message: string;
}

/** A whole number as Go's `strconv.Atoi` reads it (optional sign, decimal digits), or undefined. */
export function parseWholeNumber(text: string): number | undefined {
  if (!/^[+-]?\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

/**
 * The typed getters over one Service's annotations; problems accumulate in `errors` and `warnings`. Values are
 * read untrimmed, as the Go CCM reads them (`strconv.Atoi`, map lookups, name matches): `" 5"` is refused
 * where the Go CCM refuses it, and read leniently where it reads it leniently (`lenient.ts`).
 */
export class AnnotationReader {
  readonly #values: Readonly<Record<string, string>>;
  readonly errors: InvalidAnnotationError[] = [];
  readonly warnings: AnnotationWarning[] = [];
  readonly lenient: LenientValue[] = [];

  constructor(annotations: Readonly<Record<string, string>> | undefined) {
    this.#values = annotations ?? {};
  }

  /** The raw value of `name` (a suffix such as `throttle`), or undefined when absent. */
  raw(name: string): string | undefined {
    const key = annotationKey(name);
    return Object.hasOwn(this.#values, key) ? this.#values[key] : undefined;
  }

  /** True when the annotation is present (even empty). */
  has(name: string): boolean {
    return this.raw(name) !== undefined;
  }

  /** Every annotation name with our prefix, as suffixes. */
  names(): string[] {
    const prefix = annotationKey("");
    return Object.keys(this.#values).filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  }

  /** Records an invalid value; `accepted` defaults to the table's text for `name`. */
  fail(name: string, value: string, accepted = acceptedText(name)): undefined {
    this.errors.push(new InvalidAnnotationError(annotationKey(name), value, accepted));
    return undefined;
  }

  /** Records a value read leniently (as the Go CCM reads it); `used` says what applies instead. */
  tolerate(name: string, value: string, used: string, accepted = acceptedText(name)): void {
    const key = annotationKey(name);
    const message = `${key}=${JSON.stringify(value)}: expected ${accepted}; used ${used}`;
    this.lenient.push({ key, value, accepted, used, message });
  }

  /**
   * A Go bool that the Go CCM reads as false when unparsable (its `getServiceBoolAnnotation`): such a value
   * gives `fallback`, reported with `why`, instead of stopping the Service.
   */
  lenientBool(name: string, fallback: boolean, why: string): boolean | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const parsed = parseGoBool(value);
    if (parsed !== undefined) return parsed;
    this.tolerate(name, value, `${fallback} (${why})`, BOOL_ACCEPTED);
    return fallback;
  }

  /** Records a warning about `name`. */
  warn(name: string, message: string): void {
    this.warnings.push({ key: annotationKey(name), message });
  }

  /** A Go bool; an unparsable value is an error rather than the Go CCM's silent false (see `parseBool`). */
  bool(name: string): boolean | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    return parseGoBool(value) ?? this.fail(name, value, BOOL_ACCEPTED);
  }

  /** A whole number in `[min, max]`. */
  int(name: string, min: number, max: number): number | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const n = parseWholeNumber(value);
    return n !== undefined && n >= min && n <= max ? n : this.fail(name, value);
  }

  /** A positive ID (NodeBalancer, firewall, subnet). */
  id(name: string): number | undefined {
    return this.int(name, 1, Number.MAX_SAFE_INTEGER);
  }

  /** One of `allowed`, compared in lower case as the Go CCM does. */
  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const lower = value.toLowerCase();
    return allowed.find((a) => a === lower) ?? this.fail(name, value);
  }

  /** A CIDR of the given family. */
  cidr(name: string, family: 4 | 6): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    return cidrFamily(value) === family ? value : this.fail(name, value);
  }

  /**
   * An IPv4 address, trimmed: the Go CCM sends it untrimmed, which the API refuses on a new NodeBalancer while
   * an existing one only gets an Event (its IP cannot change); trimmed, both are served (docs/migration.md).
   */
  ipv4(name: string): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const ip = value.trim();
    return isIpAddress(ip) && !ip.includes(":") ? ip : this.fail(name, value);
  }

  /** A non-empty name without surrounding spaces (the Go CCM matches it as written, so one never matches). */
  text(name: string): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    return value !== "" && value === value.trim() ? value : this.fail(name, value);
  }
}
