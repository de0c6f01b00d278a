/**
 * `parseServiceAnnotations`: a Service's `service.beta.kubernetes.io/linode-loadbalancer-*` annotations and
 * the CCM-wide defaults, as one frozen `ServiceSpec`, or every invalid annotation at once. Names, values,
 * bool spellings and precedence (port JSON → default annotation → built-in) follow the Go CCM; where the Go
 * CCM reads a bad value leniently (a bool other than its spellings, an out-of-range throttle, an unknown
 * type, see `table.ts`), the Service goes on syncing with the value the Go CCM would use, the field keeping
 * its current value on an existing NodeBalancer, and the value is reported in `lenient`; values the Go CCM
 * refuses are `errors`, and nothing changes until they are fixed. Pure.
 *
 * Also the annotations read once per Service rather than per port (ports are in `ports.ts`):
 * - the health check (`check-*`), applied to each port: the type defaults to `none` for udp and `connection`
 *   otherwise; interval, timeout and attempts default to the Go CCM's 5, 3 and 2; `check-passive` defaults to
 *   the README's false and is always false for udp;
 * - the VPCs: `backend-*` (which subnet a new NodeBalancer's backends live in, with the Go CCM's precedence:
 *   backend-subnet-id, the name annotations, --nodebalancer-backend-ipv4-subnet-id/-name, the first of
 *   --vpc-names/--subnet-names) and `frontend-*` (a VPC frontend address); names are resolved to IDs by the
 *   caller, this module only chooses;
 * - the firewall: `firewall-id` and `firewall-acl`. As in the Go CCM, an ID wins and the ACL is then ignored
 *   (a warning here); an ACL holds exactly one of `allowList` or `denyList`, each with IPv4 and IPv6 CIDRs.
 *   The ACL's rules hold at most 255 addresses each and a firewall at most 25 rules (the Go CCM's limits).
 */
import type { V1LoadBalancerIngress, V1Service } from "@kubernetes/client-node";
import type { Protocol } from "@linode/api-v4";
import { cidr4Within, cidrFamily, parseCidr4 } from "../../../common/net.ts";
import type { VpcConfig } from "../../../config/types.ts";
import {
  annotationInfo,
  AnnotationReader,
  ANNOTATIONS,
  readNodeBalancerId,
  readNodeBalancerType,
  readShapeBool,
  readTags,
  readThrottle,
} from "./table.ts";
import { portFamily, readPortDefaults, resolvePort } from "./ports.ts";
import type {
  AclAddresses,
  AnnotationWarning,
  BackendVpcSpec,
  CheckType,
  FirewallSpec,
  FrontendVpcSpec,
  HealthCheckSpec,
  InvalidAnnotationError,
  KeptNodeBalancerField,
  LenientValue,
  PortSpec,
  ServiceDefaults,
  ServiceSpec,
  SubnetSelector,
} from "./spec.ts";

/** Says why nothing is deleted on a bool the Go CCM would read as false. */
const KEPT_WHILE_UNREADABLE = "nothing is deleted while it is unreadable; the Go CCM reads false";

/** The outcome: a frozen spec, or every invalid annotation (warnings and lenient values in both cases). */
export type AnnotationResult =
  | { readonly ok: true; readonly spec: ServiceSpec }
  | {
    readonly ok: false;
    readonly errors: readonly InvalidAnnotationError[];
    readonly warnings: readonly AnnotationWarning[];
    readonly lenient: readonly LenientValue[];
  };

/** What an existing NodeBalancer shows now, which an unparsable bool governing it keeps. */
export interface CurrentNodeBalancerShape {
  /** True when its backends are IPv6 addresses, false when IPv4; absent when it has none (or is new). */
  readonly ipv6Backends?: boolean;
}

/** Says what an existing NodeBalancer keeps on an unparsable `enable-ipv6-backends`. */
const KEEPS_BACKEND_FAMILY = "an existing NodeBalancer keeps its backends' address family";

/** The shape of the Service's status: hostname-only, IPv6 present; nothing known without an ingress. */
function ingressShape(ingress: readonly V1LoadBalancerIngress[]): { hostnameOnly?: boolean; ipv6?: boolean } {
  if (ingress.length === 0) return {};
  const hostnameOnly = ingress.every((i) => !i.ip && i.hostname);
  // A hostname-only status cannot tell whether IPv6 was on.
  return hostnameOnly ? { hostnameOnly } : { hostnameOnly, ipv6: ingress.some((i) => i.ip?.includes(":")) };
}

