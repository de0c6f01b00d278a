import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { nodeRow } from "./collect.ts";
import { LogRing, parseLogLine } from "./log_ring.ts";
import type { DemoSnapshot, NodeRow, ReplicaRow } from "./snapshot.ts";
import { ENTER_SCREEN, frame, LEAVE_SCREEN } from "./terminal.ts";
import {
  fit,
  formatElapsed,
  leaderText,
  renderFinal,
  renderStatusLine,
  renderSummary,
  renderView,
  shortIdentity,
} from "./view.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function node(name: string, o: Partial<NodeRow> = {}): NodeRow {
  const n = Number(name.replace(/\D/g, "")) || 1;
  return {
    name,
    ready: true,
    initialised: true,
    providerID: `linode://5100000${n}`,
    internalIp: `10.0.0.${n + 1}`,
    externalIp: `45.79.1.${n + 1}`,
    taints: [],
    ...o,
  };
}

function replica(label: string, state: ReplicaRow["state"], linodeCalls = 0): ReplicaRow {
  return { label, identity: `demo-${label.toLowerCase()}_0123456789abcdef`, state, linodeCalls };
}

function snapshot(o: Partial<DemoSnapshot> = {}): DemoSnapshot {
  return {
    nowMs: T0 + 42_000,
    startedAtMs: T0,
    kubeconfig: ".demo/kubeconfig",
    leader: {
      holder: "demo-a_0123456789abcdef",
      acquiredAtMs: T0 + 1_000,
      transitions: 0,
      replicas: [replica("A", "leading", 12), replica("B", "standby")],
    },
    nodes: [
      node("demo-node-1"),
      node("demo-node-2"),
      node("demo-node-3", { taints: ["shutdown"], ready: false }),
    ],
    loadBalancers: { nodeBalancers: 0, services: 2, pending: ["default/api", "default/web"] },
    api: { total: 12, lastMinute: 7, top: [["GET /v4/linode/instances", 9], ["GET /v4/vpcs", 3]] },
    events: [],
    logs: [],
    story: [],
    ...o,
  };
}

Deno.test("formatElapsed() gives mm:ss and clamps negatives", () => {
  assert.deepEqual([0, 999, 61_000, 3_600_000, -5].map(formatElapsed), [
    "00:00",
    "00:00",
    "01:01",
    "60:00",
    "00:00",
  ]);
});

Deno.test("fit() cuts long lines with an ellipsis and keeps short ones", () => {
  assert.equal(fit("abcdef", 4), "abc…");
  assert.equal(fit("abc", 4), "abc");
  assert.equal(fit("abc", 0), "");
});

Deno.test("shortIdentity() keeps the host and 8 characters of the uuid", () => {
  assert.equal(shortIdentity("demo-a_0123456789abcdef"), "demo-a_01234567");
  assert.equal(shortIdentity("plain"), "plain");
});

Deno.test("leaderText() names the holder, since when, transitions and the standby", () => {
  const s = snapshot();
  assert.equal(
    leaderText(s.leader, s),
    "A demo-a_01234567 since 00:01 (00:41 ago) · transitions 0 · standby B demo-b_01234567",
  );
});

Deno.test("leaderText() says when nobody holds the Lease and which replicas stopped", () => {
  const s = snapshot({
    leader: {
      holder: undefined,
      acquiredAtMs: undefined,
      transitions: 1,
      replicas: [replica("A", "stopped")],
    },
  });
  assert.equal(
    leaderText(s.leader, s),
    "nobody holds the Lease · transitions 1 · stopped A demo-a_01234567",
  );
});

Deno.test("renderSummary() shows nodes, taints, routes, NodeBalancers and API cost", () => {
  const nodes = [
    node("demo-node-1", { podCidr: "10.192.1.0/24", route: "routed" }),
    node("demo-node-2", { podCidr: "10.192.2.0/24", route: "failed" }),
    node("demo-node-3", { taints: ["shutdown"], ready: false }),
  ];
  const text = renderSummary(snapshot({ nodes, routes: { ranges: 3 } })).join("\n");
  assert.match(text, /kubectl --kubeconfig \.demo\/kubeconfig get nodes -o wide/);
  assert.match(text, /NODES +3\/3 initialised · 2 Ready/);
  assert.match(text, /demo-node-3 +NotReady +linode:\/\/51000003 +10\.0\.0\.4 +45\.79\.1\.4 +- +shutdown/);
  assert.match(text, /1\/2 pod CIDRs routed · 3 VPC ip_ranges in the Linode API · failed: demo-node-2/);
  assert.match(text, /10\.192\.1\.0\/24 ✓/);
  assert.match(text, /0 NodeBalancers · 2 LoadBalancer Services, 2 pending: default\/api, default\/web/);
  assert.match(text, /LINODE API +12 calls · 7 in the last minute · by replica: A 12, B 0$/m);
  assert.match(text, /top: GET \/v4\/linode\/instances 9 · GET \/v4\/vpcs 3/);
});

