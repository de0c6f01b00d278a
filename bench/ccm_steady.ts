/**
 * One cluster under the real CCM process at default settings: set up (Nodes, Services, then the CCM), timed
 * from spawn to `/readyz` and to everything done (every Node initialised and routed, every Service with a
 * NodeBalancer over the load-balancer pool), then a measurement window: Linode calls by route, CPU time,
 * resident memory and heap. Every count is checked: a cluster that does not converge fails the run.
 */
import { systemClock } from "../common/clock.ts";
import { type CcmChild, startCcmProcess } from "./ccm_process.ts";
import { CcmWorld } from "./ccm_world.ts";

const MIB = 1024 * 1024;

/** A cluster with its CCM process, converged. */
export interface Cluster extends AsyncDisposable {
  readonly world: CcmWorld;
  readonly ccm: CcmChild;
  /** Spawn → first `/readyz` 200. */
  readonly readyMs: number;
  /** Spawn → every Node initialised and routed (checked every 250 ms, or 10 × the check's own time). */
  readonly nodesDoneMs: number;
  /** Services created (once the Nodes were done) → every NodeBalancer complete over the pool. */
  readonly servicesDoneMs: number;
  /** Highest resident memory seen from spawn until the Services were done (sampled every second). */
  readonly startPeakRssMiB: number;
  /** CPU seconds the CCM process used from spawn until every Node was done (all threads, GC included). */
  readonly nodesDoneCpuSec: number;
}

