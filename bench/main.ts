/**
 * `deno task bench`: what this CCM costs and how fast it is, as plain-text tables (and JSON with `--json`).
 * 1 emulator capacity, 2 Node initialisation latency, 3 Linode API cost vs the Go CCM's model, 4 memory,
 * 5 route latency and the whole CCM's cost with routes, node IPAM latency and cost (1-5 and `ipam`
 * in-process), 6 the whole CCM as a process against the Go CCM (`ccm`: its table, JSON and plot go to
 * `bench/results/`). With `ccm` selected, the in-process ones run
 * in a child process while its steady-state windows run, which keeps the whole run within about 15 minutes.
 * Sizes are flags (`--help`); `--quick` is the small run the smoke test uses. Exit 1 when a count is wrong.
 */
import { join } from "node:path";
import { writeAll } from "../demo/terminal.ts";
import { setupLogging } from "../common/log.ts";
import { benchApiCost } from "./api_cost.ts";
import { benchWholeCcm, rewriteResults } from "./ccm_bench.ts";
import { killCcmProcesses } from "./ccm_process.ts";
import { reportTable } from "./ccm_report.ts";
import { DEFAULT_LEASE, QUICK_LEASE } from "./ccm_takeover.ts";
import { benchCapacity } from "./capacity.ts";
import { benchInitLatency } from "./init_latency.ts";
import { type BenchOptions, DEFAULT_RESULTS_DIR, parseBenchArgs, USAGE } from "./options.ts";
import { benchIpam } from "./ipam.ts";
import { benchRoutes } from "./routes.ts";
import { renderTable, type Table } from "./table.ts";

/** Everything one run produced; `--json` writes this. */
export interface BenchResults {
  startedAt: string;
  deno: string;
  options: Omit<BenchOptions, "only"> & { only: string[] };
  tables: Table[];
  /** CCM log lines at warning or above during the run (expected in the new-Linode cases). */
  ccmWarnings: number;
}

const MIB = 1024 * 1024;
const MEASUREMENTS_PATH = new URL("../docs/measurements.md", import.meta.url).pathname;
const MAIN_PATH = new URL("./main.ts", import.meta.url).pathname;
const CONFIG_PATH = new URL("../deno.json", import.meta.url).pathname;

/**
 * Runs the in-process benchmarks as a child `deno run bench/main.ts` with the same sizes and hands over its
 * tables. A child, because they run while the CCM processes' windows do: in this process their synchronous
 * bursts (5,000 Nodes created at once) would hold up the emulators those CCMs renew their Lease against.
 */