Deno.test("renderView() fits the screen and keeps the newest Events and log lines", () => {
  const logs = Array.from({ length: 50 }, (_, i) => ({
    atMs: T0 + i * 1000,
    level: "INF",
    component: "cloud-node",
    message: `line ${i}`,
  }));
  const events = [
    { atMs: T0 + 5_000, type: "Normal", reason: "Old", object: "Node/a", message: "m", count: 1 },
    {
      atMs: T0 + 9_000,
      type: "Normal",
      reason: "DeletingNode",
      object: "Node/demo-node-5",
      message: "gone",
      count: 2,
    },
  ];
  const lines = renderView(snapshot({ logs, events }), { width: 60, height: 30 });
  assert.equal(lines.length, 30);
  assert.ok(lines.every((l) => l.length <= 60));
  assert.match(lines.at(-1) ?? "", /line 49$/);
  assert.ok(!lines.some((l) => l.includes("line 0")));
  const eventsAt = lines.indexOf("EVENTS (newest last)");
  assert.match(lines[eventsAt + 1] ?? "", /Old/);
  assert.equal(lines[eventsAt + 2], "  00:09  Normal  DeletingNode Node/demo-node-5: gone (x2)");
});

Deno.test("renderView() shows what is coming before the story starts", () => {
  const lines = renderView(snapshot(), { width: 200, height: 60 });
  assert.match(lines[lines.indexOf("STORY") + 1] ?? "", /from 00:10: a node joins/);
});

Deno.test("renderFinal() keeps the story and the Events without the screen header", () => {
  const story = [{ atMs: T0 + 10_000, text: "node demo-node-7 joins" }];
  const lines = renderFinal(snapshot({ story }));
  assert.match(lines[0] ?? "", /^LEADER/);
  assert.ok(lines.includes("  00:10  node demo-node-7 joins"));
  assert.ok(lines.includes("  (none yet: the CCM records Events when it deletes a Node or fails)"));
});

Deno.test("renderStatusLine() gives the state at a glance", () => {
  assert.equal(
    renderStatusLine(snapshot()),
    "[00:42] leader A · nodes initialised 3/3 · shutdown-tainted demo-node-3 · NodeBalancers 0 " +
      "(services pending 2) · Linode API 12 calls (7/min) · events 0",
  );
});

Deno.test("nodeRow() reads providerID, addresses and cloud taints of a Node", () => {
  const n: V1Node = {
    metadata: { name: "n1" },
    spec: {
      providerID: "linode://7",
      taints: [{ key: "node.cloudprovider.kubernetes.io/shutdown", effect: "NoSchedule" }, {
        key: "dedicated",
        effect: "NoSchedule",
      }],
    },
    status: {
      addresses: [{ type: "InternalIP", address: "10.0.0.2" }, { type: "ExternalIP", address: "45.79.1.2" }],
      conditions: [{ type: "Ready", status: "True" }],
    },
  };
  n.spec = { ...n.spec, podCIDR: "10.192.1.0/24", podCIDRs: ["10.192.1.0/24"] };
  n.status?.conditions?.push({ type: "NetworkUnavailable", status: "False", reason: "RouteCreated" });
  assert.deepEqual(nodeRow(n), {
    name: "n1",
    ready: true,
    initialised: true,
    providerID: "linode://7",
    internalIp: "10.0.0.2",
    externalIp: "45.79.1.2",
    taints: ["shutdown", "dedicated"],
    podCidr: "10.192.1.0/24",
    route: "routed",
  });
  const fresh = nodeRow({
    metadata: { name: "n2" },
    spec: { taints: [{ key: "node.cloudprovider.kubernetes.io/uninitialized", effect: "NoSchedule" }] },
  });
  assert.equal(fresh.initialised, false);
  assert.equal(fresh.ready, false);
});

Deno.test("parseLogLine() reads LogTape JSON lines and drops the quotes around values", () => {
  const line = JSON.stringify({
    "@timestamp": "2026-01-01T12:00:01.000Z",
    level: "WARNING",
    message: 'tainted node "demo-node-3" as shut down',
    logger: "ccm.cloud-node-lifecycle",
    component: "cloud-node-lifecycle",
  });
  assert.deepEqual(parseLogLine(line), {
    atMs: T0 + 1_000,
    level: "WRN",
    component: "cloud-node-lifecycle",
    message: "tainted node demo-node-3 as shut down",
  });
  assert.equal(parseLogLine("not json"), undefined);
  assert.equal(parseLogLine("[1,2]"), undefined);
});

Deno.test("LogRing.write() keeps only the newest lines", () => {
  const ring = new LogRing(2);
  for (const m of ["a", "b", "c"]) ring.write(JSON.stringify({ message: m, level: "INFO" }) + "\n");
  ring.write("garbage\n");
  assert.deepEqual(ring.lines().map((l) => l.message), ["b", "c"]);
});

Deno.test("frame() homes the cursor, erases each line's end and everything below", () => {
  assert.equal(frame(["a", "b"]), "\x1b[Ha\x1b[K\r\nb\x1b[K\r\n\x1b[J");
  assert.ok(ENTER_SCREEN.includes("\x1b[?1049h") && LEAVE_SCREEN.includes("\x1b[?1049l"));
});
