/**
 * The whole CCM as a process (`deno task bench --only=ccm`), in three phases so that one steady-state window
 * long enough for every periodic refresh fits the time budget:
 * 1. each steady cluster, then each churn cluster, is set up and converged one after another (so each start-up
 *    is timed on its own), and its measurement window starts as soon as it is converged;
 * 2. while the windows run, the latency events, the leader takeovers and `alongside` (the in-process
 *    benchmarks) run in the foreground;
 * 3. every window is collected and its cluster checked, the table is built and written with the plot.
 */
import { join } from "node:path";
import type { LeaseTiming } from "../tests/process.ts";
import { measureChurn } from "./ccm_churn.ts";
import { benchCcmLatency } from "./ccm_latency.ts";
import { plotCallsPerMinute } from "./ccm_plot.ts";
import { buildCcmReport, renderReportMarkdown } from "./ccm_report.ts";
import type { CcmReport, CcmResults, SteadyRun } from "./ccm_results.ts";
import { type Cluster, measureWindow, startCluster, waitConverged } from "./ccm_steady.ts";
import { measureImportFloor } from "./import_floor.ts";
import { benchTakeover } from "./ccm_takeover.ts";

/** Settings of the CCM-process benchmarks. */
export interface CcmBenchOptions {
  /** Steady clusters' sizes. */
  sizes: readonly number[];
  /** Churn clusters' sizes. */
  churnSizes: readonly number[];
  /** Fraction of the Nodes replaced per minute under churn. */
  churnFraction: number;
  /** LoadBalancer Services per cluster. */
  services: number;
  /** Measurement window per cluster, seconds. */
  windowSec: number;
  /** Nodes of the latency cluster, and events of each kind. */
  latencyNodes: number;
  samples: number;
  takeoverSamples: number;
  leaseTiming: LeaseTiming;
  quick: boolean;
  /** Folder for `ccm.json`, `ccm.md` and `calls_per_minute.svg`; null writes nothing. */
  resultsDir: string | null;
  /** A page whose block between the `bench:ccm` markers gets the table (a full run's docs/measurements.md). */
  docPath?: string;
}

/** The project's configuration: its `fmt` settings apply to results written anywhere. */
const CONFIG_PATH = new URL("../deno.json", import.meta.url).pathname;

/** Start of the block of docs/measurements.md the table goes into. */
export const DOC_START = "<!-- bench:ccm:start (written by deno task bench) -->";
/** End of that block. */
export const DOC_END = "<!-- bench:ccm:end -->";

/** Replaces the text between the markers of `page` with `md`; throws when the markers are missing. */
export function replaceDocBlock(page: string, md: string): string {
  const start = page.indexOf(DOC_START);
  const end = page.indexOf(DOC_END);
  if (start < 0 || end < start) throw new RangeError(`the page has no ${DOC_START} ... ${DOC_END} block`);
  return page.slice(0, start + DOC_START.length) + "\n\n" + md.trimEnd() + "\n\n" + page.slice(end);
}

/** What `benchWholeCcm` produced. */
export interface CcmBenchOutput {
  readonly results: CcmResults;
  readonly report: CcmReport;
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Holds a promise's outcome so a rejection before it is awaited is not unhandled. */
function settle<T>(p: Promise<T>): Promise<Settled<T>> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function unwrap<T>(s: Settled<T>): T {
  if (!s.ok) throw s.error;
  return s.value;
}

async function steadyRun(cluster: Cluster, nodes: number, windowSec: number): Promise<SteadyRun> {
  const window = await measureWindow(cluster, windowSec);
  // The window must not have broken anything: every Node and NodeBalancer still as it was.
  await waitConverged(cluster.world, cluster.ccm, 30_000);
  const { readyMs, nodesDoneMs, servicesDoneMs, startPeakRssMiB } = cluster;
  return { nodes, readyMs, nodesDoneMs, servicesDoneMs, startPeakRssMiB, window };
}

/** `deno fmt` on the written files, so the committed results and docs pass `deno fmt --check`. */
async function format(paths: readonly string[]): Promise<void> {
  const args = ["fmt", "--quiet", "--config", CONFIG_PATH, ...paths];
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "null" }).output();
  if (!out.success) {
    throw new Error(`deno fmt failed on ${paths.join(", ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

async function writeResults(dir: string, output: CcmBenchOutput, docPath?: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const json = { ...output.results, report: output.report };
  const md = join(dir, "ccm.md");
  const svg = join(dir, "calls_per_minute.svg");
  await Deno.writeTextFile(join(dir, "ccm.json"), JSON.stringify(json, null, 2) + "\n");
  await Deno.writeTextFile(md, renderReportMarkdown(output.report));
  await Deno.writeTextFile(svg, plotCallsPerMinute(output.results));
  await format([md, svg]);
  if (docPath) {
    const page = await Deno.readTextFile(docPath);
    await Deno.writeTextFile(docPath, replaceDocBlock(page, await Deno.readTextFile(md)));
    await format([docPath]);
  }
}

/**
 * Rebuilds the table, Markdown, plot (and docs block) from the measurements saved in `dir/ccm.json`, for
 * when the Go CCM's model or the report changed but the measurements did not (`--from-results`).
 */
export async function rewriteResults(dir: string, docPath?: string): Promise<CcmBenchOutput> {
  const saved = JSON.parse(await Deno.readTextFile(join(dir, "ccm.json"))) as CcmResults & {
    report?: unknown;
  };
  const { report: _old, ...results } = saved;
  const output = { results, report: buildCcmReport(results) };
  await writeResults(dir, output, docPath);
  return output;
}

/** Runs the three phases; `alongside` runs in phase 2. Throws (after cleaning up) when a count is wrong. */
export async function benchWholeCcm(
  o: CcmBenchOptions,
  alongside: () => Promise<void>,
): Promise<CcmBenchOutput> {
  const startedAt = new Date().toISOString();
  const clusters: Cluster[] = [];
  // Measured first, while nothing else runs on the machine.
  const importFloor = await measureImportFloor();
  try {
    const steady: Promise<Settled<SteadyRun>>[] = [];
    for (const n of o.sizes) {
      const cluster = await startCluster(n, o.services, `ccm-${n}`);
      clusters.push(cluster);
      steady.push(settle(steadyRun(cluster, n, o.windowSec)));
    }
    const churn: Promise<Settled<CcmResults["churn"][number]>>[] = [];
    for (const n of o.churnSizes) {
      const cluster = await startCluster(n, o.services, `ccm-churn-${n}`);
      clusters.push(cluster);
      churn.push(
        settle(measureChurn(cluster, o.windowSec, o.churnFraction).then((window) => ({ nodes: n, window }))),
      );
    }
    const latency = await benchCcmLatency({
      nodes: o.latencyNodes,
      services: o.services,
      samples: o.samples,
    });
    const takeover = await benchTakeover({ samples: o.takeoverSamples, timing: o.leaseTiming });
    await alongside();
    const results: CcmResults = {
      startedAt,
      deno: Deno.version.deno,
      quick: o.quick,
      services: o.services,
      churnFraction: o.churnFraction,
      steady: (await Promise.all(steady)).map(unwrap),
      churn: (await Promise.all(churn)).map(unwrap),
      latency,
      takeover,
      importFloor,
    };
    const output = { results, report: buildCcmReport(results) };
    if (o.resultsDir) await writeResults(o.resultsDir, output, o.docPath);
    return output;
  } finally {
    for (const c of clusters) await c[Symbol.asyncDispose]();
  }
}