async function runInChild(
  args: readonly string[],
  o: BenchOptions,
  done: (table: Table) => void,
): Promise<void> {
  const only = [...o.only].filter((s) => s !== "ccm");
  if (only.length === 0) return;
  const dir = await Deno.makeTempDir({ prefix: "bench_inprocess_" });
  try {
    const json = join(dir, "results.json");
    const passed = args.filter((a) => !/^--(only|json|results)(=|$)/.test(a));
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-P=dev",
        "--config",
        CONFIG_PATH,
        MAIN_PATH,
        ...passed,
        `--only=${only}`,
        `--json=${json}`,
      ],
      stdout: "null",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error(`the in-process benchmarks failed (exit ${out.code})`);
    const results = JSON.parse(await Deno.readTextFile(json)) as BenchResults;
    for (const t of results.tables) done(t);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function memoryRow(what: string): (string | number)[] {
  const m = Deno.memoryUsage();
  return [what, m.rss / MIB, m.heapUsed / MIB, m.heapTotal / MIB, m.external / MIB];
}

function memoryTable(rows: (string | number)[][], nodes: number): Table {
  return {
    title: "Memory (Deno.memoryUsage() of the bench process)",
    columns: ["when", "RSS (MiB)", "heap used (MiB)", "heap total (MiB)", "external (MiB)"],
    rows,
    notes: [
      `one process holds the CCM and both emulators (${nodes} Linodes and Nodes); the CCM alone is less`,
      "no forced GC: figures include garbage not yet collected and earlier benchmarks' leftovers",
    ],
  };
}

/** Runs the in-process benchmarks in order, handing each table to `done` as soon as it is ready. */
async function runInProcess(o: BenchOptions, done: (table: Table) => void): Promise<void> {
  const memory = [memoryRow("at start (modules loaded)")];
  if (o.only.has("capacity")) {
    done(await benchCapacity({ nodes: o.nodes, services: o.services, updates: o.updates, runs: o.runs }));
  }
  if (o.only.has("init")) done(await benchInitLatency({ nodes: o.initNodes, newNodes: o.newNodes }));
  if (o.only.has("cost") || o.only.has("memory")) {
    const largest = Math.max(...o.costNodes);
    const sizes = o.only.has("cost") ? o.costNodes : [largest];
    const atLargest = () => memory.push(memoryRow(`${largest}-node steady state, CCM running`));
    const cost = await benchApiCost({ sizes, periodSec: o.periodSec, windowSec: o.windowSec, atLargest });
    if (o.only.has("cost")) done(cost);
    if (o.only.has("memory")) done(memoryTable(memory, largest));
  }
  if (o.only.has("routes")) {
    const newLinodes = o.quick ? 2 : 10;
    const route = { latencyNodes: o.routeNodes, newLinodes, sizes: o.routeCostNodes, periodSec: o.periodSec };
    for (const t of await benchRoutes({ ...route, windowSec: o.windowSec })) done(t);
  }
  if (o.only.has("ipam")) done(await benchIpam({ nodes: o.ipamNodes }));
}

/** Runs the selected benchmarks, handing each table to `emit` as soon as it is ready. */
async function runBench(
  args: readonly string[],
  o: BenchOptions,
  emit: (table: Table) => void,
): Promise<Table[]> {
  const tables: Table[] = [];
  const done = (t: Table) => {
    tables.push(t);
    emit(t);
  };
  const docPath = o.resultsDir === DEFAULT_RESULTS_DIR && !o.quick ? MEASUREMENTS_PATH : undefined;
  if (o.fromResults) {
    if (!o.resultsDir) throw new RangeError("--from-results needs --results=DIR (or a full run's default)");
    done(reportTable((await rewriteResults(o.resultsDir, docPath)).report));
    return tables;
  }
  if (!o.only.has("ccm")) {
    await runInProcess(o, done);
    return tables;
  }
  const { report } = await benchWholeCcm({
    sizes: o.ccmNodes,
    churnSizes: o.churnNodes,
    churnFraction: 0.05,
    services: o.lbServices,
    windowSec: o.ccmWindowSec,
    latencyNodes: o.latencyNodes,
    samples: o.ccmSamples,
    takeoverSamples: o.takeoverSamples,
    leaseTiming: o.quick ? QUICK_LEASE : DEFAULT_LEASE,
    quick: o.quick,
    resultsDir: o.resultsDir,
    // A full run into bench/results also refreshes the table of docs/measurements.md.
    docPath,
  }, () => runInChild(args, o, done));
  done(reportTable(report));
  if (o.resultsDir) {
    print(`CCM process results written to ${o.resultsDir}${o.quick ? "" : " and docs/measurements.md"}\n`);
  }
  return tables;
}

function print(text: string): void {
  writeAll(Deno.stdout, text);
}

async function main(args: readonly string[]): Promise<number> {
  if (args.includes("--help")) {
    print(USAGE + "\n");
    return 0;
  }
  const o = parseBenchArgs(args);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => {
      writeAll(Deno.stderr, `bench: ${signal} received, stopping the CCM processes\n`);
      killCcmProcesses();
      Deno.exit(130);
    });
  }
  let ccmWarnings = 0;
  await setupLogging({
    format: "text",
    level: "warning",
    write: (line) => {
      ccmWarnings++;
      if (o.verbose) writeAll(Deno.stderr, line);
    },
  });
  const startedAt = new Date().toISOString();
  let tables: Table[];
  try {
    tables = await runBench(args, o, (t) => print(renderTable(t) + "\n"));
  } catch (e) {
    writeAll(Deno.stderr, `bench failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  print(`CCM log lines at warning or above: ${ccmWarnings}${o.verbose ? "" : " (--verbose prints them)"}\n`);
  if (o.jsonPath) {
    const results: BenchResults = {
      startedAt,
      deno: Deno.version.deno,
      options: { ...o, only: [...o.only] },
      tables,
      ccmWarnings,
    };
    await Deno.writeTextFile(o.jsonPath, JSON.stringify(results, null, 2) + "\n");
    print(`results written to ${o.jsonPath}\n`);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
