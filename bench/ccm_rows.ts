/**
 * The rows of the CCM-process table, one builder per part (steady, churn, latencies, events, takeover,
 * resources): our figure, the Go CCM's (with the number of its derivation line), the target, MISSED.
 */
import type { CcmResults, ReportRow, SteadyRun } from "./ccm_results.ts";
import { LB_POOL } from "./ccm_world.ts";
import * as go from "./go_model.ts";
import { summarize, type Summary } from "./table.ts";

/** How much more than the 10-Node process a 5,000-Node process may hold at the end of its window. */
export const RSS_GROWTH_GOAL_MIB = 48;
/** The Go CCM's derivation lines, in the order they are numbered. */
export const WHY_ORDER = [
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
/** One derivation line's key. */
export type Why = (typeof WHY_ORDER)[number];

function ref(why: Why): string {
  return `[${WHY_ORDER.indexOf(why) + 1}]`;
}

/** A number for a cell: 3 significant digits below 100, whole numbers above. */
export function num(n: number): string {
  if (!Number.isFinite(n)) return "-";
  if (n === 0) return "0";
  return Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : String(Number(n.toPrecision(3)));
}

function mib(n: number): string {
  return String(Math.round(n));
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

/**
 * The least time a cold start can take under the API's documented rate limits (sim/linode/rate_limit.ts):
 * every Node needs one interface write, and all calls share 800 per 120 s ("general"; the 400/min
 * "command" limit is the same rate), so N Nodes need at least N / 800 × 120 s of writes.
 */
export function writeFloorMs(nodes: number): number {
  return (nodes / 800) * 120_000;
}

/** The ceilings on steady calls per minute by cluster size. */
const CALL_TARGETS: Readonly<Record<number, number>> = { 100: 2, 1000: 3, 5000: 12 };

/** The steady rows. */
export function steadyRows(r: CcmResults): ReportRow[] {
  const rows: ReportRow[] = [];
  for (const s of r.steady) {
    const limit = CALL_TARGETS[s.nodes];
    const perMin = s.window.callsPerMin;
    rows.push({
      what: `Linode calls/min, steady (1 VPC, routes, ${r.services} LB Services)`,
      nodes: s.nodes,
      ours: num(perMin),
      oursValue: perMin,
      go: `${num(go.goSteadyCallsPerMin(s.nodes, r.services))} ${ref("steady")}`,
      goValue: go.goSteadyCallsPerMin(s.nodes, r.services),
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

/** The churn rows. */
export function churnRows(r: CcmResults): ReportRow[] {
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

/** The latency rows. */
export function latencyRows(r: CcmResults): ReportRow[] {
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

/** The event rows. */
export function eventRows(r: CcmResults): ReportRow[] {
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
    {
      ...row("Linode calls per new LoadBalancer Service", l.callsPerService, go.GO_CREATE_CALLS),
      target: "<= 1.5",
      result: judged(l.callsPerService <= 1.5),
    },
  ];
}

/** The takeover rows. */
export function takeoverRows(r: CcmResults): ReportRow[] {
  const t = r.takeover.timing;
  // A standby watches the Lease, so it knows when the last renew it saw expires: it takes over then.
  const killLimit = t.leaseDurationMs + 1000;
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

/** The resource rows. */
export function resourceRows(r: CcmResults): ReportRow[] {
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
    const limit = s.nodes === 5000 ? 60_000 : undefined;
    add(
      "Start-up: spawn -> every Node initialised and routed",
      s,
      ms(s.nodesDoneMs),
      s.nodesDoneMs,
      notModelled,
      limit === undefined ? "" : `<= ${ms(limit)}; documented limits: floor ${ms(writeFloorMs(s.nodes))}`,
      limit === undefined ? undefined : s.nodesDoneMs <= limit,
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
  // The runtime's own floor: the smallest cluster's process (Deno, both client libraries' code, no data).
  const floor = r.steady.reduce<SteadyRun | undefined>(
    (a, s) => (a && a.nodes <= s.nodes ? a : s),
    undefined,
  );
  const f = r.importFloor;
  // What that floor is made of: the runtime and the client libraries of record, before any CCM code runs.
  const importText = f
    ? ` (${mib(f.bothMiB)} on importing the clients: Deno ${mib(f.runtimeMiB)}, client-node +${
      mib(f.kubeMiB - f.runtimeMiB)
    }, api-v4 +${mib(f.bothMiB - f.kubeMiB)})`
    : "";
  for (const s of r.steady) {
    const w = s.window;
    // The goal at 5,000 Nodes: at most RSS_GROWTH_GOAL_MIB above the 10-Node process at the end of the window
    // (what the data of 5,000 Nodes costs, the runtime and client libraries being the floor), 250 MiB at most.
    const goal = s.nodes === 5000;
    const growth = floor && floor !== s ? w.rssMiB - floor.window.rssMiB : undefined;
    const ok = goal ? growth !== undefined && growth <= RSS_GROWTH_GOAL_MIB && w.rssMaxMiB <= 250 : undefined;
    const floorText = floor && goal
      ? `; floor: ${num(floor.window.rssMiB)} at ${floor.nodes} Nodes${importText}`
      : "";
    const growthText = growth === undefined ? "" : ` (+${num(growth)})`;
    add(
      "RSS MiB, end of window / max",
      s,
      `${num(w.rssMiB)}${goal ? growthText : ""} / ${num(w.rssMaxMiB)}`,
      w.rssMaxMiB,
      memory,
      goal ? `<= floor + ${RSS_GROWTH_GOAL_MIB} / 250${floorText}` : "",
      ok,
    );
  }
  for (const s of r.steady) {
    if (s.startPeakRssMiB === undefined) continue;
    add(
      "RSS MiB, peak from spawn to every Service done",
      s,
      num(s.startPeakRssMiB),
      s.startPeakRssMiB,
      memory,
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
    const goal = s.nodes === 5000 ? 30 : undefined;
    const v = s.window.cpuSecPerHour;
    add(
      "CPU seconds per idle hour",
      s,
      num(v),
      v,
      memory,
      goal ? `<= ${goal}` : "",
      goal ? v <= goal : undefined,
    );
  }
  return rows;
}
