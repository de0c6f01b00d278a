/**
 * Profiles the idle CCM process at one cluster size (`deno run -P=dev bench/ccm_profile.ts --nodes=5000
 * [--services=50] [--seconds=120] [--heap] [--out=DIR]`): the cluster is set up and converged as the bench's
 * (bench/ccm_steady.ts), then the process is sampled through its inspector for `--seconds` while nothing
 * changes. Prints the functions and modules by self time; with `--heap`, a heap snapshot summarised by
 * constructor (self bytes). Writes `idle.cpuprofile` (and `idle.heapsnapshot`) under `--out` for DevTools.
 * With `--startup`, the profile covers the cold start instead: from the inspector's first answer after the
 * spawn until every Node is initialised and routed (written as `startup.cpuprofile`).
 * For "profile before changing" (docs/development.md); its figures are not the bench's.
 */
import { join } from "node:path";
import { freePort } from "../tests/process.ts";
import { startCluster, waitForQuiet } from "./ccm_steady.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** CPU ticks by thread (`/proc/<pid>/task/<tid>/stat`: name, utime + stime). */
async function threadTicks(pid: number): Promise<Map<string, { name: string; ticks: number }>> {
  const script = `for t in /proc/${pid}/task/*; do echo "\${t##*/} $(cat $t/stat)"; done`;
  const out = await new Deno.Command("sh", { args: ["-c", script], stdout: "piped" }).output();
  const threads = new Map<string, { name: string; ticks: number }>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const open = line.indexOf("(");
    const close = line.lastIndexOf(")");
    if (open < 0 || close < 0) continue;
    const fields = line.slice(close + 2).split(" ");
    // After the name: state is field 3, utime 14 and stime 15 (1-based over the whole line).
    const ticks = Number(fields[11]) + Number(fields[12]);
    threads.set(line.split(" ")[0] ?? "", { name: line.slice(open + 1, close), ticks });
  }
  return threads;
}

/** CPU seconds by thread name over a window, largest first. */
function threadDelta(
  before: Map<string, { name: string; ticks: number }>,
  after: Map<string, { name: string; ticks: number }>,
  ticksPerSec: number,
): [string, number][] {
  const byName = new Map<string, number>();
  for (const [tid, t] of after) {
    const d = (t.ticks - (before.get(tid)?.ticks ?? 0)) / ticksPerSec;
    byName.set(t.name, (byName.get(t.name) ?? 0) + d);
  }
  return [...byName].sort((a, b) => b[1] - a[1]);
}

function arg(name: string, def: string): string {
  const found = Deno.args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (found === undefined) return def;
  return found.includes("=") ? found.slice(name.length + 3) : "true";
}

/** A Chrome DevTools Protocol session over the inspector's WebSocket. */
class Inspector implements Disposable {
  readonly #ws: WebSocket;
  #next = 1;
  readonly #pending = new Map<number, (msg: { result?: unknown; error?: unknown }) => void>();
  readonly #chunks: string[] = [];

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.onmessage = (e) => {
      const msg = JSON.parse(String(e.data));
      if (msg.id !== undefined) this.#pending.get(msg.id)?.(msg);
      else if (msg.method === "HeapProfiler.addHeapSnapshotChunk") this.#chunks.push(msg.params.chunk);
    };
  }

  static async connect(port: number): Promise<Inspector> {
    const deadline = performance.now() + 30_000;
    for (;;) {
      try {
        const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
        const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
        await new Promise((resolve, reject) => {
          ws.onopen = resolve;
          ws.onerror = reject;
        });
        return new Inspector(ws);
      } catch (e) {
        if (performance.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.#next++;
    const { promise, resolve, reject } = Promise.withResolvers<T>();
    this.#pending.set(id, (msg) => {
      this.#pending.delete(id);
      if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
      else resolve(msg.result as T);
    });
    this.#ws.send(JSON.stringify({ id, method, params }));
    return promise;
  }

  takeChunks(): string {
    return this.#chunks.splice(0).join("");
  }

  [Symbol.dispose](): void {
    this.#ws.close();
  }
}

function shortUrl(url: string): string {
  const i = url.indexOf("/node_modules/");
  if (i >= 0) return url.slice(url.indexOf("/node_modules/") + 14);
  const m = url.match(/\/(?:main|wt-[^/]+|ci\d*)\/(.*)$/);
  return m?.[1] ?? url.replace(/^file:\/\//, "");
}

/** Self time by function and by module, in ms, largest first. */
function selfTimes(profile: Profile): { byFunction: [string, number][]; byModule: [string, number][] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const mod = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node) return;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? shortUrl(url) : "(native)";
    const key = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + ms);
    const module = url ? where.split(":")[0] ?? where : functionName;
    mod.set(module, (mod.get(module) ?? 0) + ms);
  });
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { byFunction: sorted(fn), byModule: sorted(mod) };
}

/** Prints the JS thread's busy time and the functions and modules by self time. */
function printProfile(profile: Profile, title: string): void {
  const { byFunction, byModule } = selfTimes(profile);
  const sampledMs = byFunction.reduce((s, [, ms]) => s + ms, 0);
  const idleMs = byFunction.filter(([k]) => k.startsWith("(idle)")).reduce((s, [, ms]) => s + ms, 0);
  console.log(`${title}; JS thread busy ${((sampledMs - idleMs) / 1000).toFixed(2)} s`);
  console.log("\nself ms\tfunction");
  for (const [k, ms] of byFunction.filter(([k]) => !k.startsWith("(idle)")).slice(0, 40)) {
    console.log(`${ms.toFixed(0)}\t${k}`);
  }
  console.log("\nself ms\tmodule");
  for (const [k, ms] of byModule.filter(([k]) => k !== "(idle)").slice(0, 25)) {
    console.log(`${ms.toFixed(0)}\t${k}`);
  }
}

