/**
 * Pieces of the Go CCM's world (`go_ccm_world.ts`): a Node as the Go CCM initialised it, and a LoadBalancer
 * Service with the NodeBalancer the Go CCM made for it, its finalizer and its ingress status. The wire values
 * (annotation names, finalizer, labels) are written out here rather than imported from the controllers, so
 * the world states what the Go CCM does and a test can catch this CCM disagreeing.
 */
import type { V1Node, V1NodeCondition, V1Service } from "@kubernetes/client-node";
import type { KubeSim } from "./kube/server.ts";
import { kubeletNode } from "./kubelet.ts";
import type { SimLinode } from "./linode/instance_shape.ts";
import { goCcmCreateBody } from "./linode/seed_nodebalancers.ts";
import type { LinodeSim } from "./linode/server.ts";

/** The finalizer upstream's service controller puts on every LoadBalancer Service it handles. */
export const LB_CLEANUP_FINALIZER = "service.kubernetes.io/load-balancer-cleanup";

const ANNOTATION = "service.beta.kubernetes.io/linode-loadbalancer-";

/**
 * Annotations that pin what the Go CCM's code does without them (throttle 0 since its PR #189, passive checks
 * on), where this CCM follows the Go CCM's README (20, off): the migration guide's "pin where a default differs".
 */
export const GO_CCM_DEFAULT_PINS: Readonly<Record<string, string>> = Object.freeze({
  [`${ANNOTATION}throttle`]: "0",
  [`${ANNOTATION}check-passive`]: "true",
});

/** A seeded Linode behind a Node: what the Node's addresses and the NodeBalancer backends are made of. */
export interface SeedNode {
  readonly name: string;
  readonly linodeId: number;
  readonly vpcIp: string;
  /** The Linode's private IPv4 (192.168.128.0/17). */
  readonly privateIp: string;
  readonly podCidr: string;
  /** Kubelet's `--node-ip` (one of the Linode's addresses), when it was started with one. */
  readonly nodeIp?: string;
}

/** A Service the Go CCM handled, and its NodeBalancer. */
export interface SeededService {
  /** `namespace/name`. */
  readonly key: string;
  readonly name: string;
  readonly uid: string;
  readonly nodeBalancerId: number;
  readonly label: string;
  readonly ipv4: string;
  readonly hostname: string;
  /** `status.loadBalancer.ingress` as the Go CCM wrote it. */
  readonly ingress: readonly { ip?: string; hostname: string }[];
  /** True when the Service carries `GO_CCM_DEFAULT_PINS`. */
  readonly pinned: boolean;
}

/** What `seedGoCcmService` needs from the world. */
export interface ServiceSeed {
  name: "web" | "api" | "legacy";
  region: string;
  clusterName: string;
  nbTags: readonly string[];
  prefix: string;
  subnetId: number;
  backends: readonly SeedNode[];
  /** VPC backends (the VPC address, `backend_vpcs`); false: private ones (`--disable-nodebalancer-vpc-backends`). */
  vpcBackends: boolean;
  pinned: boolean;
  /** Index among the seeded Services (spaces the labels' clock digits). */
  seq: number;
}

function isPrivate(ip: string): boolean {
  return /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(ip);
}

/**
 * `status.addresses` as the Go CCM leaves them, written out from its code rather than this CCM's: its
 * `InstanceMetadata` (cloud/linode/services/instances.go) lists Hostname (the label), the VPC IPv4, `ipv4` in the
 * API's order (public first; private as InternalIP) and the public IPv6 without `/128`; upstream's cloud-node
 * controller (k8s.io/cloud-provider v0.35.4 `updateNodeAddress`) then puts kubelet's `--node-ip` first, the only
 * address of its type (`GetNodeAddressesFromNodeIP`).
 */
export function goCcmAddresses(
  instance: SimLinode,
  node: Pick<SeedNode, "vpcIp" | "nodeIp">,
): { type: string; address: string }[] {
  const ipv6 = instance.ipv6?.replace(/\/128$/, "");
  const listed = [
    { type: "Hostname", address: instance.label },
    { type: "InternalIP", address: node.vpcIp },
    ...instance.ipv4.map((address) => ({ type: isPrivate(address) ? "InternalIP" : "ExternalIP", address })),
    ...(ipv6 ? [{ type: "ExternalIP", address: ipv6 }] : []),
  ];
  if (!node.nodeIp) return listed;
  const first = listed.filter((a) => a.address === node.nodeIp);
  const types = new Set(first.map((a) => a.type));
  return [...first, ...listed.filter((a) => !types.has(a.type))];
}

