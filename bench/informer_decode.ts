/**
 * What turning watch events into client-node models costs at 5,000 Nodes (`deno run -P=dev
 * bench/informer_decode.ts [--nodes=5000] [--rounds=5]`). Decoding alone, per way:
 * - JSON → YAML text → model: `loadYaml(JSON.stringify(event))`, the informer's way until it was measured here;
 * - model from the parsed JSON: `fromWire` (kube/informer_watch.ts), the informer's way since;
 * - for scale, `JSON.parse` of the event line, which client-node's Watch does for every event anyway;
 * then the whole path: an Informer against the Kubernetes emulator applying one MODIFIED event per Node.
 */
import { loadYaml, type V1Node } from "@kubernetes/client-node";
import { systemClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { makeKubeClients, nodeSource } from "../kube/clients.ts";
import { loadKubeConfig } from "../kube/config.ts";
import { fromWire } from "../kube/informer_watch.ts";
import { Informer } from "../kube/informer.ts";
import { Registry } from "../common/metrics.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { kubeletNode } from "../sim/kubelet.ts";

/** A Node as a watch delivers it after the CCM initialised it: wire JSON, with the images kubelet reports. */
export function wireNode(i: number): Record<string, unknown> {
  const node = kubeletNode(`node-${i}`, { providerID: `linode://${1000 + i}`, taints: [] });
  node.metadata = {
    ...node.metadata,
    resourceVersion: String(10_000 + i),
    uid: crypto.randomUUID(),
    creationTimestamp: new Date(Date.UTC(2026, 0, 1)),
    labels: {
      ...node.metadata?.labels,
      "node.kubernetes.io/instance-type": "g6-standard-2",
      "topology.kubernetes.io/region": "us-east",
      "node.k8s.linode.com/host-uuid": crypto.randomUUID(),
    },
  };
  node.status = {
    ...node.status,
    addresses: [
      { type: "Hostname", address: `node-${i}` },
      { type: "InternalIP", address: `192.168.${i >> 8}.${i & 255}` },
      { type: "ExternalIP", address: `45.79.${i >> 8}.${i & 255}` },
    ],
    images: Array.from({ length: 20 }, (_, k) => ({
      names: [`registry.k8s.io/image-${k}@sha256:${"ab".repeat(32)}`, `registry.k8s.io/image-${k}:v1.${k}`],
      sizeBytes: 10_000_000 + k,
    })),
  };
  return JSON.parse(JSON.stringify(node));
}

function timeMs(work: () => void): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function decodeRows(nodes: readonly Record<string, unknown>[], rounds: number): string[] {
  const lines = nodes.map((n) => JSON.stringify({ type: "MODIFIED", object: n }));
  const ways: [string, (i: number) => unknown][] = [
    [
      "JSON -> YAML -> model (loadYaml)",
      (i) => loadYaml<V1Node>(JSON.stringify({ ...nodes[i], apiVersion: "v1", kind: "Node" })),
    ],
    ["model from parsed JSON (fromWire)", (i) => fromWire<V1Node>(nodes[i], "v1", "Node")],
    ["for scale: JSON.parse of the event line", (i) => JSON.parse(lines[i] ?? "")],
  ];
  return ways.map(([name, decode]) => {
    const totals = Array.from({ length: rounds }, () => timeMs(() => nodes.forEach((_, i) => decode(i))));
    const ms = median(totals);
    const perNode = (ms * 1000 / nodes.length).toFixed(1);
    return `${name.padEnd(44)} ${ms.toFixed(1).padStart(8)} ms  ${perNode.padStart(7)} µs/Node`;
  });
}

/** An Informer over `count` Nodes in the emulator; ms from patching every Node to all updates applied. */
async function informerMs(count: number): Promise<number> {
  await using kube = await startKubeSim();
  for (let i = 0; i < count; i++) kube.store.create("nodes", wireNode(i) as never);
  const dir = await Deno.makeTempDir({ prefix: "informer_decode_" });
  const stop = new AbortController();
  try {
    await kube.writeKubeconfig(`${dir}/kubeconfig`);
    const kc = loadKubeConfig({ kubeconfig: `${dir}/kubeconfig` });
    const metrics = new Registry();
    const log = componentLogger("bench");
    const informer = new Informer(kc, nodeSource(makeKubeClients(kc, { metrics }).core), {
      log,
      metrics,
      clock: systemClock,
    });
    const running = informer.start(stop.signal);
    await informer.waitForSync(stop.signal);
    await new Promise((r) => setTimeout(r, 200)); // the watch opens after the list
    let updates = 0;
    const all = Promise.withResolvers<void>();
    informer.onChange((kind) => kind === "update" && ++updates === count && all.resolve());
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      kube.store.patch("nodes", `node-${i}`, { metadata: { annotations: { touched: "yes" } } }, {
        type: "merge",
      });
    }
    await all.promise;
    const ms = performance.now() - started;
    stop.abort();
    await running;
    return ms;
  } finally {
    stop.abort();
    await Deno.remove(dir, { recursive: true });
  }
}

function flag(name: string, def: number): number {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.slice(name.length + 3)) : def;
}

if (import.meta.main) {
  const count = flag("nodes", 5_000);
  const rounds = flag("rounds", 5);
  const nodes = Array.from({ length: count }, (_, i) => wireNode(i));
  const bytes = JSON.stringify(nodes[0]).length;
  console.log(`Decoding ${count} watched Nodes (${bytes} bytes of JSON each), median of ${rounds} rounds:`);
  for (const row of decodeRows(nodes, rounds)) console.log(`  ${row}`);
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) runs.push(await informerMs(count));
  console.log(
    `Informer applying ${count} MODIFIED events from the emulator: ${
      median(runs).toFixed(0)
    } ms (median of 3)`,
  );
}
