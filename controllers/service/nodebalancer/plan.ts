/**
 * `planNodeBalancer`: from a Service, its parsed annotations (`ServiceSpec`) and the cluster's Nodes, the
 * NodeBalancer it should have: label, tags, throttle, type, one config per port with its health check and
 * TLS material, and backends `nodeIP:nodePort` on every eligible Node. `sessionAffinity: ClientIP` changes
 * nothing here: as the Go CCM's README says, kube-proxy keeps the affinity. Pure: the caller resolves VPC
 * subnet names and reads TLS Secrets first, and passes them in.
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import {
  type Backend,
  backendAddress,
  type BackendAddressMode,
  planBackends,
  type SkippedNode,
} from "./backends.ts";
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
  /** The cluster identity tag (`../identity.ts`), put on the NodeBalancer beside its ownership tag. */
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
