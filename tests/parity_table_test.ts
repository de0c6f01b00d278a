/** docs/migration.md's parity table against the tables the program is built from. */
import assert from "node:assert/strict";
import * as yaml from "js-yaml";
import { FLAGS } from "../config/flag_table.ts";
import { ENV_VARS } from "../config/env.ts";
import { annotationKey, ANNOTATIONS } from "../controllers/service/annotations/table.ts";
import { GO_CLIENT_METRIC } from "../linode/caller.ts";
import { declaredMetrics } from "./monitoring_fixture.ts";

const DOC = Deno.readTextFileSync(new URL("../docs/migration.md", import.meta.url));
const STATUSES = new Set(["same", "differs", "not implemented", "ours"]);

/** The rows of every table under `## Parity table`: names (the code spans of the first cell), status, note. */
function parityRows(): { names: string[]; status: string; note: string }[] {
  const start = DOC.indexOf("\n## Parity table\n");
  assert.ok(start >= 0, "docs/migration.md has a Parity table section");
  const end = DOC.indexOf("\n## ", start + 1);
  const section = DOC.slice(start, end < 0 ? undefined : end);
  return section.split("\n").filter((l) => l.startsWith("| `")).map((line) => {
    const [first = "", status = "", note = ""] = line.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim());
    return { names: [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ""), status, note };
  });
}

const ROWS = parityRows();
const NAMES = new Set(ROWS.flatMap((r) => r.names));

function missing(names: readonly string[]): string[] {
  return names.filter((n) => !NAMES.has(n));
}

Deno.test("the parity table has a row for every flag of the flag table", () => {
  assert.deepEqual(missing(FLAGS.map((f) => `--${f.name}`)), []);
});

Deno.test("the parity table has a row for every environment variable read", () => {
  assert.deepEqual(missing(ENV_VARS.map((v) => v.name)), []);
});

Deno.test("the parity table has a row for every Service annotation of the annotation table", () => {
  assert.deepEqual(missing(ANNOTATIONS.map((a) => annotationKey(a.name))), []);
});

Deno.test("the parity table names the Go CCM's metric and Event names operators alert on", () => {
  assert.deepEqual(missing([GO_CLIENT_METRIC, "NodeBalancerIPChangeIgnored", "SyncLoadBalancerFailed"]), []);
});

Deno.test("the parity table has a row for every metric the CCM declares, and for the monitoring files", async () => {
  assert.deepEqual(missing([...(await declaredMetrics()).keys()]), []);
  const files = [
    "deploy/monitoring-alerts.yaml",
    "deploy/monitoring-alerts.rules.yaml",
    "deploy/monitoring-dashboard.json",
  ];
  assert.deepEqual(missing(files), []);
  assert.equal(ROWS.find((r) => r.names.includes(files[0]!))?.status, "ours", "the Go CCM ships none");
});

Deno.test("every parity row has a known status, and every difference says how", () => {
  for (const row of ROWS) {
    assert.ok(STATUSES.has(row.status), `${row.names.join(", ")}: status "${row.status}"`);
    if (row.status !== "same") {
      assert.notEqual(row.note, "", `${row.names.join(", ")}: ${row.status} without a note`);
    }
  }
});

/** The permissions of the ClusterRoles and Roles in a manifest, as `resource[.group][/subresource]`. */
function permissionNames(url: URL): string[] {
  const docs = yaml.loadAll(Deno.readTextFileSync(url)) as { kind?: string; rules?: unknown }[];
  const rules = docs.filter((d) => d?.kind === "ClusterRole" || d?.kind === "Role")
    .flatMap((d) =>
      (Array.isArray(d.rules) ? d.rules : []) as { apiGroups?: string[]; resources?: string[] }[]
    );
  return [
    ...new Set(rules.flatMap((r) =>
      (r.apiGroups ?? []).flatMap((g) =>
        (r.resources ?? []).map((res) => {
          const [resource = "", sub] = res.split("/");
          const base = g ? `${resource}.${g}` : resource;
          return sub ? `${base}/${sub}` : base;
        })
      )
    )),
  ];
}

Deno.test("the parity table's RBAC rows cover the Go chart's ClusterRole and deploy/ccm.yaml, each backed by a file", () => {
  const chart = permissionNames(new URL("./testdata/go_ccm_chart_rbac.yaml", import.meta.url));
  const ours = permissionNames(new URL("../deploy/ccm.yaml", import.meta.url));
  assert.deepEqual(missing([...chart, ...ours]), []);
  const start = DOC.indexOf("\n### RBAC\n");
  const section = DOC.slice(start, DOC.indexOf("\n## ", start));
  const rows = section.split("\n").filter((l) => l.startsWith("| `"));
  assert.ok(rows.length >= chart.length);
  for (const row of rows) {
    assert.match(row, /`(tests|kube|controllers|lease|deploy|bench)\/[\w/.-]+\.(ts|yaml)`/);
  }
});
