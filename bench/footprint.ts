/**
 * `deno task bench:footprint`: what one CCM process costs to ship and run. Bundles `main.ts` as
 * `deno task bundle` does, starts the demo world, then runs the bundle as its own process with the `ccm`
 * permission set (what `deno compile` embeds) and measures: spawn → `/readyz` 200, spawn → every Node
 * initialised, and the resident set (`VmRSS`, peak `VmHWM` from `/proc`) once the cluster is steady.
 * `--jitless` runs the same with V8's interpreter only (what `MemoryDenyWriteExecute=yes` requires).
 */
import { request } from "node:https";
import { writeAll } from "../demo/terminal.ts";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type DemoWorld, startDemoWorld } from "../sim/demo_world.ts";
import { UNINITIALIZED_TAINT } from "../sim/kubelet.ts";
import { renderTable, summarize, type Table } from "./table.ts";

const REPO_DIR = fileURLToPath(new URL("..", import.meta.url));
const MIB = 1024 * 1024;

/** Options of `benchFootprint`. */
export interface FootprintOptions {
  /** Process starts measured (default 3). */
  runs?: number;
  /** Nodes and Services in the demo world (default 6 and 2, the demo's). */
  nodes?: number;
  services?: number;
  /** How long the steady cluster runs before RSS is read, in ms (default 5 s). */
  settleMs?: number;
  /** Extra V8 flags for the CCM process (`["--jitless"]`). */
  v8Flags?: readonly string[];
}

/** One measured process start. */
export interface FootprintRun {
  readyMs: number;
  initialisedMs: number;
  rssMiB: number;
  peakRssMiB: number;
}

/** Builds the bundle as `deno task bundle` does, into `dir`; returns its path and size in bytes. */
export async function buildBundle(dir: string): Promise<{ path: string; bytes: number }> {
  const path = join(dir, "ccm.js");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform=deno", "-o", path, "main.ts"],
    cwd: REPO_DIR,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`Cannot bundle main.ts: ${new TextDecoder().decode(out.stderr)}`);
  return { path, bytes: (await Deno.stat(path)).size };
}

/** The `read` list of the `ccm` permission set; `--allow-read` on a command line replaces it. */
function ccmReadList(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_DIR, "deno.json")));
  const read: unknown = config?.permissions?.ccm?.read;
  return Array.isArray(read) ? read.filter((p): p is string => typeof p === "string") : [];
}

/**
 * `VmRSS` and `VmHWM` of a process, in MiB. Deno asks for every permission to read `/proc/<pid>`, so this
 * asks `cat` (the bench already runs processes) rather than widening its own permission set.
 */
