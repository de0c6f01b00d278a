/**
 * `deno task bench:footprint`: what one CCM process costs to ship and run. Bundles `main.ts` as
 * `deno task bundle` does, starts the demo world, then runs the bundle as its own process with the `ccm`
 * permission set (what `deno compile` embeds) and measures: spawn → `/readyz` 200, spawn → every Node
 * initialised, and the resident set (`VmRSS`, peak `VmHWM` from `/proc`) once the cluster is steady.
 */
import { request } from "node:https";
import { writeAll } from "../demo/terminal.ts";
import { buildBundle, ccmPermissionFlags, ccmV8Flags, EMULATOR_NET } from "../deploy/artifacts.ts";
import { join } from "node:path";
import { type DemoWorld, startDemoWorld } from "../sim/demo_world.ts";
import { UNINITIALIZED_TAINT } from "../sim/kubelet.ts";
import { renderTable, summarize, type Table } from "./table.ts";

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
  /** V8 flags of the CCM process (default: `deploy/v8-flags`, what the compiled binary embeds). */
  v8Flags?: readonly string[];
}

/** One measured process start. */
export interface FootprintRun {
  readyMs: number;
  initialisedMs: number;
  rssMiB: number;
  peakRssMiB: number;
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
async function measureOnce(
  world: DemoWorld,
  bundle: string,
  flags: readonly string[],
  o: Required<FootprintOptions>,
): Promise<FootprintRun> {
  const port = freePort();
  const dir = world.kubeconfigPath.replace(/\/[^/]+$/, "");
  const v8 = o.v8Flags.length ? [`--v8-flags=${o.v8Flags.join(",")}`] : [];
  // The binary's own flags (deno compile -P=ccm --ignore-env), plus the world's folder for its kubeconfig.
  const args = ["run", "--no-config", ...ccmPermissionFlags([dir], EMULATOR_NET), ...flags, ...v8];
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [...args, bundle, `--secure-port=${port}`, "--bind-address=127.0.0.1"],
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

/** The two ways the binary starts: without a V8 code cache (read-only root file system, every start in a
 * container) and with one (where its first run could write it). */
const MODES = [["without code cache", ["--no-code-cache"]], ["with code cache", []]] as const;

/** Measures `runs` starts of the bundled CCM per mode, each against a fresh demo world. */
export async function benchFootprint(options: FootprintOptions = {}): Promise<Table> {
  const o: Required<FootprintOptions> = {
    runs: options.runs ?? 3,
    nodes: options.nodes ?? 6,
    services: options.services ?? 2,
    settleMs: options.settleMs ?? 5_000,
    v8Flags: options.v8Flags ?? ccmV8Flags(),
  };
  const dir = await Deno.makeTempDir({ prefix: "ccm-footprint-" });
  try {
    const path = join(dir, "ccm.js");
    const bytes = await buildBundle(path);
    const start = async (flags: readonly string[]) => {
      // A fresh world each time, so every start initialises every Node.
      await using world = await startDemoWorld({ nodes: o.nodes, services: o.services });
      return await measureOnce(world, path, flags, o);
    };
    // Unmeasured: `deno run` analyses a new file's imports once (the compiled binary never does).
    await start([]);
    const runs = new Map<string, FootprintRun[]>(MODES.map(([mode]) => [mode, []]));
    for (let i = 0; i < o.runs; i++) {
      for (const [mode, flags] of MODES) runs.get(mode)?.push(await start(flags));
    }
    return footprintTable(bytes, runs, o);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function footprintTable(
  bundleBytes: number,
  byMode: ReadonlyMap<string, FootprintRun[]>,
  o: Required<FootprintOptions>,
): Table {
  const rows: (string | number)[][] = [[
    "bundle size (deno task bundle)",
    bundleBytes / MIB,
    bundleBytes / MIB,
    "MiB",
  ]];
  for (const [mode, runs] of byMode) {
    const row = (what: string, values: number[], unit: string) => {
      const s = summarize(values);
      rows.push([`${what}, ${mode}`, s.p50, s.max, unit]);
    };
    row("spawn to /readyz 200", runs.map((r) => r.readyMs), "ms");
    row(`spawn to ${o.nodes} Nodes initialised`, runs.map((r) => r.initialisedMs), "ms");
    row(`RSS ${o.settleMs / 1000} s later`, runs.map((r) => r.rssMiB), "MiB");
    row("peak RSS (VmHWM)", runs.map((r) => r.peakRssMiB), "MiB");
  }
  return {
    title: `Footprint: the bundle as its own process with the ccm permission set${
      o.v8Flags.length ? ` (${o.v8Flags.join(" ")})` : ""
    }`,
    columns: ["what", "p50", "max", "unit"],
    rows,
    notes: [
      `${o.runs} starts per mode, each against a fresh demo world (${o.nodes} Nodes, ${o.services} LoadBalancer Services)`,
      "the compiled binary embeds this bundle; deno run stands in for it (denort cannot be downloaded here)",
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
  });
  writeAll(Deno.stdout, renderTable(table) + "\n");
}
