/** Service defaulting like the apiserver's: cluster IP and node port allocation, kept across updates. */
import { isRecord, type KubeObject, type ResourceDef } from "./resources.ts";
import { fieldError, invalid, type StatusCause } from "./status.ts";

const TYPES = ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"];
const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;

type Port = Record<string, unknown>;

function specOf(obj: KubeObject): Record<string, unknown> {
  if (!isRecord(obj.spec)) obj.spec = {};
  return obj.spec as Record<string, unknown>;
}

function portsOf(spec: Record<string, unknown>): Port[] {
  return Array.isArray(spec.ports) ? spec.ports.filter(isRecord) : [];
}

function usedValues(
  services: Iterable<KubeObject>,
  self: KubeObject,
): { ips: Set<string>; ports: Set<number> } {
  const ips = new Set<string>();
  const ports = new Set<number>();
  for (const svc of services) {
    if (svc.metadata.uid === self.metadata.uid && svc.metadata.uid !== undefined) continue;
    const spec = isRecord(svc.spec) ? svc.spec : {};
    if (typeof spec.clusterIP === "string") ips.add(spec.clusterIP);
    for (const p of portsOf(spec)) if (typeof p.nodePort === "number") ports.add(p.nodePort);
  }
  return { ips, ports };
}

function allocateIp(used: Set<string>): string {
  // 10.96.0.0/12 as kubeadm uses; .1 belongs to the kubernetes service upstream.
  for (let n = 10; n < 1 << 20; n++) {
    const ip = `10.${96 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;
    if (!used.has(ip)) return ip;
  }
  throw new RangeError("Cannot allocate a cluster IP: range exhausted");
}

function allocatePort(used: Set<number>): number {
  const span = NODE_PORT_MAX - NODE_PORT_MIN + 1;
  const start = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i++) {
    const port = NODE_PORT_MIN + ((start + i) % span);
    if (!used.has(port)) return port;
  }
  throw new RangeError("Cannot allocate a node port: range exhausted");
}

function portCauses(type: string, ports: Port[], used: Set<number>): StatusCause[] {
  const causes: StatusCause[] = [];
  if (ports.length === 0 && type !== "ExternalName") causes.push(fieldError("spec.ports", "Required"));
  ports.forEach((p, i) => {
    if (typeof p.port !== "number" || p.port < 1 || p.port > 65535) {
      causes.push(
        fieldError(`spec.ports[${i}].port`, "Invalid", "must be between 1 and 65535, inclusive", p.port),
      );
    }
    if (!["TCP", "UDP", "SCTP"].includes(String(p.protocol))) {
      causes.push(fieldError(`spec.ports[${i}].protocol`, "NotSupported", undefined, p.protocol));
    }
    const np = p.nodePort;
    if (np !== undefined && (typeof np !== "number" || np < NODE_PORT_MIN || np > NODE_PORT_MAX)) {
      causes.push(
        fieldError(`spec.ports[${i}].nodePort`, "Invalid", "provided port is not in the valid range", np),
      );
    } else if (typeof np === "number" && used.has(np)) {
      causes.push(
        fieldError(`spec.ports[${i}].nodePort`, "Invalid", "provided port is already allocated", np),
      );
    }
  });
  if (ports.length > 1 && ports.some((p) => typeof p.name !== "string" || p.name === "")) {
    causes.push(fieldError("spec.ports[0].name", "Required"));
  }
  return causes;
}

function keepAllocated(spec: Record<string, unknown>, oldSpec: Record<string, unknown>): StatusCause[] {
  if (spec.clusterIP === undefined || spec.clusterIP === "") {
    spec.clusterIP = oldSpec.clusterIP;
    if (oldSpec.clusterIPs !== undefined) spec.clusterIPs = oldSpec.clusterIPs;
  } else if (oldSpec.clusterIP !== undefined && spec.clusterIP !== oldSpec.clusterIP) {
    return [fieldError("spec.clusterIPs[0]", "Invalid", "may not change once set", spec.clusterIP)];
  }
  const oldPorts = portsOf(oldSpec);
  for (const p of portsOf(spec)) {
    if (p.nodePort !== undefined) continue;
    const same = oldPorts.find((o) => o.port === p.port && (o.protocol ?? "TCP") === p.protocol);
    if (typeof same?.nodePort === "number") p.nodePort = same.nodePort;
  }
  return [];
}

/** Defaults, validates and allocates a Service's spec; `old` is the stored object on update. */
export function prepareService(
  def: ResourceDef,
  obj: KubeObject,
  old: KubeObject | undefined,
  services: Iterable<KubeObject>,
): void {
  const spec = specOf(obj);
  spec.type ??= "ClusterIP";
  spec.sessionAffinity ??= "None";
  const type = String(spec.type);
  const ports = portsOf(spec);
  for (const p of ports) {
    p.protocol ??= "TCP";
    p.targetPort ??= p.port;
  }
  const causes: StatusCause[] = TYPES.includes(type)
    ? []
    : [fieldError("spec.type", "NotSupported", undefined, type)];
  if (old) causes.push(...keepAllocated(spec, isRecord(old.spec) ? old.spec : {}));
  const used = usedValues(services, obj);
  causes.push(...portCauses(type, ports, used.ports));
  if (causes.length > 0) throw invalid(def, obj.metadata.name ?? "", causes);
  if (type === "ExternalName") return;
  if (spec.clusterIP === undefined || spec.clusterIP === "") spec.clusterIP = allocateIp(used.ips);
  spec.clusterIPs ??= [spec.clusterIP];
  spec.ipFamilies ??= ["IPv4"];
  spec.ipFamilyPolicy ??= "SingleStack";
  spec.internalTrafficPolicy ??= "Cluster";
  const wantsNodePorts = type === "NodePort" ||
    (type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts !== false);
  if (type === "LoadBalancer") spec.allocateLoadBalancerNodePorts ??= true;
  if (type === "NodePort" || type === "LoadBalancer") spec.externalTrafficPolicy ??= "Cluster";
  for (const p of ports) {
    if (!wantsNodePorts && type !== "LoadBalancer") delete p.nodePort;
    else if (wantsNodePorts && p.nodePort === undefined) {
      p.nodePort = allocatePort(used.ports);
      used.ports.add(p.nodePort as number);
    }
  }
}
