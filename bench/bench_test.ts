import assert from "node:assert/strict";
import { join } from "node:path";
import type { BenchResults } from "./main.ts";
import { goCcmCallsPerHour } from "./api_cost.ts";
import type { CcmReport, CcmResults } from "./ccm_results.ts";
import { DEFAULT_JSON_PATH, DEFAULT_RESULTS_DIR, parseBenchArgs } from "./options.ts";
import { quantile, renderTable } from "./table.ts";

const MAIN = new URL("./main.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

/** Checks the counts of the CCM-process results (never their timings). */
async function assertCcmResults(dir: string): Promise<void> {
  const saved = JSON.parse(await Deno.readTextFile(join(dir, "ccm.json"))) as CcmResults & {
    report: CcmReport;
  };
  assert.deepEqual(saved.steady.map((s) => s.nodes), [10]);
  assert.deepEqual(saved.churn.map((c) => c.nodes), [100]);
  // 100 Nodes at 5 %/min over 15 s: one replacement, 12 s in.
  assert.equal(saved.churn[0]?.window.replaced, 1);
  const l = saved.latency;
  for (const samples of [l.initMs, l.routeMs, l.nbReadyMs, l.joinInEveryNbMs, l.leaveFromEveryNbMs]) {
    assert.equal(samples.length, 3);
  }
  assert.deepEqual([saved.takeover.sigkillMs.length, saved.takeover.sigtermMs.length], [1, 1]);
  // Our CCM makes no call for unchanged Services, and a join costs at least its route write.
  assert.equal(saved.steady[0]?.window.serviceCallsPerServiceMin, 0);
  assert.ok(l.callsPerJoin >= 1);
  // Each new Service is created in one call with its configs and nodes (its breakdown is kept by route).
  assert.equal(l.callsPerServiceByRoute["POST /v4/nodebalancers"], 1);
  assert.equal(saved.report.rows.length, 20);
  assert.ok(saved.report.rows.every((r) => r.go !== ""), "every row has a Go CCM cell");
  const md = await Deno.readTextFile(join(dir, "ccm.md"));
  assert.match(md, /^\| what +\| +N \| ours \(measured\) +\| Go CCM \(model\) +\| target +\| result \|$/m);
  const svg = await Deno.readTextFile(join(dir, "calls_per_minute.svg"));
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.equal(svg.match(/<polyline /g)?.length, 4);
}

Deno.test("bench/main.ts --quick prints every table with its expected rows and writes JSON", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bench_test_" });
  try {
    const json = join(dir, "results.json");
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-P=dev", "--config", CONFIG, MAIN, "--quick", `--json=${json}`, `--results=${dir}`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    for (
      const title of [
        "Emulator capacity",
        "Node initialisation latency",
        "Linode API cost in steady state",
        "Memory (Deno.memoryUsage()",
        "Route latency",
        "Whole-CCM Linode API cost in steady state with the route controller",
        "Node IPAM latency",
        "Whole CCM process vs the Go CCM (default settings)",
      ]
    ) assert.ok(text.includes(title), `missing table "${title}"`);
    for (
      const rowStart of [
        /^new process: boot \+ start linode emulator +1 /m,
        /^start Kubernetes emulator \(HTTPS, new CA\) /m,
        /^create Nodes \(kube store\) +500 /m,
        /^create Services \(kube store\) +100 /m,
        /^listNode \(client-node\) +500 +2 /m,
        /^listInstances \(LinodeClient, 500\/page\) +500 +2 .* 1$/m,
        /^watch fan-out: per-update delay +100 +100 /m,
        /^warm cache, one at a time +5 .* 0 +0$/m,
        /^warm cache, burst +5 .* 0 +0$/m,
        /^new Linode, one at a time +1 /m,
        /^new Linode, burst +1 /m,
        /^new Linode, back to back +1 /m,
        /^ +6 +no .* 12 +\S/m,
        /^ +6 +yes .* 1,440 +\S/m,
        /^6-node steady state, CCM running +\d+/m,
        /^one at a time +5 .* 5 +0 +5$/m,
        /^burst +5 .* 5 +0 +5$/m,
        /^ +20 +\S+ +\S+ +0 +0 +0\.6 +\S/m,
        /^new Linode \+ its Node +2 .* 0 full \/ 4 targeted +p95 <= 2000 ms: met$/m,
      ]
    ) assert.match(text, rowStart);
    assert.ok(text.includes("(MODEL)"), "the Go CCM column is labelled a model");
    const results = JSON.parse(await Deno.readTextFile(json)) as BenchResults;
    assert.deepEqual(results.tables.map((t) => t.rows.length), [13, 5, 2, 2, 3, 1, 3, 20]);
    assert.ok(results.tables[2]?.columns.includes("Go CCM calls/h (MODEL)"));
    assert.deepEqual(results.options.costNodes, [6]);
    await assertCcmResults(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const ARG_CASES: { name: string; args: string[]; want: Record<string, unknown> }[] = [
  { name: "defaults to the issue's sizes", args: [], want: { nodes: 5000, services: 1000, jsonPath: null } },
  {
    name: "--quick picks small sizes",
    args: ["--quick"],
    want: { nodes: 500, costNodes: [6], windowSec: 1 },
  },
  { name: "--json alone writes bench/results.json", args: ["--json"], want: { jsonPath: DEFAULT_JSON_PATH } },
  { name: "--json=PATH writes there", args: ["--json=/tmp/x.json"], want: { jsonPath: "/tmp/x.json" } },
  {
    name: "sizes override --quick",
    args: ["--quick", "--nodes=1000", "--cost-nodes=6,100,1000"],
    want: { nodes: 1000, costNodes: [6, 100, 1000] },
  },
  {
    name: "--quick writes no CCM results unless --results is given",
    args: ["--quick"],
    want: { resultsDir: null, ccmNodes: [10], ccmWindowSec: 15, quick: true },
  },
  {
    name: "a full run writes the CCM results to bench/results, at the issue's sizes",
    args: [],
    want: {
      resultsDir: DEFAULT_RESULTS_DIR,
      ccmNodes: [10, 100, 1000, 5000, 10000],
      ccmWindowSec: 600,
      quick: false,
    },
  },
  {
    name: "--ccm-nodes, --churn-nodes and --results size and place the CCM benchmarks",
    args: ["--quick", "--ccm-nodes=10,100", "--churn-nodes=1000", "--results=/tmp/r", "--ccm-window=60"],
    want: { ccmNodes: [10, 100], churnNodes: [1000], resultsDir: "/tmp/r", ccmWindowSec: 60 },
  },
  {
    name: "--from-results rebuilds the CCM table without measuring",
    args: ["--from-results"],
    want: { fromResults: true, resultsDir: DEFAULT_RESULTS_DIR },
  },
  {
    name: "--route-nodes and --route-cost-nodes size the route benchmarks",
    args: ["--route-nodes=7", "--route-cost-nodes=100,1000"],
    want: { routeNodes: 7, routeCostNodes: [100, 1000] },
  },
];

for (const c of ARG_CASES) {
  Deno.test(`parseBenchArgs() ${c.name}`, () => {
    const o = parseBenchArgs(c.args);
    for (const [key, value] of Object.entries(c.want)) assert.deepEqual(o[key as keyof typeof o], value, key);
  });
}

for (
  const bad of [
    "--nodes=0",
    "--nodes=abc",
    "--bogus=1",
    "nodes",
    "--only=speed",
    "--runs",
    "--ccm-nodes=10,x",
  ]
) {
  Deno.test(`parseBenchArgs() rejects ${bad}`, () => assert.throws(() => parseBenchArgs([bad]), RangeError));
}

Deno.test("parseBenchArgs() --only selects benchmarks", () => {
  assert.deepEqual([...parseBenchArgs(["--only=cost,memory"]).only], ["cost", "memory"]);
});

Deno.test("quantile() uses nearest rank", () => {
  const values = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.deepEqual([quantile(values, 0.5), quantile(values, 0.95), quantile(values, 1)], [50, 95, 100]);
  assert.ok(Number.isNaN(quantile([], 0.5)));
});

Deno.test("renderTable() aligns columns, right-aligns numbers and prints notes", () => {
  const text = renderTable({
    title: "T",
    columns: ["name", "ms"],
    rows: [["a", 1234.5], ["long name", 0.12345]],
    notes: ["n"],
  });
  assert.equal(text, "T\n\nname          ms\n---------  -----\na          1,235\nlong name  0.123\n  * n\n");
});

Deno.test("goCcmCallsPerHour() matches the reference's 8 calls per 20 s on 6 VPC nodes", () => {
  assert.equal(goCcmCallsPerHour(6, true), 180 * 8);
  assert.equal(goCcmCallsPerHour(1000, true), 180 * (2 + 1 + 1000));
  assert.equal(goCcmCallsPerHour(1000, false), 12 * 2);
});
