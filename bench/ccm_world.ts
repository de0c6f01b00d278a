/**
 * A cluster for the CCM-process benchmarks, on the bench world's emulators: Linodes registered as Nodes the
 * way kubelet does (with the pod CIDR node IPAM gives), LoadBalancer Services, and a check of everything the
 * CCM must have done. Large clusters keep a load-balancer pool: the first `LB_POOL` Nodes carry traffic and
 * the rest are labelled out, because a NodeBalancer config takes at most 1,000 nodes (the API's limit, which
 * the emulator enforces), so no NodeBalancer could take every Node of a 5,000-Node cluster.
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { EXCLUDE_LABEL } from "../controllers/service/nodebalancer/plan.ts";
import { type DemoWorld, kubeletNode, registerNode, UNINITIALIZED_TAINT } from "../sim/mod.ts";
import { startBenchWorld } from "./world.ts";

/** Nodes eligible for load balancers in any cluster size (the rest carry `EXCLUDE_LABEL`). */
export const LB_POOL = 500;
/** `--cluster-cidr` of the route controller: every pod CIDR below is a /24 of it. */
export const BENCH_CLUSTER_CIDR = "10.192.0.0/10";
/** The port every benchmark Service exposes. */
const SERVICE_PORT = 80;

/** One Node of the cluster and its Linode. */
export interface BenchNode {
  readonly name: string;
  readonly linodeId: number;
  readonly podCidr: string;
  /** In the load-balancer pool (not labelled out). */
  readonly eligible: boolean;
}

function podCidr(block: number): string {
  if (block >= 16_384) throw new RangeError("10.192.0.0/10 holds 16,384 pod CIDRs of /24");
  return `10.${192 + (block >> 8)}.${block & 255}.0/24`;
}

function loadBalancer(name: string): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: {
      type: "LoadBalancer",
      selector: { app: name },
      ports: [{ name: "http", port: SERVICE_PORT, protocol: "TCP" }],
    },
  };
}

/** The emulators, the Nodes and Services created so far, and checks of the CCM's work on them. */
export class CcmWorld implements AsyncDisposable {
  readonly world: DemoWorld;
  /** Current Nodes by name. */
  readonly nodes = new Map<string, BenchNode>();
  /** Names of the LoadBalancer Services (namespace `default`). */
  readonly services: string[] = [];
  #nextNode = 0;
  #nextBlock = 0;

  private constructor(world: DemoWorld) {
    this.world = world;
  }

  /** Starts the emulators with `nodes` Nodes (uninitialised, as kubelet registers them) and `services` Services. */
  static async start(nodes: number, services: number): Promise<CcmWorld> {
    const w = new CcmWorld(await startBenchWorld());
    for (let i = 0; i < nodes; i++) w.addNode(i < LB_POOL);
    for (let i = 0; i < services; i++) w.addService();
    return w;
  }

  /** The folder of the world's kubeconfig (the CCM process may read it; TLS files go there too). */
  get dir(): string {
    return this.world.kubeconfigPath.replace(/\/[^/]+$/, "");
  }