/** Self bytes by node type and constructor name, largest first. */
function heapSummary(snapshot: string): [string, number, number][] {
  const snap = JSON.parse(snapshot);
  const fields: string[] = snap.snapshot.meta.node_fields;
  const types: string[] = snap.snapshot.meta.node_types[0];
  const stride = fields.length;
  const iType = fields.indexOf("type");
  const iName = fields.indexOf("name");
  const iSize = fields.indexOf("self_size");
  const nodes: number[] = snap.nodes;
  const strings: string[] = snap.strings;
  const by = new Map<string, [number, number]>();
  for (let i = 0; i < nodes.length; i += stride) {
    const type = types[nodes[i + iType] ?? 0] ?? "";
    const name = type === "object" || type === "closure" || type === "native"
      ? strings[nodes[i + iName] ?? 0] ?? ""
      : "";
    const key = `${type} ${name.slice(0, 60)}`;
    const entry = by.get(key) ?? [0, 0];
    entry[0] += nodes[i + iSize] ?? 0;
    entry[1]++;
    by.set(key, entry);
  }
  return [...by].map(([k, [bytes, count]]) => [k, bytes, count] as [string, number, number])
    .sort((a, b) => b[1] - a[1]);
}

if (import.meta.main) {
  const nodes = Number(arg("nodes", "5000"));
  const services = Number(arg("services", "50"));
  const seconds = Number(arg("seconds", "120"));
  const heap = arg("heap", "false") === "true";
  const out = arg("out", await Deno.makeTempDir({ prefix: "ccm-profile-" }));
  // Made now, not after minutes of profiling: a missing --out folder would lose the profile at the end.
  await Deno.mkdir(out, { recursive: true });
  const port = freePort();
  const startup = arg("startup", "false") === "true";
  // The cold start is profiled from the inspector's first answer, which comes while the cluster starts.
  const early = startup
    ? Inspector.connect(port).then(async (inspector) => {
      await inspector.send("Profiler.enable");
      await inspector.send("Profiler.setSamplingInterval", { interval: 1000 });
      await inspector.send("Profiler.start");
      return inspector;
    })
    : undefined;
  await using cluster = await startCluster(nodes, services, `profile-${nodes}`, [
    `--inspect=127.0.0.1:${port}`,
  ]);
  if (early) {
    using inspector = await early;
    const { profile } = await inspector.send<{ profile: Profile }>("Profiler.stop");
    await Deno.writeTextFile(join(out, "startup.cpuprofile"), JSON.stringify(profile));
    printProfile(profile, `${nodes} Nodes, cold start (${(cluster.nodesDoneMs / 1000).toFixed(1)} s)`);
    console.log(`\nwrote ${out}`);
    Deno.exit(0);
  }
  console.log(
    `converged: ready ${(cluster.readyMs / 1000).toFixed(1)} s, nodes ${
      (cluster.nodesDoneMs / 1000).toFixed(1)
    } s`,
  );
  await waitForQuiet(cluster);
  const cpuProfile = arg("cpu", "true") !== "false";
  using inspector = await Inspector.connect(port);
  const pid = cluster.ccm.proc.pid;
  const threads0 = await threadTicks(pid);
  const cpu0 = await cluster.ccm.cpuSeconds();
  if (cpuProfile) {
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: 500 });
    await inspector.send("Profiler.start");
  }
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const cpuSec = await cluster.ccm.cpuSeconds() - cpu0;
  const threads = threadDelta(threads0, await threadTicks(pid), 100);
  console.log(
    `${nodes} Nodes, ${seconds} s idle: process CPU ${cpuSec.toFixed(2)} s (${
      (cpuSec * 3600 / seconds).toFixed(0)
    } s/h)` +
      (cpuProfile ? " with the profiler on" : ""),
  );
  console.log(
    "CPU s by thread: " + threads.filter(([, s]) => s > 0).map(([n, s]) => `${n} ${s.toFixed(2)}`).join(", "),
  );
  if (!cpuProfile) Deno.exit(0);
  const { profile } = await inspector.send<{ profile: Profile }>("Profiler.stop");
  await Deno.writeTextFile(join(out, "idle.cpuprofile"), JSON.stringify(profile));
  printProfile(
    profile,
    `${nodes} Nodes, ${seconds} s idle: process CPU ${cpuSec.toFixed(2)} s (${
      (cpuSec * 3600 / seconds).toFixed(0)
    } s/h)`,
  );
  if (heap) {
    await inspector.send("HeapProfiler.enable");
    await inspector.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    const snapshot = inspector.takeChunks();
    await Deno.writeTextFile(join(out, "idle.heapsnapshot"), snapshot);
    console.log("\nself KiB\tcount\ttype constructor");
    for (const [k, bytes, count] of heapSummary(snapshot).slice(0, 40)) {
      console.log(`${(bytes / 1024).toFixed(0)}\t${count}\t${k}`);
    }
  }
  console.log(`\nwrote ${out}`);
}
