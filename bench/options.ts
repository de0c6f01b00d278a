/** Command line of `deno task bench`: sizes, `--quick`, `--json`, scenario selection. */

/** The benchmarks, in the order they run (`ccm` runs the others while its windows run). */
export type Scenario = "capacity" | "init" | "cost" | "memory" | "routes" | "ipam" | "ccm";

/** Every benchmark setting, defaults filled in. */
export interface BenchOptions {
  /** Which benchmarks run (`--only=capacity,cost`); memory needs cost (it samples the largest cluster). */
  only: ReadonlySet<Scenario>;
  /** Emulator capacity: Linodes and Nodes (`--nodes`). */
  nodes: number;
  /** Emulator capacity: Services (`--services`). */
  services: number;
  /** Emulator capacity: Node updates through the watch (`--updates`). */
  updates: number;
  /** Repetitions of start-ups and listings (`--runs`). */
  runs: number;
  /** Initialisation latency: Nodes per warm case (`--init-nodes`). */
  initNodes: number;
  /** Initialisation latency: Nodes per new-Linode case (`--new-nodes`; each can wait seconds). */
  newNodes: number;
  /** API cost: cluster sizes (`--cost-nodes=6,100,1000`). */
  costNodes: readonly number[];
  /** API cost: shortened status period and cache TTLs, whole seconds (`--period`). */
  periodSec: number;
  /** API cost: steady-state window per size and mode, seconds (`--window`). */
  windowSec: number;
  /** Routes: Nodes per latency case (`--route-nodes`). */
  routeNodes: number;
  /** Routes: whole-CCM cost sizes (`--route-cost-nodes=100,1000`). */
  routeCostNodes: readonly number[];
  /** Node IPAM: Nodes per latency case (`--ipam-nodes`). */
  ipamNodes: number;
  /** CCM process: steady cluster sizes (`--ccm-nodes=10,100,1000,5000,10000`). */
  ccmNodes: readonly number[];
  /** CCM process: churn cluster sizes (`--churn-nodes=10,100,1000`). */
  churnNodes: readonly number[];
  /** CCM process: LoadBalancer Services per cluster (`--lb-services`). */
  lbServices: number;
  /** CCM process: steady window per cluster at default settings, seconds (`--ccm-window`). */
  ccmWindowSec: number;
  /** CCM process: Nodes of the latency cluster (`--latency-nodes`). */
  latencyNodes: number;
  /** CCM process: events per latency kind (`--ccm-samples`). */
  ccmSamples: number;
  /** CCM process: takeovers per signal (`--takeover-samples`). */
  takeoverSamples: number;
  /** CCM process: where the table, JSON and plot go (`--results=DIR`; default bench/results, none with --quick). */
  resultsDir: string | null;
  /** Small sizes and short timings (`--quick`). */
  quick: boolean;
  /** Rebuild the CCM table, plot and docs/measurements.md block from `<results>/ccm.json` without measuring (`--from-results`). */
  fromResults: boolean;
  /** Write the results as JSON to this path (`--json` = `bench/results.json`, or `--json=PATH`). */
  jsonPath: string | null;
  /** Print the CCM's warning lines on stderr (`--verbose`); otherwise they are only counted. */
  verbose: boolean;
}

/** Default `--results` folder of a full run. */
export const DEFAULT_RESULTS_DIR = new URL("./results", import.meta.url).pathname;

/** Default `--json` path. */
export const DEFAULT_JSON_PATH = new URL("./results.json", import.meta.url).pathname;

const SCENARIOS: readonly Scenario[] = ["capacity", "init", "cost", "memory", "routes", "ipam", "ccm"];

const FULL: Omit<BenchOptions, "only" | "jsonPath" | "verbose" | "resultsDir" | "quick" | "fromResults"> = {
  nodes: 5000,
  services: 1000,
  updates: 1000,
  runs: 5,
  initNodes: 50,
  newNodes: 5,
  costNodes: [6, 100, 1000],
  periodSec: 1,
  windowSec: 10,
  routeNodes: 50,
  routeCostNodes: [100, 1000],
  ipamNodes: 50,
  ccmNodes: [10, 100, 1000, 5000, 10000],
  churnNodes: [10, 100, 1000],
  lbServices: 50,
  // Twice the 5 min node status period: every periodic refresh falls in the window at least twice.
  ccmWindowSec: 600,
  latencyNodes: 100,
  ccmSamples: 20,
  takeoverSamples: 5,
};

