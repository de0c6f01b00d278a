/**
 * The benchmarks' world: both emulators plus a VPC large enough for thousands of Linodes (the demo world's
 * /24 subnet holds 254). Linodes and Nodes are created separately, so a scenario can warm the CCM's cache
 * with Linodes before their Nodes register.
 */
import { join } from "node:path";
import {
  kubeletNode,
  type KubeSim,
  type LinodeSim,
  registerNode,
  startKubeSim,
  startLinodeSim,
} from "../sim/mod.ts";

/** Region of every benchmark Linode. */
export const BENCH_REGION = "us-east";
/** Label of the benchmark VPC (pass it as `--vpc-names` to read addresses from it). */
export const BENCH_VPC = "bench-vpc";

/** Both emulators, a VPC, and the environment that points a CCM at them. */
export interface BenchWorld extends AsyncDisposable {
  readonly linode: LinodeSim;
  readonly kube: KubeSim;
  /** `LINODE_URL`, `LINODE_API_TOKEN`, `LINODE_REGION`, `KUBECONFIG`. */
  readonly env: Readonly<Record<string, string>>;
  /** Creates a Linode in the VPC; returns its id. */
  addLinode(name: string): number;
  /** Registers a Node as kubelet does (uninitialised taint, Ready, a pod CIDR). */
  registerNode(name: string): void;
  close(): Promise<void>;
}

/** Starts both emulators (Kubernetes over plain HTTP: the CCM trusts it through its kubeconfig). */
export async function startBenchWorld(): Promise<BenchWorld> {
  const linode = await startLinodeSim();
  const kube = await startKubeSim();
  const dir = await Deno.makeTempDir({ prefix: "linode-ccm-bench-" });
  const kubeconfig = join(dir, "kubeconfig");
  await kube.writeKubeconfig(kubeconfig);
  const vpc = linode.world.createVpc({
    label: BENCH_VPC,
    region: BENCH_REGION,
    subnets: [{ label: "default", ipv4: "10.0.0.0/16" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  let podBlock = 0;
  const close = async () => {
    await linode.close();
    await kube.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  return {
    linode,
    kube,
    env: {
      LINODE_URL: linode.url,
      LINODE_API_TOKEN: linode.token,
      LINODE_REGION: BENCH_REGION,
      KUBECONFIG: kubeconfig,
    },
    addLinode: (name) =>
      linode.world.addInstance({
        label: name,
        region: BENCH_REGION,
        privateIp: true,
        vpc: { vpcId: vpc.id, subnetId },
      })
        .id,
    registerNode: (name) => {
      const block = podBlock++;
      const podCidr = `10.${128 + (block >> 8)}.${block & 255}.0/24`;
      registerNode(kube, kubeletNode(name, { podCidr }));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
