import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { needsRouteCondition, routeCondition } from "./report.ts";
import type { NodeRoutes, RouteTarget } from "./plan.ts";
import { nodeOutcome, type WriteOutcome } from "./report.ts";

const T1: RouteTarget = { vpcId: 1, subnetId: 11, linodeId: 7, interfaceId: 70, configId: 5 };
const T2: RouteTarget = { vpcId: 2, subnetId: 21, linodeId: 7, interfaceId: 71, configId: null };

function routes(o: Partial<NodeRoutes> = {}): NodeRoutes {
  return {
    node: "n1",
    linodeId: 7,
    wanted: ["10.192.1.0/24"],
    outside: [],
    ipv6: [],
    invalid: [],
    targets: [T1],
    ...o,
  };
}

const OUTCOMES: { name: string; n: NodeRoutes; writes: [string, WriteOutcome][]; want: string }[] = [
  { name: "routed when no write was needed", n: routes(), writes: [], want: "routed" },
  {
    name: "routed after a successful write",
    n: routes(),
    writes: [["7/70", { kind: "done" }]],
    want: "routed",
  },
  {
    name: "failed when one VPC's write failed",
    n: routes({ targets: [T1, T2] }),
    writes: [["7/70", { kind: "done" }], ["7/71", { kind: "failed", error: "HTTP 400" }]],
    want: "failed",
  },
  {
    name: "pending while a write is deferred",
    n: routes(),
    writes: [["7/70", { kind: "deferred" }]],
    want: "pending",
  },
  { name: "no-interface without targets", n: routes({ targets: [] }), writes: [], want: "no-interface" },
  {
    name: "unroutable when every IPv4 pod CIDR is outside the cluster CIDR",
    n: routes({ wanted: [], outside: ["10.50.0.0/24"] }),
    writes: [],
    want: "unroutable",
  },
  {
    name: "routed for an IPv6-only Node",
    n: routes({ wanted: [], ipv6: ["fd00::/64"] }),
    writes: [],
    want: "routed",
  },
];

for (const c of OUTCOMES) {
  Deno.test(`nodeOutcome() ${c.name}`, () => assert.equal(nodeOutcome(c.n, new Map(c.writes)).kind, c.want));
}

function withCondition(status?: string, reason?: string): V1Node {
  const conditions = status ? [{ type: "NetworkUnavailable", status, reason }] : [];
  return { metadata: { name: "n1" }, status: { conditions } };
}

const CONDITIONS: { name: string; node: V1Node; routed: boolean; want: boolean }[] = [
  { name: "writes False on a Node without the condition", node: withCondition(), routed: true, want: true },
  {
    name: "keeps False/RouteCreated",
    node: withCondition("False", "RouteCreated"),
    routed: true,
    want: false,
  },
  {
    name: "keeps a False set by a CNI under its own reason (as upstream)",
    node: withCondition("False", "CalicoIsUp"),
    routed: true,
    want: false,
  },
  {
    name: "clears True/NoRouteCreated",
    node: withCondition("True", "NoRouteCreated"),
    routed: true,
    want: true,
  },
  { name: "writes True on failure", node: withCondition("False", "RouteCreated"), routed: false, want: true },
  {
    name: "keeps True/NoRouteCreated on failure",
    node: withCondition("True", "NoRouteCreated"),
    routed: false,
    want: false,
  },
];

for (const c of CONDITIONS) {
  Deno.test(`needsRouteCondition() ${c.name}`, () =>
    assert.equal(needsRouteCondition(c.node, c.routed), c.want));
}

Deno.test("routeCondition() writes upstream's reasons and messages with RFC 3339 times", () => {
  const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
  assert.deepEqual(routeCondition(true, at), {
    type: "NetworkUnavailable",
    status: "False",
    reason: "RouteCreated",
    message: "RouteController created a route",
    lastTransitionTime: "2026-01-02T03:04:05Z",
    lastHeartbeatTime: "2026-01-02T03:04:05Z",
  });
  assert.equal(routeCondition(false, at).reason, "NoRouteCreated");
  assert.equal(routeCondition(false, at).status, "True");
});
