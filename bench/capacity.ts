/**
 * Benchmark 1: can the emulators carry the scale ("start in under 1 s each and keep up with 5,000
 * nodes and 1,000 Services")? Start times, bulk creation, full listings through the real clients, and the
 * delay of watch events reaching an Informer.
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { systemClock } from "../common/clock.ts";
import { makeKubeClients, nodeSource } from "../kube/clients.ts";
import { loadKubeConfig } from "../kube/config.ts";
import { Informer } from "../kube/informer.ts";
import { LinodeClient } from "../linode/client.ts";
import { staticToken } from "../linode/token.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { type DemoWorld, kubeletNode, startKubeSim, startLinodeSim } from "../sim/mod.ts";
import { type Cell, summarize, type Table } from "./table.ts";
import { startBenchWorld } from "./world.ts";

/** Options of `benchCapacity`. */
export interface CapacityOptions {
  /** Linodes and Nodes created and listed (5,000 in the issue). */
  nodes: number;
  /** Services created (1,000 in the issue). */
  services: number;
  /** Node updates sent through the watch. */
  updates: number;
  /** Repetitions of start-ups and listings. */
  runs: number;
}

/** One row: operation, size, runs, p50/p95/max of the samples (ms), API calls per run. */
function row(operation: string, size: number, samples: number[], callsPerRun: Cell = "-"): Cell[] {
  const s = summarize(samples);
  return [operation, size, samples.length, s.p50, s.p95, s.max, callsPerRun];
}

async function timed(fn: () => unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Takes `runs` samples of `measure`, one after the other. */
async function sample(runs: number, measure: () => Promise<number>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await measure());
  return samples;
}

function repeat(runs: number, fn: () => Promise<unknown>): Promise<number[]> {
  return sample(runs, () => timed(fn));
}

const PROBE = new URL("./start_probe.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

/** Spawns `start_probe.ts`; returns the wall time from spawn until it reports its emulator listening. */
async function processStartMs(which: "linode" | "kube" | "kube-tls"): Promise<number> {
  const args = ["run", "-P=dev", "--config", CONFIG, PROBE, which];
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "null" }).spawn();
  let text = "";
  let readyMs = NaN;
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    if (Number.isNaN(readyMs) && text.includes("\n")) readyMs = performance.now() - t0;
  }
  const status = await child.status;
  if (!status.success || Number.isNaN(readyMs)) throw new Error(`Cannot start the ${which} emulator process`);
  return readyMs;
}

async function processStartTimes(runs: number): Promise<Cell[][]> {
  const rows: Cell[][] = [];
  for (const which of ["linode", "kube", "kube-tls"] as const) {
    const samples = await sample(runs, () => processStartMs(which));
    rows.push(row(`new process: boot + start ${which} emulator`, 1, samples));
  }
  return rows;
}

async function startTimes(runs: number): Promise<Cell[][]> {
  const linode = await repeat(runs, async () => await (await startLinodeSim()).close());
  const http = await repeat(runs, async () => await (await startKubeSim()).close());
  const https = await repeat(runs, async () => await (await startKubeSim({ tls: true })).close());
  return [
    row("start Linode emulator", 1, linode),
    row("start Kubernetes emulator (HTTP)", 1, http),
    row("start Kubernetes emulator (HTTPS, new CA)", 1, https),
  ];
}

function service(i: number): V1Service {
  const name = `svc-${i}`;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: { type: "ClusterIP", selector: { app: name }, ports: [{ port: 80, protocol: "TCP" }] },
  };
}

function populate(world: DemoWorld, o: CapacityOptions): Promise<Cell[][]> {
  const { linode, kube } = world;
  return Promise.all([
    timed(() => linode.world.addInstances(o.nodes, (i) => ({ label: `node-${i}`, region: world.region }))),
    timed(() => {
      for (let i = 0; i < o.nodes; i++) kube.store.create("nodes", kubeletNode(`node-${i}`));
    }),
    timed(() => {
      for (let i = 0; i < o.services; i++) kube.store.create("services", service(i));
    }),
  ]).then(([linodes, nodes, services]) => [
    row("create Linodes (emulator world)", o.nodes, [linodes]),
    row("create Nodes (kube store)", o.nodes, [nodes]),
    row("create Services (kube store)", o.services, [services]),
  ]);
}

