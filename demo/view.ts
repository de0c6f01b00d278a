/** Renders a `DemoSnapshot` as terminal lines. Pure: no I/O, no clock, no ANSI (the screen adds that). */
import {
  countInitialised,
  type DemoSnapshot,
  type LeaderInfo,
  type NodeRow,
  type ServiceLbRow,
} from "./snapshot.ts";

/** Size of the area to draw in. */
export interface ViewSize {
  readonly width: number;
  readonly height: number;
}

const LABEL_WIDTH = 12;
const DOT = " · ";

/** `mm:ss` of a duration (negative durations count as zero). */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const mm = Math.floor(s / 60);
  return `${String(mm).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

/** Cuts a line to `width` characters, marking the cut with `…`. */
export function fit(line: string, width: number): string {
  if (width <= 0) return "";
  return line.length <= width ? line : line.slice(0, Math.max(0, width - 1)) + "…";
}

/** Shortens a Lease holder identity (`host_uuid`) to `host_` plus 8 characters. */
export function shortIdentity(identity: string): string {
  const cut = identity.indexOf("_");
  return cut >= 0 && identity.length > cut + 9 ? identity.slice(0, cut + 9) : identity;
}

function section(label: string, text: string): string {
  return label.padEnd(LABEL_WIDTH) + text;
}

/** The leader line: who holds the Lease, since when, transitions, and the standby. */
export function leaderText(leader: LeaderInfo, s: Pick<DemoSnapshot, "nowMs" | "startedAtMs">): string {
  const named = (state: string) =>
    leader.replicas.filter((r) => r.state === state).map((r) => `${r.label} ${shortIdentity(r.identity)}`);
  const standby = named("standby"), stopped = named("stopped");
  const parts: string[] = [];
  if (leader.holder === undefined) {
    parts.push("nobody holds the Lease");
  } else {
    const holder = leader.replicas.find((r) => r.identity === leader.holder);
    const since = leader.acquiredAtMs === undefined
      ? ""
      : ` since ${formatElapsed(leader.acquiredAtMs - s.startedAtMs)} (${
        formatElapsed(s.nowMs - leader.acquiredAtMs)
      } ago)`;
    parts.push(`${holder ? holder.label + " " : ""}${shortIdentity(leader.holder)}${since}`);
  }
  parts.push(`transitions ${leader.transitions}`);
  if (standby.length > 0) parts.push(`standby ${standby.join(", ")}`);
  if (stopped.length > 0) parts.push(`stopped ${stopped.join(", ")}`);
  return parts.join(DOT);
}

function nodeTable(nodes: readonly NodeRow[]): string[] {
  const rows = nodes.map((n) => [
    n.name,
    n.ready ? "Ready" : "NotReady",
    n.providerID ?? "-",
    n.internalIp ?? "-",
    n.externalIp ?? "-",
    n.podCidr ? `${n.podCidr}${n.route === "routed" ? " ✓" : n.route === "failed" ? " ✗" : ""}` : "-",
    n.taints.length > 0 ? n.taints.join(",") : "-",
  ]);
  const header = ["NAME", "STATUS", "PROVIDER-ID", "INTERNAL-IP", "EXTERNAL-IP", "POD-CIDR", "TAINTS"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) => "  " + cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  return [line(header), ...rows.map(line)];
}

/** "4/6 pod CIDRs routed · 4 VPC ip_ranges": Nodes with NetworkUnavailable=False/RouteCreated. */
function routesText(s: DemoSnapshot): string {
  const withCidr = s.nodes.filter((n) => n.podCidr);
  const routed = withCidr.filter((n) => n.route === "routed").length;
  const failed = withCidr.filter((n) => n.route === "failed").map((n) => n.name);
  const ranges = s.routes ? `${DOT}${s.routes.ranges} VPC ip_ranges in the Linode API` : "";
  return `${routed}/${withCidr.length} pod CIDRs routed${ranges}${
    failed.length ? `${DOT}failed: ${failed.join(", ")}` : ""
  }`;
}

/** One line per LoadBalancer Service: its address and the NodeBalancer behind it. */
function serviceLines(rows: readonly ServiceLbRow[]): string[] {
  const width = Math.max(0, ...rows.map((r) => r.service.length));
  return rows.map((r) => {
    const where = r.ip === undefined
      ? "pending"
      : `${r.ip.padEnd(15)}  NodeBalancer ${r.nodeBalancerId ?? "?"}, ${r.backends} backends`;
    return `  ${r.service.padEnd(width)}  ${where}`;
  });
}

/** "· by replica: A 12, B 0": the standby's count shows it makes no Linode calls. */
function byReplica(s: DemoSnapshot): string {
  const calls = s.leader.replicas.map((r) => `${r.label} ${r.linodeCalls}`).join(", ");
  return calls ? `${DOT}by replica: ${calls}` : "";
}

/** The fixed top part: header, leader, nodes, routes, load balancers, API cost. */
export function renderSummary(s: DemoSnapshot): string[] {
  const [done, total] = countInitialised(s.nodes);
  const ready = s.nodes.filter((n) => n.ready).length;
  const lb = s.loadBalancers;
  const pending = lb.pending.length > 0 ? `: ${lb.pending.join(", ")}` : "";
  const top = s.api.top.map(([route, n]) => `${route} ${n}`).join(DOT);
  return [
    `Linode CCM demo${DOT}up ${formatElapsed(s.nowMs - s.startedAtMs)}${DOT}Ctrl-C stops everything`,
    `look inside: kubectl --kubeconfig ${s.kubeconfig} get nodes -o wide  (-o yaml for providerID, addresses, taints)`,
    "",
    section("LEADER", leaderText(s.leader, s)),
    section("NODES", `${done}/${total} initialised${DOT}${ready} Ready`),
    ...nodeTable(s.nodes),
    section("ROUTES", routesText(s)),
    section(
      "NODEBAL.",
      `${lb.nodeBalancers} NodeBalancers${DOT}${lb.services} LoadBalancer Services, ${lb.pending.length} pending${pending}`,
    ),
    ...serviceLines(lb.rows ?? []),
    section("LINODE API", `${s.api.total} calls${DOT}${s.api.lastMinute} in the last minute${byReplica(s)}`),
    ...(top ? [" ".repeat(LABEL_WIDTH) + "top: " + top] : []),
  ];
}

function storyLines(s: DemoSnapshot): string[] {
  if (s.story.length === 0) {
    return [
      s.preview ??
        "  (from 00:10: a node joins, one shuts down and boots again, one is deleted, a Service gets a NodeBalancer)",
    ];
  }
  return s.story.map((l) => `  ${formatElapsed(l.atMs - s.startedAtMs)}  ${l.text}`);
}

function eventLines(s: DemoSnapshot): string[] {
  if (s.events.length === 0) return ["  (none yet: the CCM records Events when it deletes a Node or fails)"];
  return s.events.map((e) => {
    const count = e.count > 1 ? ` (x${e.count})` : "";
    return `  ${formatElapsed(e.atMs - s.startedAtMs)}  ${
      e.type.padEnd(7)
    } ${e.reason} ${e.object}: ${e.message}${count}`;
  });
}

function logLines(s: DemoSnapshot): string[] {
  return s.logs.map((l) =>
    `  ${formatElapsed(l.atMs - s.startedAtMs)}  ${l.level} ${l.component.padEnd(20)} ${l.message}`
  );
}

/** Keeps the newest `max` lines of a panel (newest last). */
function tail(lines: string[], max: number): string[] {
  return max <= 0 ? [] : lines.slice(Math.max(0, lines.length - max));
}

/** The whole screen: summary, then the story, Events and logs panels sharing the remaining height. */
export function renderView(s: DemoSnapshot, size: ViewSize): string[] {
  const top = renderSummary(s);
  const story = storyLines(s);
  const events = eventLines(s);
  const logs = logLines(s);
  // Three panel titles and blank lines above each; the rest is shared, the story first (it is short).
  const free = Math.max(0, size.height - top.length - 6);
  const storyRows = Math.min(story.length, Math.max(1, Math.floor(free / 3)));
  const eventRows = Math.min(events.length, Math.max(1, Math.floor((free - storyRows) / 2)));
  const logRows = Math.max(1, free - storyRows - eventRows);
  const lines = [
    ...top,
    "",
    "STORY",
    ...tail(story, storyRows),
    "",
    "EVENTS (newest last)",
    ...tail(events, eventRows),
    "",
    "CCM LOG (both replicas)",
    ...tail(logs, logRows),
  ];
  return lines.slice(0, Math.max(0, size.height)).map((l) => fit(l, size.width));
}

/** What stays on the terminal after the demo: the summary without its header, the story, Events, last logs. */
export function renderFinal(s: DemoSnapshot, logLinesKept = 8): string[] {
  return [
    ...renderSummary(s).slice(3),
    "",
    "STORY",
    ...storyLines(s),
    "",
    "EVENTS (newest last)",
    ...eventLines(s),
    "",
    "CCM LOG (last lines)",
    ...tail(logLines(s), logLinesKept),
  ];
}

/** One line for plain (non-terminal) output: the state at a glance. */
export function renderStatusLine(s: DemoSnapshot): string {
  const [done, total] = countInitialised(s.nodes);
  const tainted = s.nodes.filter((n) => n.taints.includes("shutdown")).map((n) => n.name);
  const leading = s.leader.replicas.find((r) => r.identity === s.leader.holder);
  return [
    `[${formatElapsed(s.nowMs - s.startedAtMs)}] leader ${leading?.label ?? "none"}`,
    `nodes initialised ${done}/${total}`,
    `shutdown-tainted ${tainted.length > 0 ? tainted.join(",") : "none"}`,
    `NodeBalancers ${s.loadBalancers.nodeBalancers} (services pending ${s.loadBalancers.pending.length})`,
    `Linode API ${s.api.total} calls (${s.api.lastMinute}/min)`,
    `events ${s.events.length}`,
  ].join(DOT);
}
