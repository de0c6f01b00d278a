/**
 * The columns kube-apiserver prints for each resource the emulator serves (upstream
 * `pkg/printers/internalversion`), and the generic Name / Created At table for anything else.
 */
import { rfc3339 } from "./input.ts";
import type { KubeObject, ResourceDef } from "./resources.ts";
import {
  age,
  AGE_COLUMN,
  arr,
  column,
  formatLabels,
  joinHostPort,
  NAME_COLUMN,
  num,
  type Printer,
  rec,
  sortedUnique,
  str,
} from "./table_cells.ts";
import { EVENT_PRINTER, EVENTS_V1_PRINTER } from "./table_events.ts";
import { POD_PRINTER } from "./table_pods.ts";

const WIDE = { priority: 1 } as const;

function nodeStatus(node: KubeObject): string {
  const ready = arr(rec(node.status).conditions).map(rec).find((c) => c.type === "Ready");
  // Only the Ready condition counts; a node that never reported one is Unknown.
  const status = ready === undefined ? ["Unknown"] : [ready.status === "True" ? "Ready" : "NotReady"];
  if (rec(node.spec).unschedulable === true) status.push("SchedulingDisabled");
  return status.join(",");
}

/** Roles from `node-role.kubernetes.io/<role>` label keys and the legacy `kubernetes.io/role` value. */
export function nodeRoles(node: KubeObject): string {
  const roles: string[] = [];
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    const prefix = "node-role.kubernetes.io/";
    if (key.startsWith(prefix) && key.length > prefix.length) roles.push(key.slice(prefix.length));
    else if (key === "kubernetes.io/role" && value !== "") roles.push(value);
  }
  return roles.length === 0 ? "<none>" : sortedUnique(roles).join(",");
}

function nodeAddress(node: KubeObject, type: string): string {
  const found = arr(rec(node.status).addresses).map(rec).find((a) => a.type === type);
  return found === undefined ? "<none>" : str(found.address);
}

const NODE_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column("Status", "Ready condition of the node, and whether scheduling is disabled."),
    column("Roles", "Roles from the node-role.kubernetes.io labels."),
    AGE_COLUMN,
    column("Version", "Kubelet version the node reports."),
    column("Internal-IP", "First InternalIP address of the node.", WIDE),
    column("External-IP", "First ExternalIP address of the node.", WIDE),
    column("OS-Image", "Operating system image the node reports.", WIDE),
    column("Kernel-Version", "Kernel version the node reports.", WIDE),
    column("Container-Runtime", "Container runtime and version the node reports.", WIDE),
  ],
  cells(node, nowMs) {
    const info = rec(rec(node.status).nodeInfo);
    const orUnknown = (v: unknown) => str(v) || "<unknown>";
    return [
      node.metadata.name ?? "",
      nodeStatus(node),
      nodeRoles(node),
      age(node, nowMs),
      str(info.kubeletVersion),
      nodeAddress(node, "InternalIP"),
      nodeAddress(node, "ExternalIP"),
      orUnknown(info.osImage),
      orUnknown(info.kernelVersion),
      orUnknown(info.containerRuntimeVersion),
    ];
  },
};

/** EXTERNAL-IP of a Service: load-balancer ingress (sorted, unique), external IPs, or a placeholder. */
export function serviceExternalIp(svc: KubeObject): string {
  const spec = rec(svc.spec);
  const externalIps = arr(spec.externalIPs).map(str);
  switch (spec.type) {
    case "ClusterIP":
    case "NodePort":
      return externalIps.length > 0 ? externalIps.join(",") : "<none>";
    case "LoadBalancer": {
      const ingress = arr(rec(rec(svc.status).loadBalancer).ingress).map(rec);
      const lb = sortedUnique(ingress.map((i) => str(i.ip) || str(i.hostname)).filter((a) => a !== ""));
      const all = [...lb, ...externalIps];
      return all.length > 0 ? all.join(",") : "<pending>";
    }
    case "ExternalName":
      return str(spec.externalName);
    default:
      return "<unknown>";
  }
}

