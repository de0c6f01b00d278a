/**
 * A stand-in for the pure planning modules (`annotations.ts`, `plan.ts`, `diff.ts`), so the controller's
 * I/O can be built and tested before they land: TCP configs with the Go CCM's defaults for every port,
 * backends from the eligible Nodes' InternalIPs, and only the lifecycle annotations. Replaced by
 * `parseServiceAnnotations`, `planNodeBalancer` and `diffNodeBalancer` when they land.
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type {
  CurrentNodeBalancer,
  DesiredConfig,
  DesiredNodeBalancer,
  FieldChange,
  InvalidInput,
  LifecycleResult,
  NodeBalancerAction,
  NodeBalancerDiff,
  PlanResult,
  ServicePlanner,
} from "./contracts.ts";

const PREFIX = "service.beta.kubernetes.io/linode-loadbalancer-";
const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

function bool(svc: V1Service, name: string, errors: InvalidInput[], fallback: boolean): boolean {
  const value = svc.metadata?.annotations?.[PREFIX + name];
  if (value === undefined) return fallback;
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  errors.push({ key: PREFIX + name, value, accepted: "true or false" });
  return fallback;
}

function lifecycleOf(svc: V1Service): LifecycleResult {
  const errors: InvalidInput[] = [];
  const preserve = bool(svc, "preserve", errors, false);
  const retainReservedIpv4 = bool(svc, "retain-reserved-ipv4", errors, true);
  const rawId = svc.metadata?.annotations?.[PREFIX + "nodebalancer-id"];
  let nodeBalancerId: number | undefined;
  if (rawId !== undefined) {
    nodeBalancerId = /^[1-9]\d*$/.test(rawId) ? Number(rawId) : undefined;
    if (nodeBalancerId === undefined) {
      errors.push({ key: PREFIX + "nodebalancer-id", value: rawId, accepted: "a NodeBalancer ID" });
    }
  }
  return errors.length
    ? { ok: false, errors }
    : { ok: true, spec: { preserve, retainReservedIpv4, nodeBalancerId } };
}

function isEligible(node: V1Node): boolean {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
  const excluded =
    node.metadata?.labels?.["node.kubernetes.io/exclude-from-external-load-balancers"] !== undefined;
  const deleting = (node.spec?.taints ?? []).some((t) => t.key === "ToBeDeletedByClusterAutoscaler");
  return ready && !excluded && !deleting;
}

function backendLabel(name: string): string {
  let label = name;
  while (label.length < 3) label = `node-${label}`;
  return label.slice(0, 32);
}

function configsOf(svc: V1Service, nodes: readonly V1Node[]): DesiredConfig[] {
  const backends = nodes.filter(isEligible).flatMap((n) => {
    const ip = n.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
    return ip ? [{ ip, label: backendLabel(n.metadata?.name ?? "") }] : [];
  });
  return (svc.spec?.ports ?? []).map((p) => ({
    port: p.port,
    protocol: "tcp",
    algorithm: "roundrobin",
    proxy_protocol: "none",
    check: "connection",
    check_interval: 5,
    check_timeout: 3,
    check_attempts: 2,
    check_passive: true,
    nodes: backends.map((b) => ({
      address: `${b.ip}:${p.nodePort}`,
      label: b.label,
      weight: 100,
      mode: "accept",
    })),
  }));
}

/** Options of the interim planner. */
export interface InterimPlannerOptions {
  region: string;
  prefix: string;
  tags?: readonly string[];
  hostnameOnlyIngress?: boolean;
  ipv6Ingress?: boolean;
}

/** The interim `ServicePlanner` (see the file comment). */
export function interimPlanner(options: InterimPlannerOptions): ServicePlanner {
  const ownershipTag = (svc: V1Service) => `ccm:${svc.metadata?.uid ?? ""}`;
  return {
    ownershipTag,
    lifecycle: lifecycleOf,
    plan(svc, nodes): PlanResult {
      const lifecycle = lifecycleOf(svc);
      const errors = lifecycle.ok ? [] : [...lifecycle.errors];
      const hostnameOnlyIngress = bool(
        svc,
        "hostname-only-ingress",
        errors,
        options.hostnameOnlyIngress ?? false,
      );
      const ipv6Ingress = bool(svc, "enable-ipv6-ingress", errors, options.ipv6Ingress ?? false);
      if (!lifecycle.ok || errors.length) return { ok: false, errors };
      const desired: DesiredNodeBalancer = {
        label: `${options.prefix}-${(svc.metadata?.uid ?? "").replaceAll("-", "").slice(0, 12)}`,
        region: options.region,
        tags: [...(options.tags ?? []), ownershipTag(svc)],
        client_conn_throttle: 0,
        configs: configsOf(svc, nodes),
      };
      return { ok: true, spec: { ...lifecycle.spec, hostnameOnlyIngress, ipv6Ingress }, desired };
    },
  };
}

const SETTINGS = [
  "protocol",
  "algorithm",
  "proxy_protocol",
  "check",
  "check_interval",
  "check_timeout",
  "check_attempts",
  "check_passive",
] as const;

function diffConfig(
  current: CurrentNodeBalancer["configs"][number],
  desired: DesiredConfig,
  changes: FieldChange[],
): NodeBalancerAction[] {
  const { nodes, ...settings } = desired;
  for (const field of SETTINGS) {
    if (desired[field] !== undefined && desired[field] !== current[field]) {
      changes.push({ field: `port ${desired.port} ${field}`, old: current[field], new: desired[field] });
    }
  }
  const settingsChanged = changes.some((c) => c.field.startsWith(`port ${desired.port} `));
  const byAddress = new Map(current.nodes.map((n) => [n.address, n]));
  const sameNodes = nodes.length === current.nodes.length && nodes.every((n) => {
    const old = byAddress.get(n.address);
    return old && old.label === n.label && old.weight === n.weight && old.mode === n.mode;
  });
  if (!sameNodes) {
    const withIds = nodes.map((n) => ({ ...n, id: byAddress.get(n.address)?.id }));
    return [{ kind: "rebuildConfig", configId: current.id, body: { ...settings, nodes: withIds } }];
  }
  return settingsChanged ? [{ kind: "updateConfig", configId: current.id, body: settings }] : [];
}

/** The interim differ (see the file comment). */
export function interimDiff(current: CurrentNodeBalancer, desired: DesiredNodeBalancer): NodeBalancerDiff {
  const actions: NodeBalancerAction[] = [];
  const changes: FieldChange[] = [];
  const body: { tags?: string[]; client_conn_throttle?: number } = {};
  const tags = [...desired.tags].sort();
  if (JSON.stringify([...current.nb.tags].sort()) !== JSON.stringify(tags)) body.tags = desired.tags;
  const throttle = current.nb.client_conn_throttle ?? 0;
  if (throttle !== desired.client_conn_throttle) {
    body.client_conn_throttle = desired.client_conn_throttle;
    changes.push({ field: "client_conn_throttle", old: throttle, new: desired.client_conn_throttle });
  }
  if (Object.keys(body).length) actions.push({ kind: "update", body });
  for (const config of desired.configs) {
    const found = current.configs.find((c) => c.port === config.port);
    if (!found) actions.push({ kind: "createConfig", config });
    else actions.push(...diffConfig(found, config, changes));
  }
  for (const c of current.configs) {
    if (!desired.configs.some((d) => d.port === c.port)) {
      actions.push({ kind: "deleteConfig", configId: c.id });
    }
  }
  return { actions, changes };
}
