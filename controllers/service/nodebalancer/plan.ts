/**
 * `planNodeBalancer`: from a Service, its parsed annotations (`ServiceSpec`) and the cluster's Nodes, the
 * NodeBalancer it should have: label, tags, throttle, type, one config per port with its health check and
 * TLS material, and backends `nodeIP:nodePort` on every eligible Node. `sessionAffinity: ClientIP` changes
 * nothing here: as the Go CCM's README says, kube-proxy keeps the affinity. Pure: the caller resolves VPC
 * subnet names and reads TLS Secrets first, and passes them in.
 *
 * Which Nodes back a Service's NodeBalancer and at which address: upstream's `stableNodeSetPredicates`
 * (k8s.io/cloud-provider v0.35.4, the version the Go CCM pins): not being deleted, not excluded by the
 * `node.kubernetes.io/exclude-from-external-load-balancers` label, not tainted `ToBeDeletedByClusterAutoscaler`.
 * Readiness is not among them: a NotReady Node keeps its backends (the NodeBalancer's health checks take it out
 * of rotation), so a flapping Node writes nothing. The address is the Go CCM's: the public IPv6 annotation for IPv6
 * backends; the first InternalIP (the VPC address, which the node controller lists first) with VPC
 * backends; else the `node.k8s.linode.com/private-ip` annotation, then the first InternalIP.
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { builtinCidr4, cidr4Contains, isIpAddress, isPrivateIpv4 } from "../../../common/net.ts";
import { parseGoBool } from "../../../config/env.ts";
import { PRIVATE_IP_ANNOTATION, PUBLIC_IPV6_ANNOTATION } from "../../node/addresses.ts";
import {
  type DesiredConfig,
  type DesiredNode,
  type DesiredNodeBalancer,
  type DesiredTls,
  type DesiredVpc,
  SecretPem,
} from "./desired.ts";
import { type DesiredFirewall, planFirewallRules } from "../firewall/rules.ts";
import type { TlsMaterial } from "../tls/secrets.ts";
import { nodeBalancerLabel, nodeBalancerTags } from "../ownership.ts";
import { deepFreeze } from "../annotations/parse.ts";
import { portFamily } from "../annotations/ports.ts";
import {
  type BackendVpcSpec,
  type FrontendVpcSpec,
  type PortFamily,
  type PortSpec,
  type ServiceDefaults,
  ServicePlanError,
  type ServiceSpec,
} from "../annotations/spec.ts";

/** What the planner needs besides the Service, its spec and the Nodes. */
export interface PlanOptions {
  readonly defaults: ServiceDefaults;
  /** `spec.backendVpc.subnet` resolved to an ID (required when `spec.backendVpc` is set). */
  readonly backendSubnetId?: number | null;
  /** `spec.frontendVpc.subnet` resolved to an ID (required when `spec.frontendVpc` is set). */
  readonly frontendSubnetId?: number | null;
  /** TLS material by Secret name (the Service's namespace); absent names are missing Secrets. */
  readonly tls?: ReadonlyMap<string, TlsMaterial>;
  /** The cluster identity tag (`../ownership.ts`), put on the NodeBalancer beside its ownership tag. */
  readonly clusterIdTag?: string;
}

/** The plan, or why there is none; `skippedNodes` are eligible Nodes without a usable address. */
export type PlanResult =
  | {
    readonly ok: true;
    readonly desired: DesiredNodeBalancer;
    readonly skippedNodes: readonly SkippedNode[];
  }
  | { readonly ok: false; readonly errors: readonly ServicePlanError[] };

