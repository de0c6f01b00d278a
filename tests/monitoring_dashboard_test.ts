/**
 * deploy/monitoring-dashboard.json, without a Grafana to load it: a current dashboard schema laid out on the
 * grid, every query parsed by promtool and naming only metrics and labels the CCM declares (read from the
 * code), and the panels an operator needs (leader, Linode calls under the Go CCM's metric name, rate-limit
 * headroom, reconciles, queues, caches, memory and CPU).
 */
import assert from "node:assert/strict";
import { GO_CLIENT_METRIC } from "../linode/caller.ts";
import {
  checkPromql,
  declaredMetrics,
  exprProblems,
  JOB,
  legendLabels,
  promqlRefs,
  ROOT,
  skipWithout,
  TARGET_LABELS,
} from "./monitoring_fixture.ts";

interface Target {
  refId: string;
  expr: string;
  legendFormat?: string;
  datasource?: { type: string; uid: string };
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}

interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  current?: { value?: string };
}

interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
}

const DASHBOARD = JSON.parse(
  Deno.readTextFileSync(new URL("deploy/monitoring-dashboard.json", ROOT)),
) as Dashboard;
const DATASOURCE = { type: "prometheus", uid: "${datasource}" };

/** Every query of the dashboard, with the panel it belongs to. */
function queries(): { panel: string; target: Target }[] {
  return DASHBOARD.panels.flatMap((p) => (p.targets ?? []).map((target) => ({ panel: p.title, target })));
}

/** A query as Prometheus would receive it from Grafana: variables replaced by values of their kind. */
function expand(expr: string): string {
  return expr.replaceAll("$__rate_interval", "2m").replaceAll("$job", JOB).replaceAll("$instance", ".*");
}

Deno.test("the dashboard is a current Grafana schema, laid out on the 24-column grid", () => {
  assert.ok(
    DASHBOARD.schemaVersion >= 39 && DASHBOARD.schemaVersion <= 41,
    `schema ${DASHBOARD.schemaVersion}`,
  );
  assert.equal(DASHBOARD.uid, "linode-ccm");
  assert.ok(DASHBOARD.title);
  const ids = DASHBOARD.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length, "panel ids are unique");
  const cells = new Set<string>();
  for (const p of DASHBOARD.panels) {
    const { x, y, w, h } = p.gridPos;
    assert.ok(w > 0 && h > 0 && x >= 0 && x + w <= 24, `${p.title}: gridPos ${JSON.stringify(p.gridPos)}`);
    for (let i = x; i < x + w; i++) {
      for (let j = y; j < y + h; j++) {
        assert.ok(!cells.has(`${i},${j}`), `${p.title} overlaps another panel at ${i},${j}`);
        cells.add(`${i},${j}`);
      }
    }
    if (p.type === "row") continue;
    assert.deepEqual(p.datasource, DATASOURCE, `${p.title}: the data source variable`);
    assert.ok((p.targets ?? []).length > 0, `${p.title}: a query`);
    const refIds = (p.targets ?? []).map((t) => t.refId);
    assert.equal(new Set(refIds).size, refIds.length, `${p.title}: refIds are unique`);
  }
  const variables = new Map(DASHBOARD.templating.list.map((v) => [v.name, v]));
  assert.deepEqual([variables.get("datasource")?.type, variables.get("datasource")?.query], [
    "datasource",
    "prometheus",
  ]);
  assert.equal(variables.get("job")?.current?.value, JOB, "the job defaults to the ServiceMonitor's");
});

Deno.test({
  name: "every dashboard query parses as PromQL (promtool)",
  ignore: skipWithout("promtool"),
  async fn() {
    const exprs = queries().map((q) => expand(q.target.expr));
    const result = await checkPromql(exprs);
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, new RegExp(`SUCCESS: ${exprs.length} rules found`));
  },
});

Deno.test("every dashboard query and variable names only metrics the CCM declares, by labels they carry", async () => {
  const metrics = await declaredMetrics();
  for (const { panel, target } of queries()) {
    const problems = exprProblems(expand(target.expr), metrics, legendLabels(target.legendFormat ?? ""));
    assert.deepEqual(problems, [], `${panel} ${target.refId}: ${target.expr}`);
    assert.match(
      target.expr,
      /\{job=~"\$job",instance=~"\$instance"/,
      `${panel}: selects $job and $instance`,
    );
  }
  for (const v of DASHBOARD.templating.list.filter((v) => v.type === "query")) {
    const text = typeof v.query === "string" ? v.query : v.query.query;
    const m = /^label_values\((.+), (\w+)\)$/.exec(text);
    assert.ok(m, `${v.name}: label_values(metric, label)`);
    assert.deepEqual(exprProblems(expand(m[1]!), metrics), [], v.name);
    assert.ok(TARGET_LABELS.includes(m[2]!), `${v.name}: ${m[2]} is a target label`);
  }
});

Deno.test("the dashboard has what an operator needs, Linode calls under the Go CCM's metric name included", () => {
  const used = new Map<string, string[]>();
  for (const { panel, target } of queries()) {
    for (const s of promqlRefs(target.expr).selectors) used.set(s.name, [...(used.get(s.name) ?? []), panel]);
  }
  for (
    const name of [
      "ccm_leader_is_leader",
      GO_CLIENT_METRIC,
      "ccm_linode_requests_total",
      "ccm_linode_ratelimit_remaining",
      "ccm_reconciles_total",
      "ccm_reconcile_duration_seconds_bucket",
      "ccm_workqueue_depth",
      "ccm_cache_age_seconds",
      "process_resident_memory_bytes",
      "process_cpu_seconds_total",
    ]
  ) {
    assert.ok(used.has(name), `a panel shows ${name}`);
  }
  const goCalls = queries().find((q) => q.target.expr.includes(GO_CLIENT_METRIC));
  assert.deepEqual(
    promqlRefs(goCalls?.target.expr ?? "").grouping,
    ["method", "result"],
    "by route and result",
  );
});
