/**
 * Does the cold start grow faster than the cluster? (`deno run -P=dev bench/startup_scaling.ts
 * [--nodes=500,1000,2000]`, add `--cpu-prof` to `deno run` for a profile). The whole CCM in this process at
 * default settings plus routes: N Linodes in the VPC and N Nodes registered by kubelet (pod CIDRs set)
 * before it starts; times start → every Node initialised and routed, and prints ms per Node: a linear start
 * keeps it flat.
 */
import { systemClock } from "../common/clock.ts";
import { startCcm } from "./ccm_harness.ts";
import { BENCH_VPC, startBenchWorld } from "./world.ts";

const FLAGS = ["--enable-route-controller", `--vpc-names=${BENCH_VPC}`, "--cluster-cidr=10.192.0.0/10"];

async function coldStartMs(nodes: number): Promise<number> {
  await using world = await startBenchWorld();
  const ids = Array.from({ length: nodes }, (_, i) => world.addLinode(`node-${i}`));
  for (let i = 0; i < nodes; i++) world.registerNode(`node-${i}`);
  const started = performance.now();
  await using h = await startCcm(world, { flags: FLAGS });
  const done = () =>
    ids.every((id) => world.linode.world.ipRanges(id).length === 1) &&
    h.ccm.nodes.list().every((n) => !n.spec?.taints?.length);
  while (!done()) {
    if (performance.now() - started > 900_000) throw new Error(`${nodes} Nodes not done in 15 min`);
    await systemClock.sleep(100);
  }
  return performance.now() - started;
}

if (import.meta.main) {
  const arg = Deno.args.find((a) => a.startsWith("--nodes="));
  const sizes = arg ? arg.slice(8).split(",").map(Number) : [500, 1000, 2000];
  console.log("nodes\tstart -> all initialised and routed (ms)\tms per Node");
  for (const n of sizes) {
    const ms = await coldStartMs(n);
    console.log(`${n}\t${ms.toFixed(0)}\t${(ms / n).toFixed(2)}`);
  }
}