/**
 * Reads every annotation of `service` over `defaults`; `current` is what its existing NodeBalancer shows (see
 * `CurrentNodeBalancerShape`). See the module comment.
 */
export function parseServiceAnnotations(
  service: V1Service,
  defaults: ServiceDefaults,
  current: CurrentNodeBalancerShape = {},
): AnnotationResult {
  const reader = new AnnotationReader(service.metadata?.annotations);
  const servicePorts = service.spec?.ports ?? [];
  warnUnknown(reader, servicePorts.map((p) => p.port));
  const backends = readShapeBool(reader, "enable-ipv6-backends", current.ipv6Backends, KEEPS_BACKEND_FAMILY);
  const ipv6Backends = backends?.value ?? defaults.services.enableIpv6ForNodeBalancerBackends;
  const shape = ingressShape(service.status?.loadBalancer?.ingress ?? []);
  const hostnameOnly = readShapeBool(
    reader,
    "hostname-only-ingress",
    shape.hostnameOnly,
    shape.hostnameOnly === undefined
      ? "a Service with a status keeps its hostname-only reading"
      : `the status is ${shape.hostnameOnly ? "" : "not "}hostname-only`,
  );
  const ipv6Ingress = readShapeBool(
    reader,
    "enable-ipv6-ingress",
    shape.ipv6,
    shape.ipv6 === undefined
      ? "a Service with an IP in its status keeps its IPv6 reading"
      : `the status ${shape.ipv6 ? "has" : "has no"} IPv6 address`,
  );
  const portDefaults = readPortDefaults(reader);
  const health = readHealthCheck(reader);
  const ports = servicePorts.flatMap((sp) => resolvePort(reader, sp, portDefaults, health) ?? []);
  const families = new Set(servicePorts.map(portFamily).filter((f) => f !== undefined)).size;
  const firewall = readFirewall(reader, families);
  const backendVpc = readBackendVpc(reader, defaults, ipv6Backends);
  const frontendVpc = readFrontendVpc(reader);
  const throttle = readThrottle(reader);
  const type = readNodeBalancerType(reader, defaults);
  const tags = readTags(reader);
  const keep: KeptNodeBalancerField[] = [
    ...(throttle.keep ? ["client_conn_throttle" as const] : []),
    ...(type.keep ? ["type" as const] : []),
    ...(tags.keep ? ["tags" as const] : []),
  ];
  const spec = {
    throttle: throttle.value,
    nodeBalancerType: type.value,
    nodeBalancerId: readNodeBalancerId(reader),
    preserve: reader.lenientBool("preserve", true, KEPT_WHILE_UNREADABLE) ?? false,
    reservedIpv4: reader.ipv4("reserved-ipv4") ?? null,
    retainReservedIpv4: reader.lenientBool("retain-reserved-ipv4", true, KEPT_WHILE_UNREADABLE) ?? true,
    hostnameOnlyIngress: hostnameOnly?.value ?? defaults.hostnameOnlyIngress,
    ipv6Ingress: ipv6Ingress?.value ?? defaults.services.enableIpv6ForLoadBalancers,
    ipv6Backends,
    keepsBackendFamily: backends?.keep ?? false,
    tags: tags.value,
    ports: uniquePorts(ports),
    keep,
    warnings: reader.warnings,
    lenient: reader.lenient,
  };
  const errors = dedupe(reader.errors);
  if (errors.length > 0) {
    return { ok: false, errors, warnings: [...reader.warnings], lenient: [...reader.lenient] };
  }
  if (firewall === undefined || backendVpc === undefined || frontendVpc === undefined) {
    throw new TypeError("parseServiceAnnotations: an invalid value was not reported"); // a bug here, not input
  }
  return { ok: true, spec: deepFreeze<ServiceSpec>({ ...spec, firewall, backendVpc, frontendVpc }) };
}

function warnUnknown(reader: AnnotationReader, ports: readonly number[]): void {
  for (const name of reader.names()) {
    const port = /^port-(\d+)$/.exec(name)?.[1];
    if (port !== undefined && !ports.includes(Number(port))) {
      reader.warn(name, `ignored: the Service has no port ${port}`);
    } else if (!annotationInfo(name)) {
      reader.warn(name, `unknown annotation ignored (known: ${ANNOTATIONS.map((a) => a.name).join(", ")})`);
    }
  }
}

