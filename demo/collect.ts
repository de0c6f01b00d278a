/** Reads a `DemoSnapshot` out of the running emulators and CCM replicas. */
import type { V1Node } from "@kubernetes/client-node";
import type { RunningCcm } from "../ccm.ts";
import type { KubeSim, LinodeSim } from "../sim/mod.ts";
import type { LogRing } from "./log_ring.ts";
import type {
  ApiStats,
  DemoSnapshot,
  EventRow,
  LeaderInfo,
  LoadBalancerInfo,
  NodeRow,
  RouteInfo,
  StoryLine,
} from "./snapshot.ts";

/** One CCM replica running in this process. */
export interface Replica {
  readonly label: string;
  readonly ccm: RunningCcm;
  /** False once its `runCcm` has returned. */
  readonly running: boolean;
}

/** The emulators a snapshot reads (any seeded world). */
export interface DemoSims {
  readonly linode: LinodeSim;
  readonly kube: KubeSim;
}

/** Where a snapshot is read from. */
export interface SnapshotSources {
  readonly world: DemoSims;
  /** The story panel's text before the story starts. */
  readonly preview?: string;
  readonly replicas: readonly Replica[];
  readonly logs: LogRing;
  readonly story: readonly StoryLine[];
  readonly lease: { readonly namespace: string; readonly name: string };
  readonly kubeconfig: string;
  readonly startedAtMs: number;
}

const CLOUD_TAINT_PREFIX = "node.cloudprovider.kubernetes.io/";
const UNINITIALIZED_KEY = `${CLOUD_TAINT_PREFIX}uninitialized`;
const EVENTS_SHOWN = 8;
const TOP_ROUTES = 4;

/** Walks `path` into an object from the emulator's store, whose shape is not typed. */
function at(value: unknown, ...path: string[]): unknown {
  let v = value;
  for (const key of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}

function address(node: V1Node, type: string): string | undefined {
  return node.status?.addresses?.find((a) => a.type === type)?.address;
}

function routeOf(node: V1Node): NodeRow["route"] {
  const c = node.status?.conditions?.find((c) => c.type === "NetworkUnavailable");
  if (c?.reason === "RouteCreated") return "routed";
  return c?.reason === "NoRouteCreated" ? "failed" : undefined;
}

/** Turns a Node into its view row. */
export function nodeRow(node: V1Node): NodeRow {
  const taints = node.spec?.taints ?? [];
  const providerID = node.spec?.providerID || undefined;
  const podCidrs = node.spec?.podCIDRs ?? (node.spec?.podCIDR ? [node.spec.podCIDR] : []);
  const route = routeOf(node);
  return {
    name: node.metadata?.name ?? "",
    ready: (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
    initialised: providerID !== undefined && !taints.some((t) => t.key === UNINITIALIZED_KEY),
    providerID,
    internalIp: address(node, "InternalIP"),
    externalIp: address(node, "ExternalIP"),
    taints: taints.map((t) =>
      t.key.startsWith(CLOUD_TAINT_PREFIX) ? t.key.slice(CLOUD_TAINT_PREFIX.length) : t.key
    ),
    ...(podCidrs.length > 0 ? { podCidr: podCidrs.join(",") } : {}),
    ...(route ? { route } : {}),
  };
}

function routeInfo(world: DemoSims): RouteInfo {
  const ranges = world.linode.world.listInstances().reduce(
    (n, i) => n + world.linode.world.ipRanges(i.id).length,
    0,
  );
  return { ranges };
}

function leaderInfo(src: SnapshotSources): LeaderInfo {
  const lease = src.world.kube.store.get("leases", src.lease.name, src.lease.namespace);
  const acquired = str(at(lease, "spec", "acquireTime"));
  return {
    holder: str(at(lease, "spec", "holderIdentity")) || undefined,
    acquiredAtMs: acquired ? Date.parse(acquired) : undefined,
    transitions: num(at(lease, "spec", "leaseTransitions")) ?? 0,
    replicas: src.replicas.map((r) => ({
      label: r.label,
      identity: r.ccm.identity,
      state: !r.running ? "stopped" : r.ccm.fence.leading ? "leading" : "standby",
      linodeCalls: Object.values(r.ccm.linode.callCounts()).reduce((a, b) => a + b, 0),
    })),
  };
}

function loadBalancers(world: DemoSims): LoadBalancerInfo {
  const services = world.kube.store.list("services").filter((s) => at(s, "spec", "type") === "LoadBalancer");
  const name = (s: (typeof services)[number]) =>
    `${s.metadata.namespace ?? "default"}/${s.metadata.name ?? ""}`;
  const pending = services.filter((s) => {
    const ingress = at(s, "status", "loadBalancer", "ingress");
    return !Array.isArray(ingress) || ingress.length === 0;
  });
  const nodeBalancers = world.linode.world.nodeBalancers();
  const rows = services.map((s) => {
    const ip = str(at(s, "status", "loadBalancer", "ingress", "0", "ip"));
    const hostname = str(at(s, "status", "loadBalancer", "ingress", "0", "hostname"));
    // A hostname-only status (hostname-only-ingress) names its NodeBalancer by hostname.
    const nb = nodeBalancers.find((n) => ip !== undefined ? n.ipv4 === ip : n.hostname === hostname);
    return {
      service: name(s),
      ip: ip ?? nb?.ipv4,
      nodeBalancerId: nb?.id,
      backends: nb?.configs[0]?.nodes.length ?? 0,
    };
  });
  return { nodeBalancers: nodeBalancers.length, services: services.length, pending: pending.map(name), rows };
}

function apiStats(world: DemoSims, nowMs: number): ApiStats {
  const { total, counts } = world.linode.calls.snapshot();
  const lastMinute = world.linode.calls.log.filter((c) => c.atMs > nowMs - 60_000).length;
  const top = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(
    0,
    TOP_ROUTES,
  );
  return { total, lastMinute, top };
}

function eventRows(world: DemoSims): EventRow[] {
  const rows = world.kube.store.list("events").map((e): EventRow => {
    const when = str(at(e, "lastTimestamp")) ?? str(at(e, "eventTime")) ?? e.metadata.creationTimestamp;
    return {
      atMs: when ? Date.parse(String(when)) : 0,
      type: str(at(e, "type")) ?? "Normal",
      reason: str(at(e, "reason")) ?? "",
      object: `${str(at(e, "involvedObject", "kind")) ?? "?"}/${str(at(e, "involvedObject", "name")) ?? "?"}`,
      message: str(at(e, "message")) ?? "",
      count: num(at(e, "count")) ?? 1,
    };
  });
  return rows.sort((a, b) => b.atMs - a.atMs).slice(0, EVENTS_SHOWN).reverse();
}

/** Reads the current state of everything the view shows. */
export function collectSnapshot(src: SnapshotSources, nowMs: number): DemoSnapshot {
  const nodes = src.replicas[0]?.ccm.nodes.list() ?? [];
  return {
    nowMs,
    startedAtMs: src.startedAtMs,
    kubeconfig: src.kubeconfig,
    leader: leaderInfo(src),
    nodes: nodes.map(nodeRow).sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true })),
    loadBalancers: loadBalancers(src.world),
    routes: routeInfo(src.world),
    api: apiStats(src.world, nowMs),
    events: eventRows(src.world),
    logs: src.logs.lines(),
    story: [...src.story],
    preview: src.preview,
  };
}
