/**
 * The one table of the CCM-process benchmarks: each measured figure beside the Go CCM's for the same work
 * (`go_model.ts`, each with a numbered line saying how it is derived), the target where the issue sets one,
 * and MISSED where it is not met. Rendered as text, Markdown and JSON; the plot is drawn from the same data.
 */
import type { CcmLatencyResult } from "./ccm_latency.ts";
import type { ChurnResult } from "./ccm_churn.ts";
import type { WindowResult } from "./ccm_steady.ts";
import type { TakeoverResult } from "./ccm_takeover.ts";
import { LB_POOL } from "./ccm_world.ts";
import * as go from "./go_model.ts";
import { summarize, type Summary, type Table } from "./table.ts";

/** Start-up and steady state of one cluster size. */
export interface SteadyRun {
  readonly nodes: number;
  /** Spawn → `/readyz` 200. */
  readonly readyMs: number;
  /** Spawn → every Node initialised and routed. */
  readonly nodesDoneMs: number;
  /** Services created (after that) → every NodeBalancer complete. */
  readonly servicesDoneMs: number;
  readonly window: WindowResult;
}

/** Everything the CCM-process benchmarks measured. */
export interface CcmResults {
  readonly startedAt: string;
  readonly deno: string;
  readonly quick: boolean;
  readonly services: number;
  readonly churnFraction: number;
  readonly steady: readonly SteadyRun[];
  readonly churn: readonly { readonly nodes: number; readonly window: ChurnResult }[];
  readonly latency: CcmLatencyResult;
  readonly takeover: TakeoverResult;
}

/** One row of the table, with the numbers behind its text. */
export interface ReportRow {
  readonly what: string;
  readonly nodes: number | null;
  readonly ours: string;
  readonly oursValue: number | null;
  readonly go: string;
  readonly goValue: number | null;
  readonly target: string;
  readonly result: "met" | "MISSED" | "";
}

/** The table and its numbered derivation lines. */
export interface CcmReport {
  readonly rows: ReportRow[];
  readonly notes: string[];
}

const WHY_ORDER = [
  "steady",
  "service",
  "churn",
  "events",
  "init",
  "route",
  "takeover",
  "notModelled",
  "memory",
] as const;
type Why = (typeof WHY_ORDER)[number];

function ref(why: Why): string {
  return `[${WHY_ORDER.indexOf(why) + 1}]`;
}

function num(n: number): string {
  if (!Number.isFinite(n)) return "-";
  if (n === 0) return "0";
  return Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : String(Number(n.toPrecision(3)));
}

function ms(n: number): string {
  return n >= 10_000 ? `${num(n / 1000)} s` : `${Math.round(n).toLocaleString("en-US")} ms`;
}

function triple(s: Summary): string {
  return `${ms(s.p50)} / ${ms(s.p95)} / ${ms(s.max)}`;
}

function judged(ok: boolean | null): ReportRow["result"] {
  return ok === null ? "" : ok ? "met" : "MISSED";
}

/** The ceilings on steady calls per minute by cluster size. */
const CALL_TARGETS: Readonly<Record<number, number>> = { 100: 2, 1000: 3, 5000: 12 };

function steadyRows(r: CcmResults): ReportRow[] {
  const rows: ReportRow[] = [];
  for (const s of r.steady) {
    const limit = CALL_TARGETS[s.nodes];
    const perMin = s.window.callsPerMin;
    rows.push({
      what: `Linode calls/min, steady (1 VPC, routes, ${r.services} LB Services)`,
      nodes: s.nodes,
      ours: num(perMin),
      oursValue: perMin,
      go: `${num(go.goSteadyCallsPerMin(s.nodes))} ${ref("steady")}`,
      goValue: go.goSteadyCallsPerMin(s.nodes),
      target: limit === undefined ? "" : `<= ${limit}`,
      result: judged(limit === undefined ? null : perMin <= limit),
    });
  }
  for (const s of r.steady) {
    const v = s.window.serviceCallsPerServiceMin;
    rows.push({
      what: "Linode calls/min per unchanged Service",
      nodes: s.nodes,
      ours: num(v),
      oursValue: v,
      go: `0 ${ref("service")}`,
      goValue: 0,
      target: "0",
      result: judged(v === 0),
    });
  }
  return rows;
}

function churnRows(r: CcmResults): ReportRow[] {
  return r.churn.map((c) => {
    const backends = Math.min(c.nodes, LB_POOL);
    const model = go.goChurnCallsPerMin(c.nodes, {
      services: r.services,
      backends,
      fraction: r.churnFraction,
    });
    return {
      what: `Linode calls/min, churn ${r.churnFraction * 100} %/min (${c.window.replaced} replaced, ` +
        `${c.window.poolReplaced} in the LB pool)`,
      nodes: c.nodes,
      ours: num(c.window.callsPerMin),
      oursValue: c.window.callsPerMin,
      go: `${num(model)} ${ref("churn")}`,
      goValue: model,
      target: "",
      result: "",
    };
  });
}

function latencyRow(what: string, samples: number[], goCell: string, target?: (s: Summary) => boolean) {
  const s = summarize(samples);
  return {
    what: `${what}, p50 / p95 / max (${samples.length})`,
    nodes: null,
    ours: triple(s),
    oursValue: s.p95,
    go: goCell,
    goValue: null,
    target: "",
    result: judged(target ? target(s) : null),
  };
}