/** A Service may list tcp 53 and udp 53; the same port twice in one family is refused by the apiserver. */
function uniquePorts(ports: readonly PortSpec[]): PortSpec[] {
  const seen = new Set<string>();
  return ports.filter((p) => !seen.has(`${p.port}/${p.family}`) && seen.add(`${p.port}/${p.family}`));
}

function dedupe(errors: readonly InvalidAnnotationError[]): InvalidAnnotationError[] {
  const seen = new Set<string>();
  return errors.filter((e) => !seen.has(e.message) && seen.add(e.message));
}

/** Freezes an object graph (the spec is shared between reconciles and must not change under them). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------
// The health check.

const CHECK_TYPES: readonly CheckType[] = ["none", "connection", "http", "http_body"];

/** Built-in health check values (seconds, attempts). */
export const HEALTH_DEFAULTS = Object.freeze({
  intervalSec: 5,
  timeoutSec: 3,
  attempts: 2,
  passive: false,
  path: "/",
});

/** Reads the `check-*` annotations; the result builds each port's check, or undefined when invalid. */
export function readHealthCheck(
  reader: AnnotationReader,
): (protocol: Protocol) => HealthCheckSpec | undefined {
  const type = reader.oneOf("check-type", CHECK_TYPES);
  const { path, keepPath } = readPath(reader, type === "http" || type === "http_body");
  const body = reader.raw("check-body");
  const intervalSec = reader.int("check-interval", 2, 3600) ?? HEALTH_DEFAULTS.intervalSec;
  const timeoutSec = reader.int("check-timeout", 1, 30) ?? HEALTH_DEFAULTS.timeoutSec;
  const attempts = reader.int("check-attempts", 1, 30) ?? HEALTH_DEFAULTS.attempts;
  const passive = reader.bool("check-passive") ?? HEALTH_DEFAULTS.passive;
  // The API refuses a timeout that is not shorter than the interval; blame the annotation that was set.
  if (timeoutSec >= intervalSec) {
    const blamed = reader.has("check-timeout") ? "check-timeout" : "check-interval";
    reader.fail(blamed, reader.raw(blamed) ?? "");
  }
  if (type === "http_body" && (body === undefined || body === "")) {
    reader.fail("check-body", body ?? "", "a non-empty regular expression (check-type is http_body)");
  }
  if (!["http", "http_body"].includes(type ?? "") && (reader.has("check-path") || reader.has("check-body"))) {
    const name = reader.has("check-path") ? "check-path" : "check-body";
    reader.warn(name, "used only with check-type http or http_body");
  }
  const invalid = reader.has("check-type") && type === undefined;
  return (protocol) => {
    if (invalid) return undefined;
    const t = type ?? (protocol === "udp" ? "none" : "connection");
    const isHttp = t === "http" || t === "http_body";
    return {
      type: t,
      path: isHttp ? path ?? HEALTH_DEFAULTS.path : null,
      body: t === "http_body" ? body ?? null : null,
      intervalSec,
      timeoutSec,
      attempts,
      passive: protocol === "udp" ? false : passive,
      keepPath: isHttp && keepPath,
    };
  };
}

/**
 * The Go CCM sends a path without its leading `/` (or with spaces around it) as it is, which the API refuses
 * (its `check_path` pattern), failing that port's update: here an existing config keeps its path and a new
 * one gets `/`. An empty path is the Go CCM's `/`.
 */
function readPath(reader: AnnotationReader, used: boolean): { path: string | undefined; keepPath: boolean } {
  const path = reader.raw("check-path");
  // Unused without an http check (a warning says so below), as the Go CCM ignores it then.
  if (!used || path === undefined || path === "") return { path: undefined, keepPath: false };
  if (path.startsWith("/") && path === path.trim()) return { path, keepPath: false };
  reader.tolerate(
    "check-path",
    path,
    `${HEALTH_DEFAULTS.path} on a new config; an existing config keeps its path`,
  );
  return { path: undefined, keepPath: true };
}

// ---------------------------------------------------------------------------------------------------------
// The VPCs.

const BACKEND_NAMES = ["backend-ipv4-range", "backend-vpc-name", "backend-subnet-name", "backend-subnet-id"];
const FRONTEND_NAMES = [
  "frontend-subnet-id",
  "frontend-vpc-name",
  "frontend-subnet-name",
  "frontend-ipv4-range",
  "frontend-ipv6-range",
];

/** True when the CCM runs with VPCs (`--vpc-names` or `--vpc-ids`). */
export function hasVpc(vpc: Pick<VpcConfig, "names" | "ids">): boolean {
  return vpc.names.length > 0 || vpc.ids.length > 0;
}