const QUICK: typeof FULL = {
  nodes: 500,
  services: 100,
  updates: 100,
  runs: 2,
  initNodes: 5,
  newNodes: 1,
  costNodes: [6],
  periodSec: 1,
  windowSec: 1,
  routeNodes: 5,
  routeCostNodes: [20],
  ipamNodes: 5,
  ccmNodes: [10],
  churnNodes: [100],
  lbServices: 5,
  ccmWindowSec: 15,
  latencyNodes: 10,
  ccmSamples: 3,
  takeoverSamples: 1,
};

const NUMBER_FLAGS = {
  nodes: "nodes",
  services: "services",
  updates: "updates",
  runs: "runs",
  "init-nodes": "initNodes",
  "new-nodes": "newNodes",
  period: "periodSec",
  window: "windowSec",
  "route-nodes": "routeNodes",
  "ipam-nodes": "ipamNodes",
  "lb-services": "lbServices",
  "ccm-window": "ccmWindowSec",
  "latency-nodes": "latencyNodes",
  "ccm-samples": "ccmSamples",
  "takeover-samples": "takeoverSamples",
} as const;

const LIST_FLAGS = {
  "cost-nodes": "costNodes",
  "route-cost-nodes": "routeCostNodes",
  "ccm-nodes": "ccmNodes",
  "churn-nodes": "churnNodes",
} as const;

/** Usage text for `--help`. */
export const USAGE = `deno task bench [--quick] [--json[=PATH]] [--results=DIR] [--from-results] [--verbose]
  [--only=capacity,init,cost,memory,routes,ipam,ccm]
  [--nodes=5000] [--services=1000] [--updates=1000] [--runs=5] [--init-nodes=50] [--new-nodes=5]
  [--cost-nodes=6,100,1000] [--period=1] [--window=10] [--route-nodes=50] [--route-cost-nodes=100,1000]
  [--ipam-nodes=50]
  [--ccm-nodes=10,100,1000,5000,10000] [--churn-nodes=10,100,1000] [--lb-services=50] [--ccm-window=600]
  [--latency-nodes=100] [--ccm-samples=20] [--takeover-samples=5]`;

function positiveInt(name: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1) {
    throw new RangeError(`--${name}: "${text}" is not a whole number above 0`);
  }
  return n;
}

function parseOnly(text: string): Set<Scenario> {
  const names = text.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = names.filter((n) => !(SCENARIOS as readonly string[]).includes(n));
  if (bad.length) {
    throw new RangeError(`--only: unknown benchmark ${bad.join(", ")} (use ${SCENARIOS.join(", ")})`);
  }
  return new Set(names as Scenario[]);
}

/** Parses `--name=value` and `--flag` arguments; `--quick` picks small defaults. Throws RangeError. */
export function parseBenchArgs(args: readonly string[]): BenchOptions {
  const given = new Map<string, string | true>();
  for (const arg of args) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m?.[1]) throw new RangeError(`Unknown argument "${arg}"\n${USAGE}`);
    given.set(m[1], m[2] ?? true);
  }
  const quick = given.has("quick");
  const o: BenchOptions = {
    ...(quick ? QUICK : FULL),
    only: new Set(SCENARIOS),
    jsonPath: null,
    verbose: false,
    resultsDir: quick ? null : DEFAULT_RESULTS_DIR,
    quick,
    fromResults: false,
  };
  for (const [name, value] of given) {
    if (name === "quick") continue;
    if (name === "from-results") o.fromResults = true;
    else if (name === "verbose") o.verbose = true;
    else if (name === "json") o.jsonPath = value === true ? DEFAULT_JSON_PATH : value;
    else if (value === true) throw new RangeError(`--${name}: needs a value\n${USAGE}`);
    else if (name === "only") o.only = parseOnly(value);
    else if (name === "results") o.resultsDir = value;
    else if (name in LIST_FLAGS) {
      o[LIST_FLAGS[name as keyof typeof LIST_FLAGS]] = value.split(",").map((v) =>
        positiveInt(name, v.trim())
      );
    } else if (name in NUMBER_FLAGS) {
      o[NUMBER_FLAGS[name as keyof typeof NUMBER_FLAGS]] = positiveInt(name, value);
    } else throw new RangeError(`Unknown flag --${name}\n${USAGE}`);
  }
  return o;
}
