/**
 * Every Service annotation the service controller reads, as data: the one source for the parser's error
 * texts, the `lint` subcommand and the README table. Names and defaults follow the Go CCM's README
 * (`throttle` 20, `check-passive` false) and, for annotations it does not list, the Go CCM's current docs.
 *
 * Beside the table, how values are read out of one Service's annotations (`AnnotationReader`: typed getters
 * that collect every problem instead of stopping at the first, so one Warning Event can name them all), and
 * the annotations the Go CCM reads leniently, read the same way so a bad value never stops a Service: the
 * value the Go CCM would use applies to a new NodeBalancer, an existing one keeps what it has for the field
 * the value governs (`keep`), and the value is reported (`AnnotationReader.tolerate`: a Warning Event, a
 * `lint` error). Values the Go CCM refuses too stay errors. Pure.
 */
import { cidrFamily, isIpAddress } from "../../../common/net.ts";
import { parseGoBool } from "../../../config/env.ts";
import {
  type AnnotationWarning,
  InvalidAnnotationError,
  type LenientValue,
  type NodeBalancerType,
  type ServiceDefaults,
} from "./spec.ts";

/** What every Service annotation of the Go CCM starts with. */
export const ANNOTATION_PREFIX = "service.beta.kubernetes.io/linode-loadbalancer-";

/** One annotation: its suffix, what it accepts and what applies without it. */
export interface AnnotationInfo {
  /** The part after `ANNOTATION_PREFIX`, e.g. `check-interval`; `port-<N>` for the per-port JSON. */
  readonly name: string;
  /** What is accepted, as the `expected …` part of an error message. */
  readonly accepted: string;
  /** What applies when the annotation is absent, in words (`""` when nothing does). */
  readonly default: string;
  readonly description: string;
  /** The annotation that replaces a deprecated one. */
  readonly replacedBy?: string;
}

/** Go's `strconv.ParseBool` spellings, the README's bool contract. */
export const BOOL_ACCEPTED = "true or false (also 1, t, T, TRUE, True, 0, f, F, FALSE, False)";

const CIDR4 = "an IPv4 CIDR such as 10.100.0.0/30";
const CIDR6 = "an IPv6 CIDR such as fd00:1::/64";

/** The table, in the order of the Go CCM's docs. */
export const ANNOTATIONS: readonly AnnotationInfo[] = Object.freeze([
  info(
    "throttle",
    "a whole number from 0 to 20 (0 disables)",
    "20",
    "new connections per second per client IP",
  ),
  info(
    "default-protocol",
    "tcp, udp, http or https",
    "the Service port's protocol",
    "protocol of every port",
  ),
  info(
    "default-proxy-protocol",
    "none, v1 or v2 (none for udp ports)",
    "none",
    "Proxy Protocol of every port",
  ),
  info(
    "default-algorithm",
    "roundrobin, leastconn or source (tcp, http, https); roundrobin, leastconn or ring_hash (udp)",
    "roundrobin",
    "balancing algorithm of every port",
  ),
  info(
    "default-stickiness",
    "none, table or http_cookie (http, https); none, session or source_ip (udp)",
    "table (http, https), session (udp); tcp ports have none",
    "session stickiness of every http, https or udp port",
  ),
  info(
    "port-<N>",
    'a JSON object with any of "protocol", "proxy-protocol", "tls-secret-name", "algorithm", "stickiness", ' +
      '"udp-check-port" (string values)',
    "",
    "settings of Service port N, over the default-* annotations",
  ),
  info(
    "check-type",
    "none, connection, http or http_body",
    "none (udp), connection (others)",
    "health check",
  ),
  info("check-path", "a URL path starting with /", "/", "path of http and http_body health checks"),
  info("check-body", "a non-empty regular expression", "", "what an http_body health check must find"),
  info(
    "check-interval",
    "whole seconds from 2 to 3600, more than check-timeout",
    "5",
    "seconds between checks",
  ),
  info(
    "check-timeout",
    "whole seconds from 1 to 30, less than check-interval",
    "3",
    "seconds a check may take",
  ),
  info("check-attempts", "a whole number from 1 to 30", "2", "failed checks before a backend is taken out"),
  info("check-passive", BOOL_ACCEPTED, "false (always false for udp)", "5xx answers fail a backend"),
  info("udp-check-port", "a port from 1 to 65535", "80", "port of the health check of udp ports"),
  info("preserve", BOOL_ACCEPTED, "false", "keep the NodeBalancer when the Service is deleted"),
  info("nodebalancer-id", "a NodeBalancer ID (a positive whole number)", "", "NodeBalancer to use"),
  info(
    "nodebalancer-type",
    "common, premium or premium_40gb",
    "--default-nodebalancer-type",
    "type of a new NodeBalancer",
  ),
  info(
    "hostname-only-ingress",
    BOOL_ACCEPTED,
    "LINODE_HOSTNAME_ONLY_INGRESS",
    "status shows only the hostname",
  ),
  info("tags", "comma-separated tags of 3 to 50 characters each", "", "extra NodeBalancer tags"),
  info("firewall-id", "a Cloud Firewall ID (a positive whole number)", "", "existing firewall to attach"),
  info(
    "firewall-acl",
    'a JSON object with exactly one of "allowList" or "denyList", each {"ipv4": [CIDRs], "ipv6": [CIDRs]}',
    "",
    "a CCM-managed firewall with these rules (ignored when firewall-id is set)",
  ),
  info("enable-ipv6-ingress", BOOL_ACCEPTED, "--enable-ipv6-for-loadbalancers", "status shows IPv6 too"),
  info(
    "enable-ipv6-backends",
    BOOL_ACCEPTED,
    "--enable-ipv6-for-nodebalancer-backends",
    "Nodes' public IPv6 as backends",
  ),
  info("backend-ipv4-range", CIDR4, "", "backend range inside the VPC subnet (new NodeBalancers)"),
  info("backend-vpc-name", "a VPC label", "the first of --vpc-names", "backend VPC (new NodeBalancers)"),
  info("backend-subnet-name", "a subnet label", "the first of --subnet-names", "backend subnet"),
  info("backend-subnet-id", "a subnet ID (a positive whole number)", "", "backend subnet, over the names"),
  info("frontend-subnet-id", "a subnet ID (a positive whole number)", "", "frontend VPC subnet"),
  info("frontend-vpc-name", "a VPC label, with frontend-subnet-name", "", "frontend VPC"),
  info("frontend-subnet-name", "a subnet label, with frontend-vpc-name", "", "frontend subnet"),
  info("frontend-ipv4-range", CIDR4, "", "frontend IPv4 range in the frontend subnet"),
  info("frontend-ipv6-range", CIDR6, "", "frontend IPv6 range in the frontend subnet"),
  info("reserved-ipv4", "a reserved IPv4 address of the account", "", "IPv4 of a new NodeBalancer"),
  info("retain-reserved-ipv4", BOOL_ACCEPTED, "true", "keep the reserved IPv4 when deleting"),
  {
    ...info("proxy-protocol", "none, v1 or v2", "none", "deprecated spelling of default-proxy-protocol"),
    replacedBy: "default-proxy-protocol",
  },
]);

