/**
 * `parseServiceAnnotations`: a Service's `service.beta.kubernetes.io/linode-loadbalancer-*` annotations and
 * the CCM-wide defaults, as one frozen `ServiceSpec`, or every invalid annotation at once. Names, values,
 * bool spellings and precedence (port JSON → default annotation → built-in) follow the Go CCM; where the Go
 * CCM reads a bad value leniently (a bool other than its spellings, an out-of-range throttle, an unknown
 * type, see `lenient.ts`), the Service goes on syncing with the value the Go CCM would use, the field keeping
 * its current value on an existing NodeBalancer, and the value is reported in `lenient`; values the Go CCM
 * refuses are `errors`, and nothing changes until they are fixed. Pure.
 */
import type { V1LoadBalancerIngress, V1Service } from "@kubernetes/client-node";
import { annotationInfo, ANNOTATIONS } from "./table.ts";
import { AnnotationReader, type AnnotationWarning, type LenientValue } from "./values.ts";
import type { ServiceDefaults } from "./defaults.ts";
import type { InvalidAnnotationError } from "../errors.ts";
import { readFirewall } from "./firewall_acl.ts";
import { readHealthCheck } from "./health.ts";
import {
  readNodeBalancerId,
  readNodeBalancerType,
  readShapeBool,
  readTags,
  readThrottle,
} from "./lenient.ts";
import { portFamily, readPortDefaults, resolvePort } from "./ports.ts";
import type { KeptNodeBalancerField, PortSpec, ServiceSpec } from "./spec.ts";
import { readBackendVpc, readFrontendVpc } from "./vpc.ts";

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