function latencyRows(r: CcmResults): ReportRow[] {
  const l = r.latency;
  const notModelled = `- ${ref("notModelled")}`;
  const route = latencyRow(
    "Pod CIDR set -> route programmed",
    l.routeMs,
    `${triple(go.GO_ROUTE_LATENCY_MS)} ${ref("route")}`,
    (s) => s.p95 <= 2000,
  );
  return [
    latencyRow("New Node -> initialised", l.initMs, `${triple(go.GO_INIT_LATENCY_MS)} ${ref("init")}`),
    { ...route, target: "p95 <= 2 s" },
    latencyRow("New Service -> NodeBalancer ready", l.nbReadyMs, notModelled),
    latencyRow("Node initialised -> backend in every NodeBalancer", l.joinInEveryNbMs, notModelled),
    latencyRow("Node deleted -> out of every NodeBalancer", l.leaveFromEveryNbMs, notModelled),
  ];
}

function eventRows(r: CcmResults): ReportRow[] {
  const l = r.latency;
  const perSync = go.goNodeSetSyncCalls(Math.min(l.nodes, LB_POOL));
  const goJoin = 1 + go.GO_SYNCS_PER_JOIN * l.services * perSync;
  const goLeave = go.GO_SYNCS_PER_LEAVE * l.services * perSync;
  const row = (what: string, ours: number, goValue: number) => ({
    what,
    nodes: l.nodes,
    ours: num(ours),
    oursValue: ours,
    go: `${num(goValue)} ${ref("events")}`,
    goValue,
    target: "",
    result: "" as const,
  });
  return [
    row(`Linode calls per Node joining (${l.services} LB Services)`, l.callsPerJoin, goJoin),
    row(`Linode calls per Node leaving (${l.services} LB Services)`, l.callsPerLeave, goLeave),
    row("Linode calls per new LoadBalancer Service", l.callsPerService, go.GO_CREATE_CALLS),
  ];
}

function takeoverRows(r: CcmResults): ReportRow[] {
  const t = r.takeover.timing;
  const killLimit = t.leaseDurationMs + t.retryPeriodMs;
  const bound = go.goTakeoverMs(t);
  const goCell = `${ms(bound.min)} - ${ms(bound.max)} ${ref("takeover")}`;
  const timing = `lease ${t.leaseDurationMs / 1000} s, retry ${t.retryPeriodMs / 1000} s`;
  return [
    {
      ...latencyRow(
        `Leader takeover after SIGKILL (${timing})`,
        r.takeover.sigkillMs,
        goCell,
        (s) => s.max <= killLimit,
      ),
      target: `max <= ${ms(killLimit)}`,
    },
    {
      ...latencyRow(
        `Leader takeover after SIGTERM (${timing})`,
        r.takeover.sigtermMs,
        goCell,
        (s) => s.max <= 3000,
      ),
      target: "max <= 3 s",
    },
  ];
}

function resourceRows(r: CcmResults): ReportRow[] {
  const rows: ReportRow[] = [];
  const notModelled = `- ${ref("notModelled")}`;
  const memory = `- ${ref("memory")}`;
  const add = (
    what: string,
    s: SteadyRun,
    ours: string,
    value: number,
    goCell: string,
    target = "",
    ok?: boolean,
  ) =>
    rows.push({
      what,
      nodes: s.nodes,
      ours,
      oursValue: value,
      go: goCell,
      goValue: null,
      target,
      result: judged(ok ?? null),
    });
  for (const s of r.steady) add("Start-up: spawn -> /readyz 200", s, ms(s.readyMs), s.readyMs, notModelled);
  for (const s of r.steady) {
    add(
      "Start-up: spawn -> every Node initialised and routed",
      s,
      ms(s.nodesDoneMs),
      s.nodesDoneMs,
      notModelled,
    );
  }
  for (const s of r.steady) {
    add(
      `${r.services} Services created -> every NodeBalancer complete`,
      s,
      ms(s.servicesDoneMs),
      s.servicesDoneMs,
      notModelled,
    );
  }
  for (const s of r.steady) {
    const w = s.window;
    const limit = s.nodes === 5000 ? 200 : undefined;
    const ok = limit === undefined ? undefined : w.rssMaxMiB <= limit;
    add(
      "RSS MiB, end of window / max",
      s,
      `${num(w.rssMiB)} / ${num(w.rssMaxMiB)}`,
      w.rssMaxMiB,
      memory,
      limit ? `<= ${limit}` : "",
      ok,
    );
  }
  for (const s of r.steady) {
    const w = s.window;
    add(
      "V8 heap MiB, used / total",
      s,
      `${num(w.heapUsedMiB)} / ${num(w.heapTotalMiB)}`,
      w.heapUsedMiB,
      memory,
    );
  }
  for (const s of r.steady) {
    add("CPU seconds per idle hour", s, num(s.window.cpuSecPerHour), s.window.cpuSecPerHour, memory);
  }
  return rows;
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
    `at least twice: the 5 min node status period, the 60 s VPC IP TTL), then scaled to a minute`,
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