  /** Creates a Linode for a new Node without registering it; returns the Node to be. */
  addLinode(eligible: boolean): BenchNode {
    const name = `node-${String(this.#nextNode++).padStart(5, "0")}`;
    return { name, linodeId: this.world.addLinode(name), podCidr: podCidr(this.#nextBlock++), eligible };
  }

  /** Registers `node` as kubelet does; without `podCidr` node IPAM has not given it one yet. */
  register(node: BenchNode, options: { podCidr?: boolean } = {}): void {
    const labels: Record<string, string> = node.eligible ? {} : { [EXCLUDE_LABEL]: "true" };
    const cidr = options.podCidr === false ? undefined : node.podCidr;
    registerNode(this.world.kube, kubeletNode(node.name, { podCidr: cidr, labels }));
    this.nodes.set(node.name, node);
  }

  /** Gives a registered Node its pod CIDR, as node IPAM does. */
  assignPodCidr(node: BenchNode): void {
    const spec = { podCIDR: node.podCidr, podCIDRs: [node.podCidr] };
    this.world.kube.store.patch("nodes", node.name, { spec }, { type: "merge" });
  }

  /** A Linode and its Node, registered with a pod CIDR. */
  addNode(eligible: boolean): BenchNode {
    const node = this.addLinode(eligible);
    this.register(node);
    return node;
  }

  /** Deletes a Node and then its Linode, as a machine leaving the cluster. */
  removeNode(name: string): BenchNode {
    const node = this.nodes.get(name);
    if (!node) throw new RangeError(`No node ${name}`);
    this.world.kube.store.delete("nodes", name);
    this.world.linode.world.deleteInstance(node.linodeId);
    this.nodes.delete(name);
    return node;
  }

  /** Replaces a Node by a new machine in the same pool; returns the new Node. */
  replaceNode(name: string): BenchNode {
    return this.addNode(this.removeNode(name).eligible);
  }

  /** Creates a LoadBalancer Service; returns its name. */
  addService(): string {
    const name = `lb-${String(this.services.length).padStart(3, "0")}`;
    this.world.kube.store.create("services", loadBalancer(name));
    this.services.push(name);
    return name;
  }

  /** Names of the Nodes in the load-balancer pool, sorted. */
  eligibleNames(): string[] {
    return [...this.nodes.values()].filter((n) => n.eligible).map((n) => n.name).sort();
  }

  /** True when the CCM has initialised the Node: its providerID names its Linode and the taint is gone. */
  isInitialised(node: BenchNode): boolean {
    // The stored object itself, read only: a copy per Node per check would cost 280 ms at 5,000 Nodes.
    const store = this.world.kube.store;
    const obj = store.lookup(store.def("nodes"), node.name, "default") as V1Node | undefined;
    return obj?.spec?.providerID === `linode://${node.linodeId}` &&
      !(obj.spec.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT.key);
  }

  /** True when the Node's pod CIDR is a range on its Linode's VPC interface. */
  isRouted(node: BenchNode): boolean {
    return this.world.linode.world.ipRanges(node.linodeId).includes(node.podCidr);
  }

  /** The ingress IP the CCM wrote on a Service, if any. */
  ingressIp(service: string): string | undefined {
    const svc = this.world.kube.store.get("services", service, "default") as V1Service | undefined;
    return svc?.status?.loadBalancer?.ingress?.[0]?.ip;
  }

  /** Backend labels (Node names) of each Service's NodeBalancer port, by Service; undefined when it has none. */
  backendsByService(): Map<string, Set<string> | undefined> {
    const byIp = new Map(this.world.linode.world.nodeBalancers().map((nb) => [nb.ipv4, nb]));
    const out = new Map<string, Set<string> | undefined>();
    for (const name of this.services) {
      const ip = this.ingressIp(name);
      const config = (ip ? byIp.get(ip) : undefined)?.configs.find((c) => c.port === SERVICE_PORT);
      out.set(name, config ? new Set(config.nodes.map((n) => n.label)) : undefined);
    }
    return out;
  }

  /** Everything the CCM has not done yet (empty when converged): at most `limit` lines. */
  problems(limit = 5): string[] {
    const out: string[] = [];
    for (const node of this.nodes.values()) {
      if (out.length >= limit) return out;
      if (!this.isInitialised(node)) out.push(`node ${node.name} is not initialised`);
      else if (!this.isRouted(node)) out.push(`node ${node.name} has no route for ${node.podCidr}`);
    }
    const want = this.eligibleNames();
    for (const [name, backends] of this.backendsByService()) {
      if (out.length >= limit) break;
      if (!backends) out.push(`service ${name} has no NodeBalancer with port ${SERVICE_PORT}`);
      else if (backends.size !== want.length || want.some((n) => !backends.has(n))) {
        out.push(`service ${name}'s NodeBalancer has ${backends.size} backends, want ${want.length}`);
      }
    }
    return out;
  }

  /** Stops both emulators. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.world.close();
  }
}