/** True when the IPv4 CIDR `inner` lies wholly inside `outer`. */
function ipv4CidrWithin(outer: string, inner: string): boolean {
  const o = parseCidr4(outer);
  const i = parseCidr4(inner);
  return o !== undefined && i !== undefined && cidr4Within(i, o);
}

function backendRange(reader: AnnotationReader, subnet: string | null): string | undefined {
  const range = reader.cidr("backend-ipv4-range", 4);
  if (range === undefined || subnet === null || ipv4CidrWithin(subnet, range)) return range;
  return reader.fail(
    "backend-ipv4-range",
    range,
    `an IPv4 CIDR inside ${subnet} (--nodebalancer-backend-ipv4-subnet)`,
  );
}

function backendSubnet(reader: AnnotationReader, defaults: ServiceDefaults): SubnetSelector | undefined {
  const { services, vpc } = defaults;
  const subnetId = reader.id("backend-subnet-id");
  if (reader.has("backend-subnet-id")) return subnetId === undefined ? undefined : { kind: "id", subnetId };
  const vpcName = reader.text("backend-vpc-name");
  const subnetName = reader.text("backend-subnet-name");
  const byAnnotation = reader.has("backend-vpc-name") || reader.has("backend-subnet-name");
  if (!byAnnotation && services.backendIpv4SubnetId !== null) {
    return { kind: "id", subnetId: services.backendIpv4SubnetId };
  }
  if (!byAnnotation && services.backendIpv4SubnetName !== null && vpc.names[0] !== undefined) {
    return { kind: "names", vpcName: vpc.names[0], subnetName: services.backendIpv4SubnetName };
  }
  if (!byAnnotation && vpc.names.length === 0 && vpc.subnetIds[0] !== undefined) {
    return { kind: "id", subnetId: vpc.subnetIds[0] };
  }
  const v = vpcName ?? vpc.names[0];
  const s = subnetName ?? vpc.subnetNames[0];
  if (v !== undefined && s !== undefined) return { kind: "names", vpcName: v, subnetName: s };
  // Started with --vpc-ids/--subnet-ids: there is no label to pair a single name annotation with.
  const missing = v === undefined ? "backend-vpc-name" : "backend-subnet-name";
  return reader.fail(
    missing,
    reader.raw(missing) ?? "",
    "a label, given with the other backend name annotation",
  );
}

/** The backend VPC of a new NodeBalancer, or null when backends are not VPC addresses. */
export function readBackendVpc(
  reader: AnnotationReader,
  defaults: ServiceDefaults,
  ipv6Backends: boolean,
): BackendVpcSpec | null | undefined {
  const { services, vpc } = defaults;
  if (ipv6Backends || !hasVpc(vpc) || services.disableVpcBackends) {
    for (const name of BACKEND_NAMES.filter((n) => reader.has(n))) {
      reader.warn(name, "ignored: NodeBalancer backends are not VPC addresses here");
    }
    return null;
  }
  const range = backendRange(reader, services.backendIpv4Subnet);
  const subnet = backendSubnet(reader, defaults);
  if (subnet === undefined || (reader.has("backend-ipv4-range") && range === undefined)) return undefined;
  if (range !== undefined) return { subnet, ipv4Range: range, ipv4RangeAutoAssign: false };
  const byAnnotation = reader.has("backend-vpc-name") || reader.has("backend-subnet-name");
  if (!byAnnotation && services.backendIpv4SubnetId === null && services.backendIpv4Subnet !== null) {
    return { subnet, ipv4Range: services.backendIpv4Subnet, ipv4RangeAutoAssign: true };
  }
  return { subnet, ipv4Range: null, ipv4RangeAutoAssign: false };
}

/** The frontend VPC of a new NodeBalancer, or null when no frontend-* annotation is set. */
export function readFrontendVpc(reader: AnnotationReader): FrontendVpcSpec | null | undefined {
  if (!FRONTEND_NAMES.some((n) => reader.has(n))) return null;
  const ipv4 = reader.has("frontend-ipv4-range") ? reader.cidr("frontend-ipv4-range", 4) : null;
  const ipv6 = reader.has("frontend-ipv6-range") ? reader.cidr("frontend-ipv6-range", 6) : null;
  let subnet: SubnetSelector | undefined;
  if (reader.has("frontend-subnet-id")) {
    const subnetId = reader.id("frontend-subnet-id");
    subnet = subnetId === undefined ? undefined : { kind: "id", subnetId };
  } else if (reader.has("frontend-vpc-name") || reader.has("frontend-subnet-name")) {
    const vpcName = requiredText(reader, "frontend-vpc-name");
    const subnetName = requiredText(reader, "frontend-subnet-name");
    subnet = vpcName && subnetName ? { kind: "names", vpcName, subnetName } : undefined;
  } else {
    const needed = "a subnet ID: frontend ranges need frontend-subnet-id or frontend-vpc-name/-subnet-name";
    reader.fail("frontend-subnet-id", "", needed);
  }
  if (subnet === undefined || ipv4 === undefined || ipv6 === undefined) return undefined;
  return { subnet, ipv4Range: ipv4, ipv6Range: ipv6 };
}