const PEM_CERT = /-----BEGIN CERTIFICATE-----/;
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/** Plans the Service's NodeBalancer; see the module comment. */
export function planNodeBalancer(
  service: V1Service,
  spec: ServiceSpec,
  nodes: readonly V1Node[],
  options: PlanOptions,
): PlanResult {
  const errors: ServicePlanError[] = [];
  const name = `${service.metadata?.namespace ?? ""}/${service.metadata?.name ?? ""}`;
  const uid = service.metadata?.uid ?? "";
  if (!/^[0-9a-fA-F-]{32,}$/.test(uid)) {
    errors.push(new ServicePlanError("MissingUid", `Service ${name} has no UID`));
  }
  const nodePorts = checkServicePorts(service, errors);
  const backendVpc = vpcOf(spec.backendVpc, options.backendSubnetId, "backend", errors);
  const frontendVpc = vpcOf(spec.frontendVpc, options.frontendSubnetId, "frontend", errors);
  const mode: BackendAddressMode = spec.ipv6Backends ? "ipv6" : spec.backendVpc ? "vpc" : "private";
  const { backends, skipped } = planBackends(nodes, mode);
  if (backends.length === 0) errors.push(noNodes(nodes.length, skipped));
  const tls = spec.ports.map((p) => tlsOf(p, options.tls, errors));
  if (errors.length > 0) return { ok: false, errors };
  const subnetId = mode === "vpc" ? backendVpc?.subnet_id : undefined;
  const configs = spec.ports.map((p, i) => {
    const nodesOfPort = backends.map((b) => nodeOf(b, nodePorts.get(p.port) ?? 0, p.family, subnetId));
    return configOf(p, tls[i] ?? null, nodesOfPort);
  });
  const { defaults } = options;
  const label = nodeBalancerLabel(defaults.services.nodeBalancerPrefix, uid);
  const tags = nodeBalancerTags(
    defaults.clusterName,
    defaults.services.nodeBalancerTags,
    spec.tags,
    uid,
    options.clusterIdTag,
  );
  const desired: DesiredNodeBalancer = {
    label,
    region: defaults.region,
    type: spec.nodeBalancerType,
    tags,
    client_conn_throttle: spec.throttle,
    ipv4: spec.reservedIpv4,
    backendVpc,
    frontendVpc,
    firewall: firewallOf(spec, service.metadata?.name ?? "", label, tags),
    configs,
    ...(spec.keep.length > 0 ? { keep: spec.keep } : {}),
  };
  return { ok: true, desired: deepFreeze(desired), skippedNodes: skipped };
}

/** The nodePort of each TCP/UDP port; SCTP ports and ports without a nodePort are errors. */
function checkServicePorts(service: V1Service, errors: ServicePlanError[]): Map<number, number> {
  const nodePorts = new Map<number, number>();
  const ports = service.spec?.ports ?? [];
  if (ports.length === 0) errors.push(new ServicePlanError("UnsupportedServicePort", "Service has no ports"));
  for (const p of ports) {
    if (portFamily(p) === undefined) {
      const text = `Service port ${p.port}/${p.protocol}: NodeBalancers carry TCP and UDP only`;
      errors.push(new ServicePlanError("UnsupportedServicePort", text));
    } else if (!p.nodePort) {
      const text = `Service port ${p.port} has no nodePort (is spec.allocateLoadBalancerNodePorts false?)`;
      errors.push(new ServicePlanError("MissingNodePort", text));
    } else {
      nodePorts.set(p.port, p.nodePort);
    }
  }
  return nodePorts;
}

function nodeOf(b: Backend, nodePort: number, family: PortFamily, subnetId: number | undefined): DesiredNode {
  return {
    address: backendAddress(b.ip, nodePort),
    label: b.label,
    weight: 100,
    ...(family === "udp" ? {} : { mode: "accept" as const }),
    ...(subnetId === undefined ? {} : { subnet_id: subnetId }),
    nodeName: b.nodeName,
  };
}

function noNodes(total: number, skipped: readonly SkippedNode[]): ServicePlanError {
  const why = skipped.length > 0
    ? `; left out: ${skipped.slice(0, 5).map((s) => `${s.nodeName} (${s.reason})`).join(", ")}`
    : "";
  return new ServicePlanError(
    "NoEligibleNodes",
    `No eligible Node among ${total} for the NodeBalancer${why}`,
  );
}

function vpcOf(
  spec: BackendVpcSpec | FrontendVpcSpec | null,
  subnetId: number | null | undefined,
  side: "backend" | "frontend",
  errors: ServicePlanError[],
): DesiredVpc | null {
  if (spec === null) return null;
  if (spec.subnet.kind === "id") subnetId = spec.subnet.subnetId;
  if (subnetId === null || subnetId === undefined) {
    const s = spec.subnet.kind === "names" ? `${spec.subnet.vpcName}/${spec.subnet.subnetName}` : "";
    errors.push(
      new ServicePlanError("UnresolvedSubnet", `The ${side} VPC subnet ${s} is not resolved to an ID`),
    );
    return null;
  }
  return {
    subnet_id: subnetId,
    ipv4_range: spec.ipv4Range,
    ipv6_range: "ipv6Range" in spec ? spec.ipv6Range : null,
    ipv4_range_auto_assign: "ipv4RangeAutoAssign" in spec ? spec.ipv4RangeAutoAssign : false,
  };
}

