import assert from "node:assert/strict";
import type { WindowResult } from "./ccm_steady.ts";
import { buildCcmReport, renderReportMarkdown } from "./ccm_report.ts";
import type { CcmResults, ReportRow } from "./ccm_results.ts";
import { DEFAULT_LEASE } from "./ccm_takeover.ts";

function window(callsPerMin: number, rssMaxMiB = 150, serviceCalls = 0): WindowResult {
  return {
    windowSec: 600,
    calls: callsPerMin * 10,
    callsPerMin,
    serviceCallsPerServiceMin: serviceCalls,
    byRoute: {},
    cpuSec: 1,
    cpuSecPerHour: 6,
    rssMiB: rssMaxMiB - 1,
    rssMaxMiB,
    heapUsedMiB: 40,
    heapTotalMiB: 60,
  };
}

function results(o: { at100: number; at5000: number; rss5000: number; route: number[]; sigterm: number[] }) {
  const steady = (nodes: number, w: WindowResult) => ({
    nodes,
    readyMs: 900,
    nodesDoneMs: 2000,
    servicesDoneMs: 3000,
    window: w,
  });
  const samples = [10, 20, 30];
  const r: CcmResults = {
    startedAt: "2025-01-01T00:00:00Z",
    deno: "2.9.6",
    quick: false,
    services: 50,
    churnFraction: 0.05,
    steady: [steady(100, window(o.at100, 150, 0.5)), steady(5000, window(o.at5000, o.rss5000))],
    churn: [{ nodes: 100, window: { ...window(60), replaced: 50, poolReplaced: 50 } }],
    latency: {
      nodes: 100,
      services: 50,
      initMs: samples,
      routeMs: o.route,
      joinInEveryNbMs: samples,
      leaveFromEveryNbMs: samples,
      nbReadyMs: samples,
      callsPerJoin: 52,
      callsPerLeave: 50,
      callsPerService: 4,
      callsPerServiceByRoute: { "POST /v4/nodebalancers": 1, "GET /v4/nodebalancers/{id}/configs": 3 },
    },
    takeover: { timing: DEFAULT_LEASE, sigkillMs: [16_000, 17_500], sigtermMs: o.sigterm },
  };
  return r;
}

function row(rows: ReportRow[], what: RegExp, nodes: number | null = null): ReportRow {
  const found = rows.find((r) => what.test(r.what) && r.nodes === nodes);
  assert.ok(found, `no row ${what} for ${nodes}`);
  return found;
}

Deno.test("buildCcmReport() marks each missed target MISSED and each met one met", () => {
  const { rows } = buildCcmReport(
    results({ at100: 1.2, at5000: 22, rss5000: 250, route: [250, 2500], sigterm: [200] }),
  );
  assert.equal(row(rows, /^Linode calls\/min, steady/, 100).result, "met");
  assert.equal(row(rows, /^Linode calls\/min, steady/, 5000).result, "MISSED");
  assert.equal(
    row(rows, /per unchanged Service/, 100).result,
    "MISSED",
    "0.5 calls/min per Service is not zero",
  );
  assert.equal(row(rows, /per unchanged Service/, 5000).result, "met");
  assert.equal(row(rows, /^RSS/, 5000).result, "MISSED");
  assert.equal(row(rows, /^RSS/, 100).result, "", "no RSS target below 5,000 Nodes");
  assert.equal(row(rows, /^Pod CIDR set/).result, "MISSED", "p95 of [250, 2500] is 2.5 s");
  assert.equal(row(rows, /SIGKILL/).result, "MISSED", "17.5 s is over lease + retry (17 s)");
  assert.equal(row(rows, /SIGTERM/).result, "met");
});

