/**
 * What the Node informer holds at N Nodes (`deno run -P=dev --v8-flags=--expose-gc bench/informer_memory.ts
 * [--nodes=5000]`): V8 heap and RSS retained by an Informer synced over N Nodes as a real cluster reports them
 * (20 images, managedFields of kubelet and the CCM), with every field kept and with `trimNode` (what the CCM
 * stores), and the peak of one relist. The emulator runs in the same process and is filled first: the
 * figures are differences from that baseline, after a full GC.
 */
import type { V1Node } from "@kubernetes/client-node";
import { systemClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { makeKubeClients, nodeSource } from "../kube/clients.ts";
import { loadKubeConfig } from "../kube/config.ts";
import { Informer } from "../kube/informer.ts";
import { trimNode } from "../kube/trim.ts";
import { Registry } from "../common/metrics.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { wireNode } from "./informer_decode.ts";

const MIB = 1024 * 1024;

/** managedFields as a real apiserver keeps them for a Node written by kubelet and the CCM (~3 KB). */
function managedFields(): unknown[] {
  const fields = (n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, k) => [`f:field-${k}`, { ".": {}, "f:value": {} }]));
  return ["kubelet", "linode-cloud-controller-manager", "kube-controller-manager"].map((manager) => ({
    manager,
    operation: "Update",
    apiVersion: "v1",
    time: "2026-01-01T00:00:00Z",
    fieldsType: "FieldsV1",
    fieldsV1: { "f:status": fields(12), "f:metadata": fields(4) },
  }));
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error("Run with --v8-flags=--expose-gc");
  g();
  g();
}

function usage(): { heap: number; rss: number } {
  gc();
  const m = Deno.memoryUsage();
  return { heap: m.heapUsed / MIB, rss: m.rss / MIB };
}

async function measure(count: number, trim: boolean): Promise<string> {
  await using kube = await startKubeSim();
  for (let i = 0; i < count; i++) {
    kube.store.create(
      "nodes",
      {
        ...wireNode(i),
        metadata: { ...(wireNode(i).metadata as object), managedFields: managedFields() },
      } as never,
    );
  }
  const dir = await Deno.makeTempDir({ prefix: "informer_memory_" });
  const stop = new AbortController();
  try {
    await kube.writeKubeconfig(`${dir}/kubeconfig`);
    const kc = loadKubeConfig({ kubeconfig: `${dir}/kubeconfig` });
    const metrics = new Registry();
    const core = makeKubeClients(kc, { metrics }).core;
    const before = usage();
    let peak = 0;
    const timer = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().heapUsed / MIB), 5);
    const informer = new Informer<V1Node>(kc, nodeSource(core), {
      log: componentLogger("bench"),
      metrics,
      clock: systemClock,
      ...(trim ? { transform: trimNode } : {}),
    });
    const running = informer.start(stop.signal);
    await informer.waitForSync(stop.signal);
    clearInterval(timer);
    const after = usage();
    const one = JSON.stringify(informer.list()[0]).length;
    stop.abort();
    await running;
    const row = [
      count,
      trim ? "trimNode" : "everything",
      (after.heap - before.heap).toFixed(1),
      (peak - before.heap).toFixed(1),
      (after.rss - before.rss).toFixed(1),
      after.rss.toFixed(0),
      one,
    ];
    return row.join("\t");
  } finally {
    stop.abort();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const arg = Deno.args.find((a) => a.startsWith("--nodes="));
  const sizes = arg ? arg.slice(8).split(",").map(Number) : [100, 1000, 5000];
  console.log(
    "nodes\tkept\theap retained MiB\theap peak of the list MiB\tRSS delta MiB\tRSS MiB\tbytes/Node (JSON)",
  );
  for (const n of sizes) for (const trim of [false, true]) console.log(await measure(n, trim));
}