function info(name: string, accepted: string, def: string, description: string): AnnotationInfo {
  return { name, accepted, default: def, description };
}

/** The full annotation name of a suffix: `annotationKey("throttle")`. */
export function annotationKey(name: string): string {
  return ANNOTATION_PREFIX + name;
}

/** The table entry of a suffix (`port-443` finds `port-<N>`); undefined for unknown names. */
export function annotationInfo(name: string): AnnotationInfo | undefined {
  const lookup = /^port-\d+$/.test(name) ? "port-<N>" : name;
  return ANNOTATIONS.find((a) => a.name === lookup);
}

/** What a known annotation accepts (the table's text); throws for a name missing from the table. */
export function acceptedText(name: string): string {
  const found = annotationInfo(name);
  if (!found) throw new RangeError(`Unknown annotation ${name}`);
  return found.accepted;
}

// ---------------------------------------------------------------------------------------------------------
// Reading one Service's annotations.

/** A whole number as Go's `strconv.Atoi` reads it (optional sign, decimal digits), or undefined. */
export function parseWholeNumber(text: string): number | undefined {
  if (!/^[+-]?\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

/**
 * The typed getters over one Service's annotations; problems accumulate in `errors` and `warnings`. Values are
 * read untrimmed, as the Go CCM reads them (`strconv.Atoi`, map lookups, name matches): `" 5"` is refused
 * where the Go CCM refuses it, and read leniently where it reads it leniently (the readers below).
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

  /**
   * Records tags dropped from `name` because they would claim ownership (`RESERVED_TAG_PREFIXES`): the rest of
   * the value applies. Reported with the values read leniently, though the Go CCM takes them as they are.
   */
  dropReserved(name: string, value: string, dropped: readonly string[]): void {
    const key = annotationKey(name);
    const accepted = `tags not starting with ${RESERVED_TAG_PREFIXES.join(" or ")}`;
    const named = dropped.map((t) => JSON.stringify(t)).join(", ");
    const used = `the other tags, without ${named}: these prefixes mark which cluster and Service own a ` +
      "NodeBalancer, and only this CCM writes them";
    const message = `${key}=${JSON.stringify(value)}: expected ${accepted}; used ${used}`;
    this.lenient.push({ key, value, accepted, used, message, reserved: true });
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

// ---------------------------------------------------------------------------------------------------------
// The annotations the Go CCM reads leniently.

/** What every ownership tag starts with (`ownership.ts`). */
export const OWNERSHIP_TAG_PREFIX = "ccm-owner:";
/** What every cluster identity tag starts with (`ownership.ts`). */
export const CLUSTER_TAG_PREFIX = "ccm-cluster:";
/** Tag prefixes only this CCM writes: never taken from an annotation (they would claim or disown a NodeBalancer). */
export const RESERVED_TAG_PREFIXES: readonly string[] = [CLUSTER_TAG_PREFIX, OWNERSHIP_TAG_PREFIX];

/** True for a tag with a reserved prefix, in any letter case (the API may compare tags so). */
export function isReservedTag(tag: string): boolean {
  const lower = tag.toLowerCase();
  return RESERVED_TAG_PREFIXES.some((p) => lower.startsWith(p));
}

/** Shortest Linode tag (the API's `tags` entries hold 3 to 50 characters). */
export const TAG_MIN_CHARS = 3;
/** Longest Linode tag. */
export const TAG_MAX_CHARS = 50;

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
 * it has (the valid ones are added). Tags with a reserved prefix (`ccm-cluster:`, `ccm-owner:`) are dropped
 * and reported, never written: from a Service they could disown its NodeBalancer, or hand it to another
 * cluster's orphan check. The Go CCM writes them as any tag.
 */
export function readTags(reader: AnnotationReader): Lenient<string[]> {
  const raw = reader.raw("tags");
  if (raw === undefined) return { value: [], keep: false };
  // The Go CCM splits without trimming; trimmed tags are what a person means by "a, b".
  const all = [...new Set(raw.split(",").map((t) => t.trim()).filter((t) => t !== ""))];
  const reserved = all.filter(isReservedTag);
  if (reserved.length > 0) reader.dropReserved("tags", raw, reserved);
  const tags = all.filter((t) => !isReservedTag(t));
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
