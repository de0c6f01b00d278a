/** Builders for the service planning tests: Services, Nodes and CCM defaults with small overrides. */
import type { V1Node, V1Service, V1ServicePort } from "@kubernetes/client-node";
import { annotationKey } from "../annotations/table.ts";
import type { ServiceDefaults } from "../annotations/spec.ts";
import type { NodeBalancerSummary } from "../../../cache/types.ts";

/** CCM defaults as the flags leave them: no VPC, common NodeBalancers, prefix `ccm`. */
export function defaults(over: {
  services?: Partial<ServiceDefaults["services"]>;
  vpc?: Partial<ServiceDefaults["vpc"]>;
  hostnameOnlyIngress?: boolean;
  clusterName?: string;
} = {}): ServiceDefaults {
  return {
    clusterName: over.clusterName ?? "kubernetes",
    region: "us-east",
    hostnameOnlyIngress: over.hostnameOnlyIngress ?? false,
    services: {
      defaultNodeBalancerType: "common",
      nodeBalancerTags: [],
      nodeBalancerPrefix: "ccm",
      backendIpv4Subnet: null,
      backendIpv4SubnetId: null,
      backendIpv4SubnetName: null,
      disableVpcBackends: false,
      enableIpv6ForLoadBalancers: false,
      enableIpv6ForNodeBalancerBackends: false,
      nodeBalancerIdAdoptsAny: false,
      ...over.services,
    },
    vpc: { names: [], ids: [], subnetNames: ["default"], subnetIds: [], ...over.vpc },
  };
}

/** A service port; `nodePort` defaults to 30000 + port. */
export function port(
  port: number,
  protocol: "TCP" | "UDP" | "SCTP" = "TCP",
  nodePort?: number,
): V1ServicePort {
  return { port, protocol, nodePort: nodePort ?? 30000 + (port % 2000) };
}

/** A LoadBalancer Service; `annotations` are suffixes (`throttle`), prefixed here. */
export function service(over: {
  annotations?: Record<string, string>;
  ports?: V1ServicePort[];
  name?: string;
  uid?: string;
  sessionAffinity?: string;
} = {}): V1Service {
  const annotations = Object.fromEntries(
    Object.entries(over.annotations ?? {}).map(([k, v]) => [k.includes("/") ? k : annotationKey(k), v]),
  );
  return {
    metadata: {
      name: over.name ?? "web",
      namespace: "default",
      uid: over.uid ?? "0f1e2d3c-4b5a-4697-8877-665544332211",
      annotations,
    },
    spec: { type: "LoadBalancer", ports: over.ports ?? [port(80)], sessionAffinity: over.sessionAffinity },
  };
}

/** A Node; Ready with an InternalIP unless told otherwise. */
export function node(name: string, over: {
  internalIps?: string[];
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  ready?: "True" | "False" | "Unknown" | null;
  taints?: string[];
} = {}): V1Node {
  return {
    metadata: { name, annotations: over.annotations ?? {}, labels: over.labels ?? {} },
    spec: { taints: (over.taints ?? []).map((key) => ({ key, effect: "NoSchedule" })) },
    status: {
      addresses: (over.internalIps ?? ["192.168.140.1"]).map((address) => ({ type: "InternalIP", address })),
      conditions: over.ready === null ? [] : [{ type: "Ready", status: over.ready ?? "True" }],
    },
  };
}

/** A NodeBalancer as the listing summarises it, with both addresses and a hostname. */
export const NB: NodeBalancerSummary = {
  id: 7,
  label: "ccm-abc",
  region: "us-east",
  hostname: "nb-172-232-1-7.newark.nodebalancer.linode.com",
  ipv4: "172.232.1.7",
  ipv6: "2600:3c03:1::ace8:107",
  tags: [],
};

/** A Service named `web` whose status holds `ingress`. */
export function withIngress(ingress: { ip?: string; hostname?: string }[]): V1Service {
  return { metadata: { name: "web" }, status: { loadBalancer: { ingress } } };
}