function requiredText(reader: AnnotationReader, name: string): string | undefined {
  return reader.has(name) ? reader.text(name) : reader.fail(name, "");
}

// ---------------------------------------------------------------------------------------------------------
// The firewall.

/** Addresses in one firewall rule. */
export const MAX_ADDRESSES_PER_RULE = 255;
/** Inbound rules in one firewall. */
export const MAX_RULES_PER_FIREWALL = 25;

const LISTS = ["allowList", "denyList"] as const;

/** Rules needed for these addresses per port family: one, or one per 255 of each IP family. */
export function aclRuleCount(addresses: AclAddresses): number {
  const { ipv4, ipv6 } = addresses;
  if (ipv4.length + ipv6.length <= MAX_ADDRESSES_PER_RULE) return 1;
  return Math.ceil(ipv4.length / MAX_ADDRESSES_PER_RULE) + Math.ceil(ipv6.length / MAX_ADDRESSES_PER_RULE);
}

/** Reads the firewall annotations; `portFamilies` is how many of tcp/udp the Service uses (rules each). */
export function readFirewall(reader: AnnotationReader, portFamilies: number): FirewallSpec | undefined {
  if (reader.has("firewall-id")) {
    const firewallId = reader.id("firewall-id");
    if (reader.has("firewall-acl")) reader.warn("firewall-acl", "ignored: firewall-id is set");
    return firewallId === undefined ? undefined : { kind: "id", firewallId };
  }
  const raw = reader.raw("firewall-acl");
  if (raw === undefined) return { kind: "none" };
  const acl = parseAcl(raw);
  if (typeof acl === "string") return reader.fail("firewall-acl", raw, acl);
  const rules = aclRuleCount(acl.addresses) * Math.max(1, portFamilies);
  if (rules > MAX_RULES_PER_FIREWALL) {
    const most =
      `at most ${MAX_RULES_PER_FIREWALL} rules of ${MAX_ADDRESSES_PER_RULE} addresses (needs ${rules})`;
    return reader.fail("firewall-acl", raw, most);
  }
  return { kind: "acl", ...acl };
}

type Acl = { list: "allowList" | "denyList"; addresses: AclAddresses };

/** The ACL, or the text of what is accepted when it is not valid. */
function parseAcl(raw: string): Acl | string {
  const shape = 'a JSON object with exactly one of "allowList" or "denyList"';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return shape;
  }
  if (!isObject(parsed)) return shape;
  const present = LISTS.filter((l) => parsed[l] !== undefined && parsed[l] !== null);
  const list = present[0];
  if (present.length !== 1 || list === undefined) return shape;
  const body = parsed[list];
  if (!isObject(body)) return `${list} as {"ipv4": [CIDRs], "ipv6": [CIDRs]}`;
  const ipv4 = cidrList(body.ipv4, 4);
  const ipv6 = cidrList(body.ipv6, 6);
  if (typeof ipv4 === "string") return `${list}.ipv4 as a list of IPv4 CIDRs (${ipv4} is not one)`;
  if (typeof ipv6 === "string") return `${list}.ipv6 as a list of IPv6 CIDRs (${ipv6} is not one)`;
  if (ipv4.length + ipv6.length === 0) return `${list} with at least one address`;
  return { list, addresses: { ipv4, ipv6 } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The trimmed, de-duplicated CIDRs, or the JSON of the first entry that is not one of this family. */
function cidrList(value: unknown, family: 4 | 6): string[] | string {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return JSON.stringify(value);
  const out: string[] = [];
  for (const entry of value) {
    if (typeof entry !== "string" || cidrFamily(entry.trim()) !== family) return JSON.stringify(entry);
    if (!out.includes(entry.trim())) out.push(entry.trim());
  }
  return out;
}
