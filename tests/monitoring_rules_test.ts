/**
 * The shipped alert rules (deploy/monitoring-alerts.rules.yaml and the PrometheusRule generated from it)
 * checked by the real tool: `promtool check rules`, `promtool test rules` on tests/testdata/monitoring, and
 * against the code: every metric and label they name is one the CCM declares, every alert has a runbook
 * section in docs/operations.md and unit tests that fire it and keep it quiet.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import * as yaml from "js-yaml";
import { PROMETHEUS_RULE_FILE, prometheusRule, RULES_FILE } from "../deploy/prometheus_rule.ts";
import {
  declaredMetrics,
  exprProblems,
  JOB,
  promqlRefs,
  promtool,
  ROOT,
  skipWithout,
  templateLabels,
} from "./monitoring_fixture.ts";

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface UnitTest {
  name: string;
  alert_rule_test: { eval_time: string; alertname: string; exp_alerts: unknown[] }[];
}

const UNIT_TESTS = "tests/testdata/monitoring/alerts_test.yaml";
const RUNBOOKS = "docs/operations.md";
const SEVERITIES = new Set(["critical", "warning", "info"]);
const skipTools = skipWithout("promtool");

function read(path: string): string {
  return Deno.readTextFileSync(new URL(path, ROOT));
}

function alertRules(): AlertRule[] {
  const doc = yaml.load(read(RULES_FILE)) as { groups: { rules: AlertRule[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

/** The `### Name` sections of docs/operations.md's alert runbooks, by GitHub anchor, with their text. */
function runbookSections(): Map<string, string> {
  const doc = read(RUNBOOKS);
  const start = doc.indexOf("\n## Alerts\n");
  assert.ok(start >= 0, `${RUNBOOKS} has an Alerts section`);
  const end = doc.indexOf("\n## ", start + 1);
  const part = doc.slice(start, end < 0 ? undefined : end);
  const out = new Map<string, string>();
  for (const m of part.matchAll(/^### (\S+)\n([\s\S]*?)(?=^### |(?![\s\S]))/gm)) {
    out.set(m[1]!.toLowerCase(), m[2]!);
  }
  return out;
}

Deno.test({
  name: "promtool check rules accepts the rules file and the PrometheusRule's rules",
  ignore: skipTools,
  async fn() {
    const plain = await promtool(["check", "rules", RULES_FILE]);
    assert.equal(plain.code, 0, plain.output);
    assert.match(plain.output, new RegExp(`SUCCESS: ${alertRules().length} rules found`));
    const spec = (yaml.load(read(PROMETHEUS_RULE_FILE)) as { spec: unknown }).spec;
    const dir = await Deno.makeTempDir({ prefix: "ccm-rules-" });
    try {
      await Deno.writeTextFile(`${dir}/spec.yaml`, yaml.dump(spec));
      const operator = await promtool(["check", "rules", `${dir}/spec.yaml`]);
      assert.equal(operator.code, 0, operator.output);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("deploy/monitoring-alerts.yaml is the PrometheusRule of the rules file (deno task alerts)", () => {
  assert.equal(read(PROMETHEUS_RULE_FILE), prometheusRule(read(RULES_FILE)), "run: deno task alerts");
  const rule = yaml.load(read(PROMETHEUS_RULE_FILE)) as Record<string, unknown>;
  assert.deepEqual([rule.apiVersion, rule.kind], ["monitoring.coreos.com/v1", "PrometheusRule"]);
  assert.deepEqual(rule.spec, yaml.load(read(RULES_FILE)));
});

Deno.test({
  name: "promtool test rules: every alert's unit tests pass",
  ignore: skipTools,
  async fn() {
    const dir = fileURLToPath(new URL("tests/testdata/monitoring/", ROOT));
    const result = await promtool(["test", "rules", "alerts_test.yaml"], { cwd: dir });
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, /SUCCESS/);
  },
});

Deno.test("every alert has a unit test that fires it, one that keeps it quiet on a blip, and the healthy cluster's", () => {
  const tests = (yaml.load(read(UNIT_TESTS)) as { tests: UnitTest[] }).tests;
  const healthy: UnitTest["alert_rule_test"] =
    tests.find((t) => t.name === "healthy cluster")?.alert_rule_test ?? [];
  assert.ok(healthy.length > 0, "a healthy cluster test");
  for (const { alert } of alertRules()) {
    const quietWhenHealthy = healthy.filter((c) => c.alertname === alert);
    assert.ok(quietWhenHealthy.length > 0, `${alert}: evaluated on the healthy cluster`);
    assert.ok(
      quietWhenHealthy.every((c) => c.exp_alerts.length === 0),
      `${alert}: quiet on the healthy cluster`,
    );
    const own = tests.filter((t) => t.name.startsWith(`${alert}: `)).flatMap((t) =>
      t.alert_rule_test.filter((c) => c.alertname === alert).map((c) => ({
        test: t.name,
        fires: c.exp_alerts.length,
      }))
    );
    assert.ok(own.some((c) => c.fires > 0 && !c.test.includes("quiet")), `${alert}: a test that fires it`);
    const blip = own.filter((c) => c.test === `${alert}: quiet on a single blip`);
    assert.ok(blip.length > 0 && blip.every((c) => c.fires === 0), `${alert}: quiet on a single blip`);
  }
});

Deno.test("every alert has a severity, a summary, and a runbook_url to its section of docs/operations.md", () => {
  const sections = runbookSections();
  const alerts = alertRules();
  for (const rule of alerts) {
    assert.ok(
      SEVERITIES.has(rule.labels?.severity ?? ""),
      `${rule.alert}: severity ${rule.labels?.severity}`,
    );
    assert.ok((rule.annotations?.summary ?? "").length > 20, `${rule.alert}: a summary`);
    const url = rule.annotations?.runbook_url ?? "";
    const anchor = rule.alert.toLowerCase();
    assert.ok(url.endsWith(`/${RUNBOOKS}#${anchor}`), `${rule.alert}: runbook_url ${url}`);
    const section = sections.get(anchor);
    assert.ok(section, `${RUNBOOKS} has a section for ${rule.alert}`);
    assert.match(section, /\*\*What it means\.\*\*/, `${rule.alert}: what it means`);
    assert.match(section, /\*\*What to do\.\*\*/, `${rule.alert}: what to do`);
  }
  assert.deepEqual(
    [...sections.keys()].sort(),
    alerts.map((r) => r.alert.toLowerCase()).sort(),
    "no stale runbook",
  );
});

Deno.test("every rule names only metrics and labels the CCM declares, and selects the ServiceMonitor's job", async () => {
  const metrics = await declaredMetrics();
  for (const rule of alertRules()) {
    const labels = templateLabels(Object.values(rule.annotations ?? {}).join("\n"));
    assert.deepEqual(exprProblems(rule.expr, metrics, labels), [], rule.alert);
    for (const s of promqlRefs(rule.expr).selectors) {
      assert.match(
        rule.expr,
        new RegExp(`${s.name}\\{job="${JOB}"`),
        `${rule.alert}: ${s.name} selects the job`,
      );
    }
  }
  // The job: the Service label the ServiceMonitor's jobLabel names.
  const docs = yaml.loadAll(read("deploy/monitoring.yaml")) as {
    kind: string;
    metadata: { labels?: Record<string, string> };
    spec: { jobLabel?: string };
  }[];
  const monitor = docs.find((d) => d.kind === "ServiceMonitor");
  const service = docs.find((d) => d.kind === "Service");
  assert.equal(service?.metadata.labels?.[monitor?.spec.jobLabel ?? ""], JOB);
});

Deno.test("exprProblems() fails on a metric or label the CCM does not declare", async () => {
  const metrics = await declaredMetrics();
  assert.deepEqual(
    exprProblems('sum by (controller) (rate(ccm_reconciles_total{result="error"}[5m]))', metrics),
    [],
  );
  assert.deepEqual(exprProblems("rate(ccm_reconcile_total[5m])", metrics), [
    "ccm_reconcile_total is not a metric the CCM exports",
  ]);
  assert.deepEqual(exprProblems("sum by (route) (rate(ccm_linode_client_requests_total[5m]))", metrics), [
    "no series of the expression carries the label route",
  ]);
  assert.deepEqual(exprProblems('ccm_informer_healthy{resources="nodes"}', metrics), [
    "ccm_informer_healthy has no label resources",
  ]);
  assert.deepEqual(
    exprProblems(
      "histogram_quantile(0.9, sum by (le) (rate(ccm_reconcile_duration_seconds_bucket[5m])))",
      metrics,
    ),
    [],
  );
});
