/**
 * A cluster as the Go CCM (linode/linode-cloud-controller-manager) leaves it, on both emulators: initialised
 * Nodes (providerID, addresses, labels, annotations, no uninitialised taint), pod CIDRs routed as VPC
 * `ip_ranges`, LoadBalancer Services with the cleanup finalizer and their ingress status, the NodeBalancers
 * behind them as the Go CCM creates them (label `<prefix>-<12 digits>`, tags cluster name + `--nodebalancer-tags`,
 * VPC backends, connection checks, `client_conn_throttle` 0, `check_passive` true) and the leader Lease held by
 * a Go CCM replica that keeps renewing until told to stop. `drift` adds what a production cluster drifts into,
 * one option per controller, so shadow-mode tests can show a plan for each. Address plan as `demo_world.ts`.
 */
import { join } from "node:path";
import { type Clock, systemClock } from "../common/clock.ts";
import { podCidr } from "./demo_world.ts";
import { type GoCcmLeaseHolder, holdGoCcmLease } from "./go_ccm_lease.ts";
import { type KubeSim, startKubeSim } from "./kube/server.ts";
import * as kubelet from "./kubelet.ts";
import type { InterfaceGeneration } from "./linode/instance_shape.ts";
import { goCcmCreateBody } from "./linode/seed_nodebalancers.ts";
import { type LinodeSim, startLinodeSim } from "./linode/server.ts";
import { goCcmBackends, goCcmNode, type SeededService, seedGoCcmService } from "./go_ccm_seed.ts";

export { CCM_LEASE, type GoCcmLeaseHolder } from "./go_ccm_lease.ts";
export {
  GO_CCM_DEFAULT_PINS,
  GO_CCM_LENIENT_VALUES,
  goCcmAddresses,
  LB_CLEANUP_FINALIZER,
  type SeededService,
} from "./go_ccm_seed.ts";

/** What the world drifts into while (or after) the Go CCM ran; each option adds one pending action. */
export interface GoCcmDrift {
  /** An initialised, Ready, routed Node on no NodeBalancer yet (joined just before the switch). */
  nodeWithoutBackends?: boolean;
  /** A Node as kubelet registered it: uninitialised taint, no providerID, no route. */
  uninitialisedNode?: boolean;
  /** The first Node's pod CIDR is missing from its Linode's `ip_ranges`. */
  missingRoute?: boolean;
  /**
   * The first Service carries no annotations pinning the Go CCM's defaults, so this CCM's defaults
   * (`throttle` 20, `check-passive` false) differ from what its NodeBalancer has (0, true).
   */
  unpinnedDefaults?: boolean;
  /** A NodeBalancer with the cluster's tags that no Service points to (its Service was deleted). */
  orphanedNodeBalancer?: boolean;
}

/** Options of `startGoCcmWorld`. */
export interface GoCcmWorldOptions {
  /** Initialised Nodes, each a backend of every NodeBalancer (default 3). */
  nodes?: number;
  /** LoadBalancer Services: `web` (IPv4 + hostname), `api` (hostname only) (default 2). */
  services?: 1 | 2;
  /** Adds the Service `legacy`, whose annotations the Go CCM reads leniently (`GO_CCM_LENIENT_VALUES`). */
  lenientService?: boolean;
  /** Initialised Nodes without `spec.podCIDR` (the Go CCM's IPAM off), backends like the others (default 0). */
  nodesWithoutPodCidr?: number;
  /** Makes the last initialised Node NotReady (Ready Unknown); the Go CCM keeps it in every NodeBalancer. */
  notReadyNode?: boolean;
  /**
   * Kubelet's `--node-ip` on every Node (`addNode`'s too): its VPC address, or its private one. With the
   * private one the NodeBalancers have private backends (`--disable-nodebalancer-vpc-backends`): the Go CCM
   * backs a VPC NodeBalancer with a Node's first InternalIP, which the private `--node-ip` makes a non-VPC one.
   */
  nodeIp?: "vpc" | "private";
  region?: string;
  /** `--cluster-name` of both CCMs (default `kubernetes`, the upstream default). */
  clusterName?: string;
  /** `--nodebalancer-tags` (default `prod`). */
  nodeBalancerTags?: readonly string[];
  /** `--nodebalancer-prefix` (default `ccm`). */
  nodeBalancerPrefix?: string;
  /** Folder for the kubeconfig (default a new temp folder, removed on close). */
  dir?: string;
  linodeToken?: string;
  /** Serve the Kubernetes API over HTTPS (default true). */
  tls?: boolean;
  interfaceGeneration?: InterfaceGeneration;
  /** Clock of the Go CCM's Lease renewals (tests pass their `FakeClock`; default the system clock). */
  clock?: Clock;
  drift?: GoCcmDrift;
}

