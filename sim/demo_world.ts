/**
 * A small realistic world on both emulators: a VPC, Linodes registered as Nodes with pod CIDRs, and
 * LoadBalancer Services. Used by `deno task demo`, `deno task dev`, `deno task bench` and the end-to-end tests.
 * The address plan is the one Cluster API Provider Linode (CAPL) uses: one VPC subnet 10.0.0.0/8, Linodes
 * numbered from 10.0.0.2 up, pod CIDRs /24s of 10.192.0.0/10 inside the subnet and inside the cluster CIDR
 * 10.0.0.0/8, never overlapping a Linode's VPC address. The emulator accepts these as routed ranges on
 * either interface generation.
 */
import { join } from "node:path";
import type { V1Service } from "@kubernetes/client-node";
import { type KubeSim, startKubeSim } from "./kube/server.ts";
import * as kubelet from "./kubelet.ts";
import type { InterfaceGeneration } from "./linode/instance_shape.ts";
import { type LinodeSim, startLinodeSim } from "./linode/server.ts";

/** Options of `startDemoWorld`. */
export interface DemoWorldOptions {
  /** Linodes registered as Nodes at start (default 6). */
  nodes?: number;
  /** LoadBalancer Services at start (default 2). */
  services?: number;
  region?: string;
  /** Folder for the kubeconfig (default a new temp folder, removed on close). */
  dir?: string;
  /** Bearer token of the Linode emulator (default a random one). */
  linodeToken?: string;
  /** Serve the Kubernetes API over HTTPS (default true: kubectl sends its token only over HTTPS). */
  tls?: boolean;
  /** Label of the VPC (default `demo-vpc`). */
  vpcLabel?: string;
  /**
   * IPv4 range of the VPC's one subnet (default `10.0.0.0/8`). A smaller subnet leaves the pod CIDRs outside
   * it: config profile interfaces still route them, Linode interfaces refuse them (the API's rule).
   */
  subnet?: string;
  /** How the Linodes' interfaces are defined (default `legacy_config`, config profile interfaces). */
  interfaceGeneration?: InterfaceGeneration;
}

/** Both emulators, seeded, plus the environment that points a CCM at them. */
export interface DemoWorld extends AsyncDisposable {
  readonly linode: LinodeSim;
  readonly kube: KubeSim;
  readonly kubeconfigPath: string;
  readonly region: string;
  readonly vpcLabel: string;
  /** The cluster CIDR around every pod CIDR (`--cluster-cidr`): 10.0.0.0/8. */
  readonly clusterCidr: string;
  /** `LINODE_URL`, `LINODE_API_TOKEN`, `LINODE_REGION`, `KUBECONFIG` for the CCM's config. */
  readonly env: Readonly<Record<string, string>>;
  /** Creates a Linode in the VPC and registers it as an uninitialised Node; returns the Linode id. */
  addNode(name: string): number;
  /** Creates a Linode in the VPC only; returns its id. */
  addLinode(name: string): number;
  /** Registers a Node only, as kubelet does (uninitialised taint, Ready, the next pod CIDR). */
  registerNode(name: string): void;
  close(): Promise<void>;
}

const VPC_LABEL = "demo-vpc";
const SUBNET = "10.0.0.0/8";
const CLUSTER_CIDR = "10.0.0.0/8";

/** The `block`-th /24 of 10.192.0.0/10 (16,384 of them), the pod CIDR of the `block`-th registered Node. */
export function podCidr(block: number): string {
  if (block >= 16_384) throw new RangeError("10.192.0.0/10 holds 16,384 pod CIDRs of /24");
  return `10.${192 + (block >> 8)}.${block & 255}.0/24`;
}

function loadBalancer(name: string, port: number): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ name: "http", port, protocol: "TCP" }] },
  };
}

/** Starts both emulators and seeds them. */
export async function startDemoWorld(options: DemoWorldOptions = {}): Promise<DemoWorld> {
  const region = options.region ?? "us-east";
  const linode = await startLinodeSim({ token: options.linodeToken });
  const kube = await startKubeSim({ tls: options.tls ?? true });
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "linode-ccm-demo-" });
  await Deno.mkdir(dir, { recursive: true });
  const kubeconfigPath = join(dir, "kubeconfig");
  await kube.writeKubeconfig(kubeconfigPath);
  const vpcLabel = options.vpcLabel ?? VPC_LABEL;
  const vpc = linode.world.createVpc({
    label: vpcLabel,
    region,
    subnets: [{ label: "default", ipv4: options.subnet ?? SUBNET }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  let podBlock = 0;
  const addLinode = (name: string): number =>
    linode.world.addInstance({
      label: name,
      region,
      type: "g6-standard-2",
      privateIp: true,
      interfaceGeneration: options.interfaceGeneration,
      vpc: { vpcId: vpc.id, subnetId },
    }).id;
  const registerNode = (name: string): void => {
    kubelet.registerNode(kube, kubelet.kubeletNode(name, { podCidr: podCidr(podBlock++) }));
  };
  const addNode = (name: string): number => {
    const id = addLinode(name);
    registerNode(name);
    return id;
  };
  for (let i = 1; i <= (options.nodes ?? 6); i++) addNode(`demo-node-${i}`);
  const services = [["web", 80], ["api", 8080], ["metrics", 9100]] as const;
  for (const [name, port] of services.slice(0, options.services ?? 2)) {
    kube.store.create("services", loadBalancer(name, port));
  }
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await linode.close();
    await kube.close();
    if (ownDir) await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  return {
    linode,
    kube,
    kubeconfigPath,
    region,
    vpcLabel,
    clusterCidr: CLUSTER_CIDR,
    env: {
      LINODE_URL: linode.url,
      LINODE_API_TOKEN: linode.token,
      LINODE_REGION: region,
      KUBECONFIG: kubeconfigPath,
    },
    addNode,
    addLinode,
    registerNode,
    close,
    [Symbol.asyncDispose]: close,
  };
}
