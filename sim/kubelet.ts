/** What kubelet does to the apiserver when a machine joins: register a Node and report its status. */
import type { V1Node, V1NodeCondition, V1NodeSystemInfo, V1Taint } from "@kubernetes/client-node";
import { rfc3339 } from "./kube/input.ts";
import type { KubeSim } from "./kube/server.ts";

/** Taint kubelet sets with `--cloud-provider=external` until the CCM initialises the Node. */
export const UNINITIALIZED_TAINT: V1Taint = {
  key: "node.cloudprovider.kubernetes.io/uninitialized",
  value: "true",
  effect: "NoSchedule",
};

/** The kubelet version simulated Nodes report (the emulator claims to be a 1.32 apiserver). */
export const KUBELET_VERSION = "v1.32.0";

/** Options of `kubeletNode`. */
export interface KubeletNodeOptions {
  providerID?: string;
  taints?: V1Taint[];
  labels?: Record<string, string>;
  /** `false` gives a NotReady condition (default Ready). */
  ready?: boolean;
  addresses?: { type: string; address: string }[];
  /**
   * `--node-ip` (one IP or a dual-stack pair, comma-separated): kubelet records it in the
   * `alpha.kubernetes.io/provided-node-ip` annotation and, having no addresses yet, registers the Node with
   * each as an InternalIP, then its hostname (with an external cloud provider, since Kubernetes 1.29).
   */
  nodeIp?: string;
  podCidr?: string;
  /** Overrides of `status.nodeInfo` (default: a Debian 12 machine with containerd, like LKE's). */
  nodeInfo?: Partial<V1NodeSystemInfo>;
  /** When the condition was last heard and changed, in epoch ms (default now). */
  nowMs?: number;
}

/** 32 hex digits derived from a name, so a Node's machine IDs are stable across runs. */
function stableHex(name: string, salt: string): string {
  let out = "";
  let h = 0x811c9dc5;
  for (let round = 0; out.length < 32; round++) {
    for (const ch of `${salt}/${name}/${round}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, "0");
  }
  return out.slice(0, 32);
}

function systemInfo(name: string, overrides: Partial<V1NodeSystemInfo> = {}): V1NodeSystemInfo {
  const uuid = stableHex(name, "system");
  return {
    machineID: stableHex(name, "machine"),
    systemUUID: `${uuid.slice(0, 8)}-${uuid.slice(8, 12)}-${uuid.slice(12, 16)}-${uuid.slice(16, 20)}-${
      uuid.slice(20)
    }`,
    bootID: stableHex(name, "boot"),
    kernelVersion: "6.1.0-28-cloud-amd64",
    osImage: "Debian GNU/Linux 12 (bookworm)",
    containerRuntimeVersion: "containerd://1.7.24",
    kubeletVersion: KUBELET_VERSION,
    // Kubelets since 1.31 leave this empty (DisableNodeKubeProxyVersion).
    kubeProxyVersion: "",
    operatingSystem: "linux",
    architecture: "amd64",
    ...overrides,
  };
}

function readyCondition(status: "True" | "False" | "Unknown", heartbeatMs: number, transitionMs: number) {
  const reasons = {
    True: ["KubeletReady", "kubelet is posting ready status"],
    False: ["KubeletNotReady", "container runtime network not ready"],
    Unknown: ["NodeStatusUnknown", "Kubelet stopped posting node status."],
  } as const;
  const [reason, message] = reasons[status];
  return {
    type: "Ready",
    status,
    lastHeartbeatTime: rfc3339(heartbeatMs),
    lastTransitionTime: rfc3339(transitionMs),
    reason,
    message,
  };
}

/** A Node as kubelet registers it: uninitialised taint, Ready condition, hostname label, system info. */
export function kubeletNode(name: string, o: KubeletNodeOptions = {}): V1Node {
  const now = o.nowMs ?? Date.now();
  const resources = { cpu: "2", "ephemeral-storage": "81000196Ki", memory: "4015712Ki", pods: "110" };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: { "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", ...o.labels },
      annotations: o.nodeIp ? { "alpha.kubernetes.io/provided-node-ip": o.nodeIp } : undefined,
    },
    spec: {
      providerID: o.providerID,
      taints: o.taints ?? [UNINITIALIZED_TAINT],
      podCIDR: o.podCidr,
      podCIDRs: o.podCidr ? [o.podCidr] : undefined,
    },
    status: {
      addresses: o.addresses ?? [
        ...(o.nodeIp ?? "").split(",").filter(Boolean).map((address) => ({ type: "InternalIP", address })),
        { type: "Hostname", address: name },
      ],
      capacity: resources,
      allocatable: { ...resources, "ephemeral-storage": "74649584846", memory: "3913312Ki" },
      // On the wire metav1.Time is an RFC 3339 string in whole seconds; client-node's model calls it a Date.
      conditions: [
        readyCondition(o.ready === false ? "False" : "True", now, now) as unknown as V1NodeCondition,
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: systemInfo(name, o.nodeInfo),
    },
  };
}

/** Registers a Node the way kubelet does: create (the apiserver drops status), then write status. */
export function registerNode(kube: KubeSim, node: V1Node): void {
  const name = node.metadata?.name ?? "";
  const created = kube.store.create("nodes", node);
  kube.store.patch("nodes", name, { status: node.status }, {
    type: "merge",
    subresource: "status",
  });
  // kubelet's heartbeat Lease (what `kubectl describe node` shows), owned by its Node.
  kube.store.create("leases", {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name,
      namespace: "kube-node-lease",
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: created.metadata.uid }],
    },
    spec: {
      holderIdentity: name,
      leaseDurationSeconds: 40,
      renewTime: new Date(kube.store.now()).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z"),
    },
  });
}

/** Sets the Node's Ready condition, as kubelet (or the node lifecycle controller) would. */
export function setNodeReady(kube: KubeSim, name: string, ready: boolean): void {
  const now = kube.store.now();
  const status = ready ? "True" : "Unknown";
  const conditions = (kube.store.get("nodes", name)?.status as V1Node["status"])?.conditions ?? [];
  const previous = conditions.find((c) => c.type === "Ready");
  const changedMs = previous?.status === status ? Date.parse(String(previous.lastTransitionTime)) : now;
  const condition = readyCondition(status, now, Number.isNaN(changedMs) ? now : changedMs);
  kube.store.patch("nodes", name, { status: { conditions: [condition] } }, {
    type: "strategic",
    subresource: "status",
  });
}