/** One seeded Node. */
export interface GoCcmNode {
  readonly name: string;
  readonly linodeId: number;
  readonly vpcIp: string;
  readonly privateIp: string;
  readonly podCidr: string;
  /** Kubelet's `--node-ip`, when the world has one. */
  readonly nodeIp?: string;
}

/** Names of what `drift` added (absent when not asked for). */
export interface DriftNames {
  readonly nodeWithoutBackends?: string;
  readonly uninitialisedNode?: string;
  readonly missingRoute?: { readonly node: string; readonly linodeId: number; readonly podCidr: string };
  /** `namespace/name` of the Services without pins. */
  readonly unpinnedServices?: readonly string[];
  readonly orphanedNodeBalancerId?: number;
}

/** Both emulators as the Go CCM left them, the Go CCM's flags, and its Lease holder. */
export interface GoCcmWorld extends AsyncDisposable {
  readonly linode: LinodeSim;
  readonly kube: KubeSim;
  readonly kubeconfigPath: string;
  readonly region: string;
  readonly vpcLabel: string;
  readonly subnetId: number;
  readonly clusterCidr: string;
  readonly clusterName: string;
  /** `LINODE_URL`, `LINODE_API_TOKEN`, `LINODE_REGION`, `KUBECONFIG`. */
  readonly env: Readonly<Record<string, string>>;
  /** The Go CCM Deployment's flags, which this CCM takes unchanged. */
  readonly flags: readonly string[];
  /** Every seeded Node, drift included, in creation order. */
  readonly nodes: readonly GoCcmNode[];
  readonly services: readonly SeededService[];
  readonly drift: DriftNames;
  /** The Go CCM replica renewing `kube-system/cloud-controller-manager`. */
  readonly lease: GoCcmLeaseHolder;
  /** Creates a Linode in the VPC and registers it as kubelet does (uninitialised); returns the Linode id. */
  addNode(name: string): number;
  close(): Promise<void>;
}

const VPC_LABEL = "cluster-vpc";
const CLUSTER_CIDR = "10.0.0.0/8";

