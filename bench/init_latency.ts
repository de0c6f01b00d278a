/**
 * Benchmark 2: how long a new Node waits for the CCM (Node created → uninitialised taint gone), with the
 * Linode already in the instance cache (warm) and with a Linode created after the last refresh (new).
 */
import { systemClock } from "../common/clock.ts";
import { DEFAULT_FORCED_REFRESH_INTERVAL_MS } from "../controllers/node/lookup.ts";
import type { DemoWorld } from "../sim/mod.ts";
import { type CcmHarness, InitTimer, startCcm } from "./ccm_harness.ts";
import { summarize, type Table } from "./table.ts";
import { startBenchWorld } from "./world.ts";

/** Options of `benchInitLatency`. */
export interface InitLatencyOptions {
  /** Nodes added per warm-cache case. */
  nodes: number;
  /** Nodes added per new-Linode case (each can wait for a cache refresh: seconds). */
  newNodes: number;
  /** Nodes (and Linodes) present and initialised before the cases start. */
  initialNodes?: number;
}

interface Case {
  name: string;
  /** Linodes exist and the cache was refreshed after they were created. */
  warm: boolean;
  burst: boolean;
  /** Quiet time before each Node (or before the burst), so no earlier forced refresh paces this one. */
  quiet: boolean;
}

const CASES: readonly Case[] = [
  { name: "warm cache, one at a time", warm: true, burst: false, quiet: false },
  { name: "warm cache, burst", warm: true, burst: true, quiet: false },
  { name: "new Linode, one at a time", warm: false, burst: false, quiet: true },
  { name: "new Linode, burst", warm: false, burst: true, quiet: true },
  { name: "new Linode, back to back", warm: false, burst: false, quiet: false },
];

/** Sleeps past the interval of forced refreshes (so the next new Node may force one at once). */
const quietTime = () => systemClock.sleep(DEFAULT_FORCED_REFRESH_INTERVAL_MS + 100);

const INSTANCE_LIST = "GET /v4/linode/instances";

async function runCase(world: DemoWorld, h: CcmHarness, c: Case, names: string[]): Promise<number[]> {
  if (c.warm) {
    for (const name of names) world.addLinode(name);
    await h.ccm.instances.refresh();
  }
  using timer = new InitTimer(world);
  const add = (name: string) =>
    timer.create(name, () => {
      if (!c.warm) world.addLinode(name);
      world.registerNode(name);
    });
  if (c.quiet) await quietTime();
  world.linode.calls.reset();
  if (c.burst) {
    for (const name of names) add(name);
    await Promise.all(names.map((n) => timer.initialised(n)));
  } else {
    for (const [i, name] of names.entries()) {
      if (c.quiet && i > 0) await quietTime();
      add(name);
      await timer.initialised(name);
    }
  }
  return timer.latenciesMs(names);
}

async function initialiseCluster(world: DemoWorld, h: CcmHarness, count: number): Promise<void> {
  using timer = new InitTimer(world);
  const names = Array.from({ length: count }, (_, i) => `node-${i}`);
  for (const name of names) world.addLinode(name);
  await h.ccm.instances.refresh();
  for (const name of names) timer.create(name, () => world.registerNode(name));
  await Promise.all(names.map((n) => timer.initialised(n)));
}

/** Runs every case against one CCM with default settings; returns the latency table. */
export async function benchInitLatency(options: InitLatencyOptions): Promise<Table> {
  await using world = await startBenchWorld();
  await using h = await startCcm(world);
  await initialiseCluster(world, h, options.initialNodes ?? 6);
  const rows: Table["rows"] = [];
  for (const [i, c] of CASES.entries()) {
    const count = c.warm ? options.nodes : options.newNodes;
    const names = Array.from({ length: count }, (_, j) => `case${i}-node-${j}`);
    const latencies = await runCase(world, h, c, names);
    const s = summarize(latencies);
    const calls = world.linode.calls;
    rows.push([c.name, count, s.p50, s.p95, s.max, calls.total(), calls.count(INSTANCE_LIST)]);
  }
  return {
    title: "Node initialisation latency (Node created in the kube emulator -> uninitialized taint removed)",
    columns: ["case", "nodes", "p50 (ms)", "p95 (ms)", "max (ms)", "Linode calls", "instance listings"],
    rows,
    notes: [
      "CCM in-process with default settings (instance cache TTL 15 s, --concurrent-node-syncs=1), " +
      `${options.initialNodes ?? 6} Nodes already initialised`,
      "warm: the Linodes existed at the last cache refresh; new: each Linode is created with its Node",
      "a new Node not in the cache forces one shared refresh, at most one per 2 s: 'one at a time' and 'burst' " +
      "start after 2 s of quiet, 'back to back' adds each Node as soon as the previous one is initialised",
      "Linode calls: every request the emulator received during the case (all routes)",
    ],
  };
}
