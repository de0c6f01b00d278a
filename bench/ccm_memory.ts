/**
 * Start-up and memory of the CCM process by cluster size, one cluster at a time (`deno run -P=dev
 * bench/ccm_memory.ts [--nodes=100,1000,5000] [--services=5] [--window=30] [--metrics=REGEX]`): spawn → every Node
 * initialised and routed, then a short steady window with resident memory (now and max) and V8 heap. The
 * whole-CCM bench (`deno task bench --only=ccm`) measures the same with a 10 min window; this one is for
 * quick before/after comparisons and is marked as such wherever its figures are quoted.
 */
import { measureWindow, startCluster } from "./ccm_steady.ts";

function list(name: string, def: number[]): number[] {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(name.length + 3).split(",").map(Number) : def;
}

if (import.meta.main) {
  const [services = 5] = list("services", [5]);
  const [windowSec = 30] = list("window", [30]);
  console.log(
    "nodes\tready s\tnodes done s\tCPU s to done\tstart peak MiB\tRSS MiB\tRSS max MiB\theap used MiB\theap total MiB\tcalls/min\tCPU s/h",
  );
  for (const n of list("nodes", [100, 1000, 5000])) {
    await using cluster = await startCluster(n, services, `mem-${n}`);
    const w = await measureWindow(cluster, windowSec);
    const row = [
      n,
      (cluster.readyMs / 1000).toFixed(1),
      (cluster.nodesDoneMs / 1000).toFixed(1),
      cluster.nodesDoneCpuSec.toFixed(1),
      cluster.startPeakRssMiB.toFixed(0),
      w.rssMiB.toFixed(0),
      w.rssMaxMiB.toFixed(0),
      w.heapUsedMiB.toFixed(1),
      w.heapTotalMiB.toFixed(1),
      w.callsPerMin.toFixed(1),
      w.cpuSecPerHour.toFixed(0),
    ];
    console.log(row.join("\t"));
    // `--metrics=REGEX`: the CCM's samples whose line matches, after the window (what the start-up cost).
    const pattern = Deno.args.find((a) => a.startsWith("--metrics="))?.slice("--metrics=".length);
    if (pattern) {
      const re = new RegExp(pattern);
      for (const line of (await cluster.ccm.metricsText()).split("\n")) {
        if (!line.startsWith("#") && re.test(line)) console.log(`  ${line}`);
      }
    }
  }
}