export async function residentMiB(pid: number): Promise<{ rss: number; peak: number }> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`], stderr: "null" }).output();
  const status = new TextDecoder().decode(out.stdout);
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rss: kib("VmRSS") * 1024 / MIB, peak: kib("VmHWM") * 1024 / MIB };
}

function getStatus(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    // The CCM's certificate is self-signed by default: this probe, like a kubelet's, does not verify it.
    const req = request(
      { host: "127.0.0.1", port, path, method: "GET", rejectUnauthorized: false, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", () => resolve(0));
    req.end();
  });
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function allInitialised(world: DemoWorld): boolean {
  return world.kube.store.list("nodes").every((n) => {
    const taints = (n as { spec?: { taints?: { key?: string }[] } }).spec?.taints ?? [];
    return !taints.some((t) => t.key === UNINITIALIZED_TAINT.key);
  });
}

function freePort(): number {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return listener.addr.port;
}

/** Spawns the bundle against `world`, measures one start, stops it with SIGTERM. */
async function measureOnce(world: DemoWorld, bundle: string, o: Required<FootprintOptions>) {
  const port = freePort();
  const dir = world.kubeconfigPath.replace(/\/[^/]+$/, "");
  const v8 = o.v8Flags.length ? [`--v8-flags=${o.v8Flags.join(",")}`] : [];
  const args = [
    "run",
    `--config=${join(REPO_DIR, "deno.json")}`,
    "-P=ccm",
    "--ignore-env",
    `--allow-read=${[...ccmReadList(), dir].join(",")}`,
    ...v8,
  ];
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [...args, bundle, `--secure-port=${port}`, "--bind-address=127.0.0.1"],
    cwd: REPO_DIR,
    env: { ...world.env, HOME: Deno.env.get("HOME") ?? "/", NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  try {
    await until(async () => exited || (await getStatus(port, "/readyz")) === 200, "/readyz 200");
    if (exited) throw new Error("exited before it was ready");
    const readyMs = performance.now() - started;
    await until(() => allInitialised(world), "every Node initialised");
    const initialisedMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, o.settleMs));
    const { rss, peak } = await residentMiB(child.pid);
    return { readyMs, initialisedMs, rssMiB: rss, peakRssMiB: peak };
  } catch (e) {
    if (!exited) throw e;
    throw new Error(`The CCM exited (${(await status).code}): ${(await stderr).slice(-2_000)}`, { cause: e });
  } finally {
    if (!exited) child.kill("SIGTERM");
    await status;
    await stderr;
  }
}

/** Measures `runs` starts of the bundled CCM, each against a fresh demo world. */
export async function benchFootprint(options: FootprintOptions = {}): Promise<Table> {
  const o: Required<FootprintOptions> = {
    runs: options.runs ?? 3,
    nodes: options.nodes ?? 6,
    services: options.services ?? 2,
    settleMs: options.settleMs ?? 5_000,
    v8Flags: options.v8Flags ?? [],
  };
  const dir = await Deno.makeTempDir({ prefix: "ccm-footprint-" });
  try {
    const bundle = await buildBundle(dir);
    const runs: FootprintRun[] = [];
    for (let i = 0; i < o.runs; i++) {
      // A fresh world each time, so every start initialises every Node.
      await using world = await startDemoWorld({ nodes: o.nodes, services: o.services });
      runs.push(await measureOnce(world, bundle.path, o));
    }
    return footprintTable(bundle.bytes, runs, o);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function footprintTable(
  bundleBytes: number,
  runs: readonly FootprintRun[],
  o: Required<FootprintOptions>,
): Table {
  const row = (what: string, values: number[], unit: string) => {
    const s = summarize(values);
    return [what, s.p50, s.max, unit];
  };
  return {
    title: `Footprint (bundle run with -P=ccm${o.v8Flags.length ? ` ${o.v8Flags.join(" ")}` : ""})`,
    columns: ["what", "p50", "max", "unit"],
    rows: [
      ["bundle size (deno task bundle)", bundleBytes / MIB, bundleBytes / MIB, "MiB"],
      row("spawn to /readyz 200", runs.map((r) => r.readyMs), "ms"),
      row(`spawn to ${o.nodes} Nodes initialised`, runs.map((r) => r.initialisedMs), "ms"),
      row(`RSS after ${o.settleMs / 1000} s steady`, runs.map((r) => r.rssMiB), "MiB"),
      row("peak RSS (VmHWM)", runs.map((r) => r.peakRssMiB), "MiB"),
    ],
    notes: [
      `${o.runs} starts against the demo world (${o.nodes} Nodes, ${o.services} LoadBalancer Services)`,
      "the compiled binary embeds the same bundle and adds the runtime it would otherwise load",
    ],
  };
}

function flagValue(args: readonly string[], name: string): number | undefined {
  const arg = args.find((a) => a.startsWith(`--${name}=`));
  return arg === undefined ? undefined : Number(arg.slice(name.length + 3));
}

if (import.meta.main) {
  const table = await benchFootprint({
    runs: flagValue(Deno.args, "runs"),
    nodes: flagValue(Deno.args, "nodes"),
    services: flagValue(Deno.args, "services"),
    v8Flags: Deno.args.includes("--jitless") ? ["--jitless"] : [],
  });
  writeAll(Deno.stdout, renderTable(table) + "\n");
}
