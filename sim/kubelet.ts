/** What kubelet does to the apiserver when a machine joins: register a Node and report its status. */
import type { V1Node, V1Taint } from "@kubernetes/client-node";
import type { KubeSim } from "./kube/server.ts";

/** Taint kubelet sets with `--cloud-provider=external` until the CCM initialises the Node. */
export const UNINITIALIZED_TAINT: V1Taint = {
  key: "node.cloudprovider.kubernetes.io/uninitialized",
  value: "true",
  effect: "NoSchedule",
};

/** Options of `kubeletNode`. */
export interface KubeletNodeOptions {
  providerID?: string;
  taints?: V1Taint[];
  labels?: Record<string, string>;
  /** `false` gives a NotReady condition (default Ready). */
  ready?: boolean;
  addresses?: { type: string; address: string }[];
  /** `--node-ip`: kubelet records it in the `alpha.kubernetes.io/provided-node-ip` annotation. */
  nodeIp?: string;
  podCidr?: string;
}

/** A Node as kubelet registers it: uninitialised taint, Ready condition, hostname label. */
export function kubeletNode(name: string, o: KubeletNodeOptions = {}): V1Node {
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
      addresses: o.addresses ?? [{ type: "Hostname", address: name }],
      conditions: [{
        type: "Ready",
        status: o.ready === false ? "False" : "True",
        reason: o.ready === false ? "KubeletNotReady" : "KubeletReady",
      }],
    },
  };
}

/** Registers a Node the way kubelet does: create (the apiserver drops status), then write status. */
export function registerNode(kube: KubeSim, node: V1Node): void {
  kube.store.create("nodes", node);
  kube.store.patch("nodes", node.metadata?.name ?? "", { status: node.status }, {
    type: "merge",
    subresource: "status",
  });
}

/** Sets the Node's Ready condition, as kubelet (or the node lifecycle controller) would. */
export function setNodeReady(kube: KubeSim, name: string, ready: boolean): void {
  const condition = {
    type: "Ready",
    status: ready ? "True" : "Unknown",
    reason: ready ? "KubeletReady" : "NodeStatusUnknown",
  };
  kube.store.patch("nodes", name, { status: { conditions: [condition] } }, {
    type: "strategic",
    subresource: "status",
  });
}