/** The Node as kubelet registered it and the Go CCM initialised it (addresses as `goCcmAddresses`). */
export function goCcmNode(instance: SimLinode, node: SeedNode): V1Node {
  const priv = instance.ipv4.filter(isPrivate);
  const base = kubeletNode(node.name, {
    providerID: `linode://${instance.id}`,
    taints: [],
    podCidr: node.podCidr || undefined,
    labels: {
      "topology.kubernetes.io/region": instance.region,
      "failure-domain.beta.kubernetes.io/region": instance.region,
      "node.kubernetes.io/instance-type": instance.type ?? "",
      "beta.kubernetes.io/instance-type": instance.type ?? "",
      "node.k8s.linode.com/host-uuid": instance.host_uuid,
    },
    nodeIp: node.nodeIp,
    addresses: goCcmAddresses(instance, node),
  });
  // Upstream's route controller (in the Go CCM) marks a routed Node's network available.
  const at = base.status?.conditions?.[0]?.lastHeartbeatTime;
  const routed = {
    type: "NetworkUnavailable",
    status: "False",
    reason: "RouteCreated",
    message: "RouteController created a route",
    lastHeartbeatTime: at,
    lastTransitionTime: at,
  } as unknown as V1NodeCondition;
  const status = { ...base.status, conditions: [...(base.status?.conditions ?? []), routed] };
  const annotations: Record<string, string> = { ...base.metadata?.annotations };
  if (priv[0]) annotations["node.k8s.linode.com/private-ip"] = priv[0];
  // The Go CCM writes the Linode's `ipv6` as the API gives it, `/128` included (node_controller.go).
  if (instance.ipv6) annotations["node.k8s.linode.com/public-ipv6"] = instance.ipv6;
  return { ...base, metadata: { ...base.metadata, annotations }, status };
}

const PORTS = {
  web: [{ name: "http", port: 80 }],
  api: [{ name: "http", port: 80 }, { name: "grpc", port: 443 }],
  legacy: [{ name: "http", port: 8080 }],
} as const;

/**
 * Values the Go CCM reads leniently and serves without complaint, as a Service of long standing may carry
 * them: throttle 50 (clamped to 20), an unknown type (the default, common), nodebalancer-id 0 (ignored: found
 * by its status), hostname-only-ingress "yes" (false: IP and hostname), with its passive checks pinned.
 */
export const GO_CCM_LENIENT_VALUES: Readonly<Record<string, string>> = Object.freeze({
  [`${ANNOTATION}throttle`]: "50",
  [`${ANNOTATION}nodebalancer-type`]: "standard",
  [`${ANNOTATION}nodebalancer-id`]: "0",
  [`${ANNOTATION}hostname-only-ingress`]: "yes",
  [`${ANNOTATION}check-passive`]: "true",
});

/** The `client_conn_throttle` the Go CCM gives a Service with `GO_CCM_LENIENT_VALUES`. */
const LENIENT_THROTTLE = 20;

/** The Go CCM's label digits: the last 12 of `time.Now().UnixNano()` at create time. */
function clockDigits(seq: number): string {
  return String(1767225600123456789n + BigInt(seq) * 86_400_000_017n).slice(-12);
}

/**
 * The Go CCM's backends (`getNodePrivateIP`): with VPC backends the Node's first InternalIP, else its
 * `node.k8s.linode.com/private-ip` annotation (the Linode's private IPv4).
 */
export function goCcmBackends(
  seed: Pick<ServiceSeed, "backends" | "vpcBackends" | "subnetId">,
): { nodeName: string; ip: string; subnetId?: number; status: "UP" }[] {
  return seed.backends.map((n) => {
    const firstInternal = n.nodeIp && n.nodeIp === n.privateIp ? n.privateIp : n.vpcIp;
    return seed.vpcBackends
      ? { nodeName: n.name, ip: firstInternal, subnetId: seed.subnetId, status: "UP" }
      : { nodeName: n.name, ip: n.privateIp, status: "UP" };
  });
}

/** Creates the Service, its Go CCM NodeBalancer, the finalizer and the ingress status. */
export function seedGoCcmService(linode: LinodeSim, kube: KubeSim, seed: ServiceSeed): SeededService {
  const hostnameOnly = seed.name === "api";
  const lenient = seed.name === "legacy";
  const annotations: Record<string, string> = {
    ...(seed.pinned ? GO_CCM_DEFAULT_PINS : {}),
    ...(hostnameOnly ? { [`${ANNOTATION}hostname-only-ingress`]: "true" } : {}),
    ...(lenient ? GO_CCM_LENIENT_VALUES : {}),
  };
  const created = kube.store.create("services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: seed.name,
      namespace: "default",
      labels: { app: seed.name },
      annotations,
      finalizers: [LB_CLEANUP_FINALIZER],
    },
    spec: {
      type: "LoadBalancer",
      selector: { app: seed.name },
      ports: PORTS[seed.name].map((p) => ({ ...p, protocol: "TCP" })),
    },
  }) as unknown as V1Service;
  const ports = (created.spec?.ports ?? []).map((p) => ({ port: p.port, nodePort: p.nodePort ?? 0 }));
  const nb = linode.world.addNodeBalancer(goCcmCreateBody({
    label: `${seed.prefix}-${clockDigits(seed.seq)}`,
    region: seed.region,
    tags: [seed.clusterName, ...seed.nbTags],
    ports,
    backends: goCcmBackends(seed),
    backendSubnetId: seed.vpcBackends ? seed.subnetId : undefined,
    throttle: lenient ? LENIENT_THROTTLE : 0,
  }));
  const ingress = hostnameOnly ? [{ hostname: nb.hostname }] : [{ ip: nb.ipv4, hostname: nb.hostname }];
  kube.store.patch("services", seed.name, { status: { loadBalancer: { ingress } } }, {
    type: "merge",
    namespace: "default",
    subresource: "status",
  });
  return {
    key: `default/${seed.name}`,
    name: seed.name,
    uid: created.metadata?.uid ?? "",
    nodeBalancerId: nb.id,
    label: nb.label,
    ipv4: nb.ipv4,
    hostname: nb.hostname,
    ingress,
    pinned: seed.pinned,
  };
}
