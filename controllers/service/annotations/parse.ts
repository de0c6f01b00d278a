/**
 * `parseServiceAnnotations`: a Service's `service.beta.kubernetes.io/linode-loadbalancer-*` annotations and
 * the CCM-wide defaults, as one frozen `ServiceSpec`, or every invalid annotation at once. Names, values,
 * bool spellings and precedence (port JSON → default annotation → built-in) follow the Go CCM; where the Go
 * CCM silently reads a bad value as a default (a bool other than its spellings, an out-of-range throttle,
 * an unknown type), this is an error instead, so nothing changes until the Service is fixed. Pure.
 */
import type { V1Service } from "@kubernetes/client-node";
import { annotationInfo, ANNOTATIONS } from "./table.ts";
import { AnnotationReader, type AnnotationWarning } from "./values.ts";
import type { ServiceDefaults } from "./defaults.ts";
import type { InvalidAnnotationError } from "../errors.ts";
import { readFirewall } from "./firewall_acl.ts";
import { readHealthCheck } from "./health.ts";
import { TAG_MAX_CHARS, TAG_MIN_CHARS } from "../ownership.ts";
import { portFamily, readPortDefaults, resolvePort } from "./ports.ts";
import type { NodeBalancerType, PortSpec, ServiceSpec } from "./spec.ts";
import { readBackendVpc, readFrontendVpc } from "./vpc.ts";

/** The Go CCM's connection throttle default per its README. */
export const DEFAULT_THROTTLE = 20;

const NB_TYPES: readonly NodeBalancerType[] = ["common", "premium", "premium_40gb"];

/** The outcome: a frozen spec, or every invalid annotation (warnings in both cases). */
export type AnnotationResult =
  | { readonly ok: true; readonly spec: ServiceSpec }
  | {
    readonly ok: false;
    readonly errors: readonly InvalidAnnotationError[];
    readonly warnings: readonly AnnotationWarning[];
  };

/** Reads every annotation of `service` over `defaults`; see the module comment. */
export function parseServiceAnnotations(service: V1Service, defaults: ServiceDefaults): AnnotationResult {
  const reader = new AnnotationReader(service.metadata?.annotations);
  const servicePorts = service.spec?.ports ?? [];
  warnUnknown(reader, servicePorts.map((p) => p.port));
  const ipv6Backends = reader.bool("enable-ipv6-backends") ??
    defaults.services.enableIpv6ForNodeBalancerBackends;
  const portDefaults = readPortDefaults(reader);
  const health = readHealthCheck(reader);
  const ports = servicePorts.flatMap((sp) => resolvePort(reader, sp, portDefaults, health) ?? []);
  const families = new Set(servicePorts.map(portFamily).filter((f) => f !== undefined)).size;
  const firewall = readFirewall(reader, families);
  const backendVpc = readBackendVpc(reader, defaults, ipv6Backends);
  const frontendVpc = readFrontendVpc(reader);
  const spec = {
    throttle: reader.int("throttle", 0, 20) ?? DEFAULT_THROTTLE,
    nodeBalancerType: reader.oneOf("nodebalancer-type", NB_TYPES) ??
      defaults.services.defaultNodeBalancerType,
    nodeBalancerId: reader.id("nodebalancer-id") ?? null,
    preserve: reader.bool("preserve") ?? false,
    reservedIpv4: reader.ipv4("reserved-ipv4") ?? null,
    retainReservedIpv4: reader.bool("retain-reserved-ipv4") ?? true,
    hostnameOnlyIngress: reader.bool("hostname-only-ingress") ?? defaults.hostnameOnlyIngress,
    ipv6Ingress: reader.bool("enable-ipv6-ingress") ?? defaults.services.enableIpv6ForLoadBalancers,
    ipv6Backends,
    tags: readTags(reader),
    ports: uniquePorts(ports),
    warnings: reader.warnings,
  };
  const errors = dedupe(reader.errors);
  if (errors.length > 0) return { ok: false, errors, warnings: [...reader.warnings] };
  if (firewall === undefined || backendVpc === undefined || frontendVpc === undefined) {
    throw new TypeError("parseServiceAnnotations: an invalid value was not reported"); // a bug here, not input
  }
  return { ok: true, spec: deepFreeze<ServiceSpec>({ ...spec, firewall, backendVpc, frontendVpc }) };
}

function readTags(reader: AnnotationReader): string[] {
  const raw = reader.raw("tags");
  if (raw === undefined) return [];
  // The Go CCM splits without trimming; trimmed tags are what a person means by "a, b".
  const tags = [...new Set(raw.split(",").map((t) => t.trim()).filter((t) => t !== ""))];
  const bad = tags.find((t) => t.length < TAG_MIN_CHARS || t.length > TAG_MAX_CHARS);
  if (bad !== undefined) reader.fail("tags", raw);
  return tags;
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
