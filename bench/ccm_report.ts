/**
 * The one table of the CCM-process benchmarks: each measured figure beside the Go CCM's for the same work
 * (`go_model.ts`, each with a numbered line saying how it is derived), the target where the issue sets one,
 * and MISSED where it is not met. Rendered as text, Markdown and JSON; the plot is drawn from the same data.
 */
import {
  churnRows,
  eventRows,
  latencyRows,
  num,
  resourceRows,
  steadyRows,
  takeoverRows,
  WHY_ORDER,
} from "./ccm_rows.ts";
import { isBackgroundRoute } from "./ccm_causes.ts";
import type { CcmLatencyResult } from "./ccm_latency.ts";
import type { CcmReport, CcmResults, ReportRow } from "./ccm_results.ts";
import { LB_POOL } from "./ccm_world.ts";
import * as go from "./go_model.ts";
import type { Table } from "./table.ts";

/** How the calls per new Service are counted, and which routes they were (from the results). */
export function serviceCallsNote(l: CcmLatencyResult): string {
  // Results saved before the breakdown was kept have none.
  const routes = Object.entries(l.callsPerServiceByRoute ?? {}).sort(([, a], [, b]) => b - a)
    .map(([route, n]) => `${route} ${num(n)}${isBackgroundRoute(route) ? " (not counted)" : ""}`);
  return `calls per new LoadBalancer Service: the API's create takes every config and node in one call, and ` +
    `what later updates need (config and node ids) is read only when an update comes; counted from a quiet ` +
    `cluster (no Linode call for 5 s after the leaves) until 5 s without a call after the last new Service's ` +
    `NodeBalancer is complete, so a late re-read counts; calls on routes only the node and route controllers ` +
    `use (Linode instances and their interfaces, VPC address listings) are not counted` +
    (routes.length ? `; by route, per Service: ${routes.join(", ")}` : "");
}

/** Builds the table and its notes from the results. */
export function buildCcmReport(r: CcmResults): CcmReport {
  const rows = [
    ...steadyRows(r),
    ...churnRows(r),
    ...latencyRows(r),
    ...eventRows(r),
    ...takeoverRows(r),
    ...resourceRows(r),
  ];
  const window = r.steady[0]?.window.windowSec ?? NaN;
  const notes = [
    ...WHY_ORDER.map((why, i) => `[${i + 1}] Go CCM: ${go.GO_WHY[why]}`),
    `ours: the real CCM process (deno run -P=ccm --ignore-env main.ts) at default settings plus ` +
    `--enable-route-controller, --vpc-names, --cluster-cidr, against both emulators in the bench process; ` +
    `calls counted by the Linode emulator over a ${
      num(window)
    } s window per cluster (every periodic refresh ` +
    `at least twice: the 5 min node status period, which is also the VPC IP drift period), then scaled to a ` +
    `minute; the ` +
    `hourly orphaned-NodeBalancer check (one NodeBalancer listing, +0.017/min) is longer than the window and ` +
    `not in it`,
    `clusters: N Nodes in one VPC with pod CIDRs routed, ${r.services} LoadBalancer Services on port 80; ` +
    `a NodeBalancer config takes at most 1,000 nodes, so the first ${LB_POOL} Nodes form the load-balancer ` +
    `pool and the rest carry node.kubernetes.io/exclude-from-external-load-balancers`,
    `churn: ${r.churnFraction * 100} % of the Nodes per minute, evenly spaced, a random Node (and its ` +
    `Linode) deleted and a new one of the same pool registered at once; counted over the same window length`,
    `latencies: one event at a time on a converged ${r.latency.nodes}-Node cluster with ${r.latency.services} ` +
    `Services; joins 2.5 s apart; times from the emulators' state, polled every 5-10 ms`,
    `takeover: two replicas on a small cluster; signal -> the Lease write naming the standby, as the ` +
    `Kubernetes emulator committed it; the killed replica is replaced by a new standby each round`,
    `start-up: Nodes registered before the spawn; the Services are created once every Node is initialised ` +
    `and routed; RSS from /proc/<pid>/status (sampled every 10 s), heap from the process's /metrics, CPU ` +
    `from /proc/<pid>/stat over the steady window`,
    `start-up floor under the API's documented rate limits: one interface write per Node at 800 calls per ` +
    `120 s shared by every call (the "general" limit; "command" allows the same 400/min), so N / 400 ` +
    `minutes whatever the CCM does (750 s at 5,000); the 60 s target is with the emulator's generous limits`,
    serviceCallsNote(r.latency),
    ...(r.quick ? ["QUICK RUN: small sizes and a short window; figures are not representative"] : []),
  ];
  return { rows, notes };
}

const COLUMNS = ["what", "N", "ours (measured)", "Go CCM (model)", "target", "result"];

function cells(row: ReportRow): string[] {
  return [
    row.what,
    row.nodes === null ? "" : row.nodes.toLocaleString("en-US"),
    row.ours,
    row.go,
    row.target,
    row.result,
  ];
}

/** The report as a table for `renderTable`. */
export function reportTable(report: CcmReport): Table {
  return {
    title: "Whole CCM process vs the Go CCM (default settings)",
    columns: COLUMNS,
    rows: report.rows.map(cells),
    notes: report.notes,
  };
}

function mdCell(text: string): string {
  return text.replaceAll("|", "\\|");
}

/** The report as Markdown: a table, then the notes as a list. */
export function renderReportMarkdown(report: CcmReport): string {
  const lines = [
    `| ${COLUMNS.join(" | ")} |`,
    `| ${COLUMNS.map((_, i) => (i === 1 ? "--:" : "---")).join(" | ")} |`,
    ...report.rows.map((row) => `| ${cells(row).map(mdCell).join(" | ")} |`),
    "",
    ...report.notes.map((n) => `- ${n}`),
  ];
  return lines.join("\n") + "\n";
}