Deno.test("buildCcmReport() puts the Go CCM's figure, with its derivation's number, beside each of ours", () => {
  const report = buildCcmReport(
    results({ at100: 1, at5000: 10, rss5000: 150, route: [250], sigterm: [200] }),
  );
  const steady = row(report.rows, /^Linode calls\/min, steady/, 100);
  assert.equal(steady.goValue, 3 * 5 + (60 / 70) * 3);
  assert.match(steady.go, /^17\.6 \[1\]$/);
  for (const r of report.rows) {
    const n = Number(/\[(\d+)\]$/.exec(r.go)?.[1]);
    assert.ok(n >= 1 && n <= report.notes.length, `${r.what}: ${r.go}`);
    assert.ok(report.notes[n - 1]?.startsWith(`[${n}] Go CCM: `));
  }
});

Deno.test("renderReportMarkdown() writes one table row per report row and the notes as a list", () => {
  const report = buildCcmReport(
    results({ at100: 1, at5000: 10, rss5000: 150, route: [250], sigterm: [200] }),
  );
  const md = renderReportMarkdown(report);
  const tableLines = md.split("\n").filter((l) => l.startsWith("| "));
  assert.equal(tableLines.length, report.rows.length + 2);
  assert.equal(md.split("\n").filter((l) => l.startsWith("- ")).length, report.notes.length);
});

Deno.test("buildCcmReport() names the routes of the calls per new Service, marking those not counted", () => {
  const r = results({ at100: 1, at5000: 10, rss5000: 150, route: [250], sigterm: [200] });
  const interfaces = "PUT /v4/linode/instances/{id}/configs/{id}/interfaces/{id}";
  const latency = {
    ...r.latency,
    callsPerService: 1,
    callsPerServiceByRoute: { "POST /v4/nodebalancers": 1, [interfaces]: 0.3 },
  };
  const report = buildCcmReport({ ...r, latency });
  assert.equal(row(report.rows, /per new LoadBalancer Service/, 100).result, "met");
  const note = report.notes.find((n) => n.startsWith("calls per new LoadBalancer Service"));
  assert.match(
    note ?? "",
    /by route, per Service: POST \/v4\/nodebalancers 1, PUT \S+interfaces\/\{id\} 0\.3 \(not counted\)$/,
  );
  const before = buildCcmReport(r);
  assert.equal(row(before.rows, /per new LoadBalancer Service/, 100).result, "MISSED", "4 calls");
});

Deno.test("buildCcmReport() prints the RSS floor beside the goal, with what importing the clients holds when measured", () => {
  const r = results({ at100: 1.2, at5000: 6, rss5000: 180, route: [250], sigterm: [200] });
  const plain = row(buildCcmReport(r).rows, /^RSS MiB, end of window/, 5000);
  assert.equal(plain.target, "<= floor + 48 / 250; floor: 149 at 100 Nodes");
  assert.match(plain.ours, /^179 \(\+30\) \/ 180$/, "the growth above the floor beside the figure");
  const measured = { ...r, importFloor: { runtimeMiB: 40.4, kubeMiB: 101.2, bothMiB: 126.6 } };
  assert.equal(
    row(buildCcmReport(measured).rows, /^RSS MiB, end of window/, 5000).target,
    "<= floor + 48 / 250; floor: 149 at 100 Nodes (127 on importing the clients: Deno 40, client-node +61, api-v4 +25)",
  );
});

Deno.test("buildCcmReport() judges RSS at 5,000 Nodes by its growth above the smallest cluster's process", () => {
  const met = row(
    buildCcmReport(results({ at100: 1, at5000: 6, rss5000: 190, route: [250], sigterm: [200] })).rows,
    /^RSS MiB, end of window/,
    5000,
  );
  assert.equal(met.result, "met", "189 - 149 = 40 <= 48");
  const missed = row(
    buildCcmReport(results({ at100: 1, at5000: 6, rss5000: 200, route: [250], sigterm: [200] })).rows,
    /^RSS MiB, end of window/,
    5000,
  );
  assert.equal(missed.result, "MISSED", "199 - 149 = 50 > 48");
});