/** The TLS material of an https port; never puts key text into an error. */
function tlsOf(
  port: PortSpec,
  secrets: ReadonlyMap<string, TlsMaterial> | undefined,
  errors: ServicePlanError[],
): DesiredTls | null {
  if (port.protocol !== "https" || port.tlsSecretName === null) return null;
  const secretName = port.tlsSecretName;
  const material = secrets?.get(secretName);
  if (material === undefined) {
    errors.push(
      new ServicePlanError("MissingTlsSecret", `TLS Secret ${secretName} of port ${port.port} not found`),
    );
    return null;
  }
  const cert = material.cert.trim();
  const key = material.key.trim();
  if (!PEM_CERT.test(cert) || !PEM_KEY.test(key)) {
    const text =
      `TLS Secret ${secretName} of port ${port.port} needs a PEM certificate in tls.crt and key in tls.key`;
    errors.push(new ServicePlanError("InvalidTlsSecret", text));
    return null;
  }
  return {
    secretName,
    ssl_cert: cert,
    ssl_key: new SecretPem(key),
    fingerprint: material.fingerprint ?? null,
  };
}

function configOf(p: PortSpec, tls: DesiredTls | null, nodes: DesiredNode[]): DesiredConfig {
  return {
    port: p.port,
    family: p.family,
    protocol: p.protocol,
    proxy_protocol: p.proxyProtocol,
    algorithm: p.algorithm,
    stickiness: p.stickiness,
    check: p.check.type,
    check_interval: p.check.intervalSec,
    check_timeout: p.check.timeoutSec,
    check_attempts: p.check.attempts,
    check_passive: p.check.passive,
    check_path: p.check.path,
    check_body: p.check.body,
    udp_check_port: p.udpCheckPort,
    tls,
    nodes,
    ...(p.keep.length > 0 ? { keep: p.keep } : {}),
  };
}

function firewallOf(spec: ServiceSpec, serviceName: string, label: string, tags: string[]): DesiredFirewall {
  const fw = spec.firewall;
  if (fw.kind !== "acl") return fw;
  const rules = planFirewallRules(fw, spec.ports, { serviceName, nodeBalancerLabel: label });
  return { kind: "acl", label, tags, rules };
}

// ---------------------------------------------------------------------------------------------------------
// Backends: which Nodes, at which address.

/** Label that keeps a Node out of every load balancer (its value does not matter). */
export const EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
/** Taint the cluster autoscaler puts on a Node it is about to delete. */
export const TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler";

/** Linode's private network: where a Linode's private IPv4 comes from, the only non-VPC IPv4 backends. */
const LINODE_PRIVATE_NETWORK = builtinCidr4("192.168.128.0/17");

/** Where a backend's address comes from. */
export type BackendAddressMode = "vpc" | "private" | "ipv6";

/** One Node as a NodeBalancer backend, before the port is added. */
export interface Backend {
  readonly nodeName: string;
  /** Valid for the API: 3 to 32 characters. */
  readonly label: string;
  readonly ip: string;
}

/** A Node left out although eligible, and why (for a Warning Event). */
export interface SkippedNode {
  readonly nodeName: string;
  readonly reason: string;
}

/**
 * Upstream's `nodeIncludedPredicate`: without the exclusion label, or with a value Go's `strconv.ParseBool`
 * reads as false; any other value (`true`, `""`, `yes`) excludes.
 */
export function isIncludedNode(node: V1Node): boolean {
  const labels = node.metadata?.labels ?? {};
  if (!Object.hasOwn(labels, EXCLUDE_LABEL)) return true;
  return parseGoBool(labels[EXCLUDE_LABEL] ?? "") === false;
}

/** True when the Node may carry load-balancer traffic (upstream's `stableNodeSetPredicates`). */
export function isEligibleNode(node: V1Node): boolean {
  const deleting = node.metadata?.deletionTimestamp !== undefined && node.metadata.deletionTimestamp !== null;
  const leaving = (node.spec?.taints ?? []).some((t) => t.key === TO_BE_DELETED_TAINT);
  return !deleting && isIncludedNode(node) && !leaving;
}

/** The Go CCM's backend label: the Node name cut to 32 characters, `node-` in front when shorter than 3. */
export function backendLabel(nodeName: string): string {
  const padded = nodeName.length < 3 ? `node-${nodeName}` : nodeName;
  return padded.slice(0, 32);
}