async function listings(world: DemoWorld, o: CapacityOptions, kubeconfig: string): Promise<Cell[][]> {
  const metrics = new Registry();
  const core = makeKubeClients(loadKubeConfig({ kubeconfig }), { metrics }).core;
  const listNode = "GET /api/v1/nodes";
  world.kube.calls.reset();
  const nodes = await repeat(o.runs, async () => {
    const got = await core.listNode({});
    if (got.items.length !== o.nodes) throw new Error(`listNode gave ${got.items.length} nodes`);
  });
  const kubeCalls = world.kube.calls.count(listNode) / o.runs;
  const client = new LinodeClient({
    baseUrl: world.linode.url,
    token: staticToken(world.linode.token),
    timeoutMs: 30_000,
    metrics,
    log: componentLogger("bench"),
    clock: systemClock,
  });
  world.linode.calls.reset();
  const instances = await repeat(o.runs, async () => {
    const got = await client.instances.list();
    if (got.length !== o.nodes) throw new Error(`listInstances gave ${got.length} Linodes`);
  });
  return [
    row("listNode (client-node)", o.nodes, nodes, kubeCalls),
    row("listInstances (LinodeClient, 500/page)", o.nodes, instances, world.linode.calls.total() / o.runs),
  ];
}

async function watchFanOut(world: DemoWorld, o: CapacityOptions, kubeconfig: string): Promise<Cell[][]> {
  const kc = loadKubeConfig({ kubeconfig });
  const metrics = new Registry();
  const informer = new Informer<V1Node>(kc, nodeSource(makeKubeClients(kc, { metrics }).core), {
    log: componentLogger("bench"),
    metrics,
  });
  const stop = new AbortController();
  const running = informer.start(stop.signal);
  try {
    await informer.waitForSync(stop.signal);
    const sent = new Map<string, number>();
    const latencies: number[] = [];
    const all = Promise.withResolvers<void>();
    const off = informer.onChange((kind, node) => {
      const sentAt = sent.get(node.metadata?.labels?.["bench/update"] ?? "");
      if (kind !== "update" || sentAt === undefined) return;
      latencies.push(performance.now() - sentAt);
      if (latencies.length === o.updates) all.resolve();
    });
    const t0 = performance.now();
    for (let i = 0; i < o.updates; i++) {
      sent.set(String(i), performance.now());
      const patch = { metadata: { labels: { "bench/update": String(i) } } };
      world.kube.store.patch("nodes", `node-${i % o.nodes}`, patch, { type: "merge" });
    }
    await all.promise;
    const total = performance.now() - t0;
    off();
    return [
      row("watch fan-out: all updates reach an Informer", o.updates, [total]),
      row("watch fan-out: per-update delay", o.updates, latencies),
    ];
  } finally {
    stop.abort();
    await running;
  }
}

/** Runs benchmark 1; returns its table. */
export async function benchCapacity(o: CapacityOptions): Promise<Table> {
  const rows = [...await processStartTimes(Math.min(o.runs, 3)), ...await startTimes(o.runs)];
  await using world = await startBenchWorld();
  const kubeconfig = world.kubeconfigPath;
  rows.push(...await populate(world, o));
  rows.push(...await listings(world, o, kubeconfig));
  rows.push(...await watchFanOut(world, o, kubeconfig));
  return {
    title: "Emulator capacity",
    columns: ["operation", "size", "runs", "p50 (ms)", "p95 (ms)", "max (ms)", "API calls/run"],
    rows,
    notes: [
      "new process: wall time from spawning `deno run bench/start_probe.ts` until it reports listening " +
      "(runtime boot, module load, listen); the other start rows are in-process",
      "sizes from the issue: start in under 1 s each, keep up with 5,000 nodes and 1,000 Services",
      "watch fan-out: store patches committed back to back; delay = commit -> Informer change handler",
    ],
  };
}