/** PORT(S) of a Service: `port/proto`, or `port:nodePort/proto` when a node port is allocated. */
export function servicePorts(svc: KubeObject): string {
  const pieces = arr(rec(svc.spec).ports).map(rec).map((p) => {
    const nodePort = num(p.nodePort);
    const proto = str(p.protocol);
    return nodePort > 0 ? `${num(p.port)}:${nodePort}/${proto}` : `${num(p.port)}/${proto}`;
  });
  return pieces.length === 0 ? "<none>" : pieces.join(",");
}

const SERVICE_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column("Type", "How the service is exposed."),
    column("Cluster-IP", "Cluster IP address of the service."),
    column("External-IP", "Load-balancer ingress or external IP addresses."),
    column("Port(s)", "Ports the service exposes."),
    AGE_COLUMN,
    column("Selector", "Labels that select the service's pods.", WIDE),
  ],
  cells(svc, nowMs) {
    const spec = rec(svc.spec);
    const clusterIps = arr(spec.clusterIPs).map(str);
    return [
      svc.metadata.name ?? "",
      str(spec.type),
      clusterIps[0] ?? "<none>",
      serviceExternalIp(svc),
      servicePorts(svc),
      age(svc, nowMs),
      formatLabels(spec.selector),
    ];
  },
};

/** ENDPOINTS: up to three `ip:port` pairs, then `+ N more...`. */
export function formatEndpoints(endpoints: KubeObject): string {
  const subsets = arr(endpoints.subsets).map(rec);
  if (subsets.length === 0) return "<none>";
  const max = 3;
  const list: string[] = [];
  let count = 0;
  for (const subset of subsets) {
    const ips = arr(subset.addresses).map((a) => str(rec(a).ip));
    const ports = arr(subset.ports).map(rec);
    // Headless services may have addresses without ports.
    const pairs = ports.length === 0
      ? ips
      : ports.flatMap((p) => ips.map((ip) => joinHostPort(ip, num(p.port))));
    count += pairs.length;
    list.push(...pairs.slice(0, Math.max(0, max - list.length)));
  }
  const text = list.join(",");
  return count > max ? `${text} + ${count - max} more...` : text;
}

/** A printer whose middle cells come from one function: NAME, ...cells, AGE. */
function simple(columns: Printer["columns"], middle: (obj: KubeObject) => unknown[]): Printer {
  return {
    columns: [NAME_COLUMN, ...columns, AGE_COLUMN],
    cells: (obj, nowMs) => [obj.metadata.name ?? "", ...middle(obj), age(obj, nowMs)],
  };
}

function keyCount(map: unknown): number {
  return Object.keys(rec(map)).length;
}

const PRINTERS: Record<string, Printer> = {
  nodes: NODE_PRINTER,
  services: SERVICE_PRINTER,
  pods: POD_PRINTER,
  events: EVENT_PRINTER,
  "events.k8s.io/events": EVENTS_V1_PRINTER,
  endpoints: simple(
    [column("Endpoints", "Addresses and ports of the endpoints.")],
    (ep) => [formatEndpoints(ep)],
  ),
  namespaces: simple(
    [column("Status", "Phase of the namespace.")],
    (ns) => [str(rec(ns.status).phase)],
  ),
  secrets: simple(
    [column("Type", "Type of the secret."), column("Data", "Number of data keys.")],
    (s) => [str(s.type), keyCount(s.data)],
  ),
  configmaps: simple(
    [column("Data", "Number of data and binaryData keys.")],
    (cm) => [keyCount(cm.data) + keyCount(cm.binaryData)],
  ),
  "coordination.k8s.io/leases": simple(
    [column("Holder", "Identity of the current holder.")],
    (lease) => [str(rec(lease.spec).holderIdentity)],
  ),
};

function rfc3339Seconds(value: unknown): string {
  const ms = Date.parse(str(value));
  // Go prints a zero time as year 1.
  if (Number.isNaN(ms)) return "0001-01-01T00:00:00Z";
  return rfc3339(ms);
}

/** The apiserver's generic table for resources without a printer: Name and Created At. */
const DEFAULT_PRINTER: Printer = {
  columns: [NAME_COLUMN, column("Created At", "Time the object was created.", { type: "date" })],
  cells: (obj) => [obj.metadata.name ?? "", rfc3339Seconds(obj.metadata.creationTimestamp)],
  nullRowsWhenEmpty: true,
};

/** The printer of a resource. */
export function printerFor(def: ResourceDef): Printer {
  return PRINTERS[def.key] ?? DEFAULT_PRINTER;
}