/** Starts both emulators and seeds the Go CCM's world. */
export async function startGoCcmWorld(options: GoCcmWorldOptions = {}): Promise<GoCcmWorld> {
  const region = options.region ?? "us-east";
  const clusterName = options.clusterName ?? "kubernetes";
  const nbTags = [...(options.nodeBalancerTags ?? ["prod"])];
  const prefix = options.nodeBalancerPrefix ?? "ccm";
  const drift = options.drift ?? {};
  const linode = await startLinodeSim({ token: options.linodeToken });
  const kube = await startKubeSim({ tls: options.tls ?? true });
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "linode-ccm-go-world-" });
  await Deno.mkdir(dir, { recursive: true });
  const kubeconfigPath = join(dir, "kubeconfig");
  await kube.writeKubeconfig(kubeconfigPath);
  const vpc = linode.world.createVpc({
    label: VPC_LABEL,
    region,
    subnets: [{ label: "default", ipv4: "10.0.0.0/8" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  let block = 0;
  const nodes: GoCcmNode[] = [];
  const addLinode = (name: string, routed: boolean) => {
    // Linodes from 10.0.0.2 up, as CAPL numbers them; pod CIDRs from 10.192.0.0/10, never overlapping.
    const host = 2 + block;
    const vpcIp = `10.0.${host >> 8}.${host & 255}`;
    const cidr = podCidr(block++);
    const added = linode.world.addInstance({
      label: name,
      region,
      type: "g6-standard-2",
      privateIp: true,
      interfaceGeneration: options.interfaceGeneration,
      vpc: { vpcId: vpc.id, subnetId, ipv4: vpcIp, ipRanges: routed ? [cidr] : [] },
    });
    const privateIp = added.ipv4.find((ip) => ip.startsWith("192.168.")) ?? "";
    const nodeIp = options.nodeIp === "vpc" ? vpcIp : options.nodeIp === "private" ? privateIp : undefined;
    const node = { name, linodeId: added.id, vpcIp, privateIp, podCidr: cidr, nodeIp };
    nodes.push(node);
    return node;
  };
  const initialised = (name: string, routed: boolean, withCidr = true): GoCcmNode => {
    const node = addLinode(name, routed && withCidr);
    const instance = linode.world.instance(node.linodeId);
    if (!instance) throw new TypeError(`Linode ${node.linodeId} vanished while seeding`);
    kubelet.registerNode(kube, goCcmNode(instance, withCidr ? node : { ...node, podCidr: "" }));
    return node;
  };
  const count = options.nodes ?? 3;
  for (let i = 1; i <= count; i++) initialised(`go-node-${i}`, !(drift.missingRoute && i === 1));
  for (let i = 1; i <= (options.nodesWithoutPodCidr ?? 0); i++) initialised(`go-nocidr-${i}`, false, false);
  const last = nodes.at(-1);
  if (options.notReadyNode && last) kubelet.setNodeReady(kube, last.name, false);
  const backends = [...nodes];
  const names: { -readonly [K in keyof DriftNames]: DriftNames[K] } = {};
  if (drift.nodeWithoutBackends) names.nodeWithoutBackends = initialised(`go-node-${count + 1}`, true).name;
  if (drift.uninitialisedNode) {
    const node = addLinode(`go-node-${nodes.length + 1}`, false);
    kubelet.registerNode(
      kube,
      kubelet.kubeletNode(node.name, { podCidr: node.podCidr, nodeIp: node.nodeIp }),
    );
    names.uninitialisedNode = node.name;
  }
  const first = nodes[0];
  if (drift.missingRoute && first) {
    names.missingRoute = { node: first.name, linodeId: first.linodeId, podCidr: first.podCidr };
  }
  const vpcBackends = options.nodeIp !== "private";
  const seedOptions = { region, clusterName, nbTags, prefix, subnetId, backends, vpcBackends };
  const services: SeededService[] = [];
  const wanted = [
    ...(["web", "api"] as const).slice(0, options.services ?? 2),
    ...(options.lenientService ? ["legacy" as const] : []),
  ];
  for (const [i, name] of wanted.entries()) {
    const pinned = !(drift.unpinnedDefaults && i === 0);
    services.push(seedGoCcmService(linode, kube, { ...seedOptions, name, pinned, seq: i }));
  }
  if (drift.unpinnedDefaults) names.unpinnedServices = services.slice(0, 1).map((s) => s.key);
  if (drift.orphanedNodeBalancer) {
    const orphan = linode.world.addNodeBalancer(goCcmCreateBody({
      label: `${prefix}-${"1768003311".padEnd(12, "7")}`,
      region,
      tags: [clusterName, ...nbTags],
      ports: [{ port: 80, nodePort: 31999 }],
      backends: goCcmBackends(seedOptions),
      backendSubnetId: vpcBackends ? subnetId : undefined,
    }));
    names.orphanedNodeBalancerId = orphan.id;
  }
  const stop = new AbortController();
  const lease = holdGoCcmLease(kube, options.clock ?? systemClock, stop.signal);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    stop.abort();
    await linode.close();
    await kube.close();
    if (ownDir) await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  return {
    linode,
    kube,
    kubeconfigPath,
    region,
    vpcLabel: VPC_LABEL,
    subnetId,
    clusterCidr: CLUSTER_CIDR,
    clusterName,
    env: {
      LINODE_URL: linode.url,
      LINODE_API_TOKEN: linode.token,
      LINODE_REGION: region,
      KUBECONFIG: kubeconfigPath,
    },
    flags: goCcmFlags({ clusterName, nbTags, prefix, vpcBackends }),
    nodes,
    services,
    drift: names,
    lease,
    addNode: (name) => {
      const node = addLinode(name, false);
      kubelet.registerNode(kube, kubelet.kubeletNode(name, { podCidr: node.podCidr, nodeIp: node.nodeIp }));
      return node.linodeId;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The flags of a Go CCM Deployment running routes and VPC-backed NodeBalancers in this world. */
function goCcmFlags(
  o: { clusterName: string; nbTags: readonly string[]; prefix: string; vpcBackends: boolean },
): string[] {
  return [
    "--cloud-provider=linode",
    ...(o.vpcBackends ? [] : ["--disable-nodebalancer-vpc-backends=true"]),
    `--cluster-name=${o.clusterName}`,
    `--vpc-names=${VPC_LABEL}`,
    "--enable-route-controller=true",
    `--cluster-cidr=${CLUSTER_CIDR}`,
    "--configure-cloud-routes=true",
    `--nodebalancer-prefix=${o.prefix}`,
    ...(o.nbTags.length ? [`--nodebalancer-tags=${o.nbTags.join(",")}`] : []),
  ];
}