function firstInternalIp(node: V1Node): string | undefined {
  return node.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
}

/** The Node's backend IP for `mode`, or the reason it has none the API would take. */
export function backendIp(node: V1Node, mode: BackendAddressMode): { ip: string } | { reason: string } {
  const annotations = node.metadata?.annotations ?? {};
  if (mode === "ipv6") {
    const ip = annotations[PUBLIC_IPV6_ANNOTATION]?.split("/")[0] ?? "";
    return isIpAddress(ip) && ip.includes(":")
      ? { ip }
      : { reason: `no public IPv6 (${PUBLIC_IPV6_ANNOTATION})` };
  }
  const ip = (mode === "private" ? annotations[PRIVATE_IP_ANNOTATION] : undefined) ?? firstInternalIp(node);
  if (ip === undefined) return { reason: "no InternalIP" };
  // The API takes a non-VPC IPv4 backend only on Linode's private network, a VPC one only inside a backend
  // subnet (RFC 1918): any other address would fail every port of the NodeBalancer.
  if (mode === "vpc") {
    return isPrivateIpv4(ip) ? { ip } : { reason: `InternalIP ${ip} is not a private IPv4 address` };
  }
  return cidr4Contains(LINODE_PRIVATE_NETWORK, ip)
    ? { ip }
    : { reason: `${ip} is not on Linode's private network 192.168.128.0/17` };
}

function createdMs(node: V1Node): number {
  // A Date from the informer; a Node object not decoded by client-node carries the RFC 3339 string.
  const at: unknown = node.metadata?.creationTimestamp;
  const ms = at instanceof Date ? at.getTime() : Date.parse(String(at));
  return Number.isNaN(ms) ? 0 : ms;
}

/** True when `a` holds an address rather than `b`: the newer Node, then the later name (any fixed order). */
function holdsAddress(a: { node: V1Node; name: string }, b: { node: V1Node; name: string }): boolean {
  const [x, y] = [createdMs(a.node), createdMs(b.node)];
  return x !== y ? x > y : a.name > b.name;
}

/**
 * The backends among `nodes`, sorted by Node name, and the eligible Nodes left out. One backend per IP: a
 * replaced Node's address can go to its successor's Linode while the old Node waits (up to a listing TTL) for
 * the lifecycle controller to delete it. A second backend at the same `ip:port` reaches the same machine, and
 * the emulator refuses it ("Address is already used by another node"; the reference does not say). Each
 * refusal was retried, and the NodeBalancer re-read, until the old Node went: 4 calls a NodeBalancer every
 * few seconds. The newest Node claiming an IP holds it (its Linode got the address last). The other Node is
 * not reported as left out: its address is still backed.
 */
export function planBackends(
  nodes: readonly V1Node[],
  mode: BackendAddressMode,
): { backends: Backend[]; skipped: SkippedNode[] } {
  const byIp = new Map<string, { node: V1Node; name: string }>();
  const skipped: SkippedNode[] = [];
  for (const node of nodes.filter(isEligibleNode)) {
    const name = node.metadata?.name ?? "";
    const found = backendIp(node, mode);
    if (!("ip" in found)) {
      skipped.push({ nodeName: name, reason: found.reason });
      continue;
    }
    const held = byIp.get(found.ip);
    if (!held || holdsAddress({ node, name }, held)) byIp.set(found.ip, { node, name });
  }
  const backends = [...byIp].map(([ip, { name }]) => ({ nodeName: name, label: backendLabel(name), ip }));
  backends.sort((a, b) => a.nodeName < b.nodeName ? -1 : a.nodeName > b.nodeName ? 1 : 0);
  return { backends, skipped };
}

/** `ip:port`, with brackets for IPv6 (Go's `net.JoinHostPort`). */
export function backendAddress(ip: string, nodePort: number): string {
  return ip.includes(":") ? `[${ip}]:${nodePort}` : `${ip}:${nodePort}`;
}

/**
 * Whether the backends now on a NodeBalancer are IPv6 (`[ip]:port`) or IPv4 addresses; undefined when it has
 * none or both (nothing to keep).
 */
export function backendFamilyOf(nodes: readonly { readonly address: string }[]): boolean | undefined {
  const v6 = nodes.filter((n) => n.address.startsWith("[")).length;
  if (nodes.length === 0 || (v6 > 0 && v6 < nodes.length)) return undefined;
  return v6 > 0;
}
