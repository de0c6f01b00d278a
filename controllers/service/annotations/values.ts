/**
 * Reads typed values out of a Service's annotations, collecting every problem instead of stopping at the
 * first, so one Warning Event can name them all. Pure.
 */
import { cidrFamily, isIpAddress, parseGoBool } from "../../../config/env.ts";
import { acceptedText, annotationKey, BOOL_ACCEPTED } from "./table.ts";
import { InvalidAnnotationError } from "../errors.ts";

/** Something worth telling the user that does not stop the Service from being served. */
export interface AnnotationWarning {
  readonly key: string;
  readonly message: string;
}

/** A whole number as Go's `strconv.Atoi` reads it (optional sign, decimal digits), or undefined. */
export function parseWholeNumber(text: string): number | undefined {
  if (!/^[+-]?\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

/** The typed getters over one Service's annotations; problems accumulate in `errors` and `warnings`. */
export class AnnotationReader {
  readonly #values: Readonly<Record<string, string>>;
  readonly errors: InvalidAnnotationError[] = [];
  readonly warnings: AnnotationWarning[] = [];

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
    const n = parseWholeNumber(value.trim());
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
    const lower = value.trim().toLowerCase();
    return allowed.find((a) => a === lower) ?? this.fail(name, value);
  }

  /** A CIDR of the given family. */
  cidr(name: string, family: 4 | 6): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    return cidrFamily(value.trim()) === family ? value.trim() : this.fail(name, value);
  }

  /** An IPv4 address. */
  ipv4(name: string): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const ip = value.trim();
    return isIpAddress(ip) && !ip.includes(":") ? ip : this.fail(name, value);
  }

  /** A non-empty string, trimmed. */
  text(name: string): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    return value.trim() !== "" ? value.trim() : this.fail(name, value);
  }
}