/** Samples the process's resident memory every second until stopped; `peak` is the highest seen. */
function rssSampler(ccm: CcmChild): { readonly peak: number; stop(): Promise<void> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running && !ccm.proc.exitInfo) {
      peak = Math.max(peak, await ccm.rssBytes().catch(() => 0));
      await systemClock.sleep(1_000);
    }
  })();
  return {
    get peak() {
      return peak / MIB;
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** What one window measured. */
export interface WindowResult {
  readonly windowSec: number;
  /** Linode calls received by the emulator during the window. */
  readonly calls: number;
  readonly callsPerMin: number;
  /** Calls on NodeBalancer and firewall routes (the service controller's), per Service per minute. */
  readonly serviceCallsPerServiceMin: number;
  /** Calls by route template. */
  readonly byRoute: Readonly<Record<string, number>>;
  readonly cpuSec: number;
  /** CPU seconds the CCM would use in an hour at this rate. */
  readonly cpuSecPerHour: number;
  readonly rssMiB: number;
  readonly rssMaxMiB: number;
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
}

/** The CCM's last warning and error lines, for the message when it exits. */
export function lastWords(ccm: CcmChild): string {
  const lines = ccm.proc.lines.filter((l) => l.level !== "INFO" && l.level !== "DEBUG").slice(-3);
  return lines.map((l) => `${l.level} ${l.message}`).join(" | ") || ccm.proc.stderr.slice(-500);
}

/**
 * Polls `world.problems()` until it is empty or `timeoutMs` passes; throws naming what is still missing.
 * The check runs in the process that hosts the emulators, so it pauses ten times as long as it took: at
 * 5,000 Nodes it would otherwise slow the emulators the CCM is waiting on.
 */
export async function waitConverged(world: CcmWorld, ccm: CcmChild, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const t0 = performance.now();
    const problems = world.problems();
    if (problems.length === 0) return;
    if (ccm.proc.exitInfo) {
      throw new Error(`${ccm.proc.name} exited (${ccm.proc.exitInfo.code}): ${lastWords(ccm)}`);
    }
    if (performance.now() > deadline) {
      throw new Error(`${ccm.proc.name} did not converge in ${timeoutMs} ms: ${problems.join("; ")}`);
    }
    await systemClock.sleep(Math.max(250, 10 * (performance.now() - t0)));
  }
}

/** Time allowed to converge: generous on a busy 2-core machine, so only a real failure times out. */
export function convergeTimeoutMs(nodes: number): number {
  return 120_000 + 200 * nodes;
}

/**
 * Registers `nodes` Nodes, spawns the CCM and waits until it is ready and every Node is initialised and
 * routed; then creates `services` Services (as applications would on a running cluster) and waits for their
 * NodeBalancers. Throws when any of it does not happen in time.
 */
export async function startCluster(
  nodes: number,
  services: number,
  name: string,
  denoFlags?: readonly string[],
): Promise<Cluster> {
  const world = await CcmWorld.start(nodes, 0);
  let ccm: CcmChild | undefined;
  try {
    ccm = await startCcmProcess(world, { name, denoFlags });
    const rss = rssSampler(ccm);
    let readyMs: number, nodesDoneMs: number, servicesDoneMs: number, nodesDoneCpuSec: number;
    try {
      readyMs = await ccm.waitReady();
      await waitConverged(world, ccm, convergeTimeoutMs(nodes));
      nodesDoneMs = performance.now() - ccm.spawnedAt;
      nodesDoneCpuSec = await ccm.cpuSeconds();
      const t0 = performance.now();
      for (let i = 0; i < services; i++) world.addService();
      await waitConverged(world, ccm, convergeTimeoutMs(nodes));
      servicesDoneMs = performance.now() - t0;
    } finally {
      await rss.stop();
    }
    const child = ccm;
    return {
      world,
      ccm,
      readyMs,
      nodesDoneMs,
      servicesDoneMs,
      startPeakRssMiB: rss.peak,
      nodesDoneCpuSec,
      async [Symbol.asyncDispose]() {
        await child[Symbol.asyncDispose]();
        await world[Symbol.asyncDispose]();
      },
    };
  } catch (e) {
    await ccm?.[Symbol.asyncDispose]();
    await world[Symbol.asyncDispose]();
    throw e;
  }
}

function isServiceRoute(key: string): boolean {
  return key.includes("/nodebalancers") || key.includes("/networking/firewalls");
}

/** Waits until the Linode emulator has had no call for `quietMs` (at most `maxMs`): earlier work is over. */
export async function waitForQuiet(cluster: Cluster, quietMs = 5_000, maxMs = 60_000): Promise<void> {
  const calls = cluster.world.world.linode.calls;
  const deadline = performance.now() + maxMs;
  let seen = calls.total();
  let quietSince = performance.now();
  while (performance.now() - quietSince < quietMs && performance.now() < deadline) {
    await systemClock.sleep(250);
    if (calls.total() !== seen) [seen, quietSince] = [calls.total(), performance.now()];
  }
}

/**
 * Counts the CCM's Linode calls over `windowSec`, once the set-up calls are over, while `drive` (if given)
 * changes the cluster; samples resident memory every 10 s. Throws when the CCM exits during the window.
 */
export async function measureWindow(
  cluster: Cluster,
  windowSec: number,
  drive?: (signal: AbortSignal) => Promise<void>,
): Promise<WindowResult> {
  const { world, ccm } = cluster;
  const calls = world.world.linode.calls;
  await waitForQuiet(cluster);
  calls.reset();
  const cpu0 = await ccm.cpuSeconds();
  const t0 = performance.now();
  const end = new AbortController();
  const driving = drive?.(end.signal);
  let rssMax = await ccm.rssBytes();
  while (performance.now() - t0 < windowSec * 1000) {
    if (ccm.proc.exitInfo) {
      throw new Error(`${ccm.proc.name} exited (${ccm.proc.exitInfo.code}) during the window`);
    }
    await systemClock.sleep(Math.min(10_000, Math.max(0, windowSec * 1000 - (performance.now() - t0))));
    rssMax = Math.max(rssMax, await ccm.rssBytes());
  }
  const snap = calls.snapshot();
  const elapsedSec = (performance.now() - t0) / 1000;
  const cpuSec = await ccm.cpuSeconds() - cpu0;
  end.abort();
  await driving;
  const metrics = await ccm.metrics();
  const serviceCalls = Object.entries(snap.counts).filter(([k]) => isServiceRoute(k))
    .reduce((sum, [, n]) => sum + n, 0);
  const services = Math.max(1, world.services.length);
  return {
    windowSec: elapsedSec,
    calls: snap.total,
    callsPerMin: (snap.total * 60) / elapsedSec,
    serviceCallsPerServiceMin: (serviceCalls * 60) / elapsedSec / services,
    byRoute: snap.counts,
    cpuSec,
    cpuSecPerHour: (cpuSec * 3600) / elapsedSec,
    rssMiB: await ccm.rssBytes() / MIB,
    rssMaxMiB: rssMax / MIB,
    heapUsedMiB: (metrics.get("ccm_heap_used_bytes") ?? NaN) / MIB,
    heapTotalMiB: (metrics.get("ccm_heap_total_bytes") ?? NaN) / MIB,
  };
}
