import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { InstanceIndex } from "../../cache/instance_index.ts";
import type { LinodeInstance } from "../../cache/types.ts";
import { needsInstanceState, planLifecycle } from "./lifecycle.ts";

const SHUTDOWN = { key: "node.cloudprovider.kubernetes.io/shutdown", effect: "NoSchedule" };

function node(
  name: string,
  o: { id?: number | string; ready?: boolean; shutdownTaint?: boolean } = {},
): V1Node {
  const providerID = typeof o.id === "string" ? o.id : o.id === undefined ? undefined : `linode://${o.id}`;
  return {
    metadata: { name, uid: `uid-${name}`, resourceVersion: "1" },
    spec: { providerID, taints: o.shutdownTaint ? [SHUTDOWN] : undefined },
    status: { conditions: [{ type: "Ready", status: o.ready === false ? "False" : "True" }] },
  };
}

function linode(id: number, status = "running"): LinodeInstance {
  return { id, label: `l${id}`, region: "us-east", type: "g6", status, ipv4: [], ipv6: null, tags: [] };
}

const names = (nodes: readonly V1Node[]) => nodes.map((n) => n.metadata?.name);

const CASES: {
  name: string;
  nodes: V1Node[];
  linodes?: LinodeInstance[];
  share?: number;
  want: { taint?: string[]; untaint?: string[]; gone?: string[]; blocked?: boolean };
}[] = [
  {
    // The Go CCM's InstanceShutdown: offline and shutting_down only.
    name: "taints a NotReady node whose Linode is offline or shutting down, not stopped",
    nodes: [
      node("a", { id: 1, ready: false }),
      node("b", { id: 2, ready: false }),
      node("c", { id: 3, ready: false }),
    ],
    linodes: [linode(1, "offline"), linode(2, "stopped"), linode(3, "shutting_down")],
    want: { taint: ["a", "c"] },
  },
  {
    name: "leaves an already tainted shut-down node alone",
    nodes: [node("a", { id: 1, ready: false, shutdownTaint: true })],
    linodes: [linode(1, "offline")],
    want: {},
  },
  {
    // Upstream's MonitorNodes removes the taint only from a Ready Node.
    name: "keeps the taint of a NotReady node whose Linode runs again",
    nodes: [node("a", { id: 1, ready: false, shutdownTaint: true })],
    linodes: [linode(1, "running")],
    want: {},
  },
  {
    name: "untaints a Ready node whose Linode is still offline",
    nodes: [node("a", { id: 1, shutdownTaint: true }), node("b", { id: 2 })],
    linodes: [linode(1, "offline"), linode(2)],
    want: { untaint: ["a"] },
  },
  {
    name: "untaints a Ready node even when Linode state is unknown",
    nodes: [node("a", { id: 1, shutdownTaint: true })],
    want: { untaint: ["a"] },
  },
  {
    name: "does nothing for NotReady nodes when Linode state is unknown",
    nodes: [node("a", { id: 1, ready: false }), node("b", { id: 2 }), node("c", { id: 3 })],
    want: {},
  },
  {
    name: "ignores booting, rebooting and provisioning Linodes",
    nodes: [node("a", { id: 1, ready: false }), node("b", { id: 2, ready: false }), node("c", { id: 3 })],
    linodes: [linode(1, "booting"), linode(2, "provisioning"), linode(3)],
    want: {},
  },
  {
    name: "a NotReady node whose Linode is missing is a deletion candidate",
    nodes: [node("a", { id: 1, ready: false }), node("b", { id: 2 }), node("c", { id: 3 })],
    linodes: [linode(2), linode(3)],
    want: { gone: ["a"] },
  },
  {
    name: "a Ready node whose Linode is missing is not a candidate",
    nodes: [node("a", { id: 1 }), node("b", { id: 2 })],
    linodes: [linode(2)],
    want: {},
  },
  {
    name: "never touches foreign, invalid or empty providerIDs",
    nodes: [
      node("aws", { id: "aws:///us-east-1a/i-1", ready: false, shutdownTaint: true }),
      node("bad", { id: "linode://x", ready: false }),
      node("new", { ready: false }),
      node("ok", { id: 9 }),
    ],
    linodes: [linode(9)],
    want: {},
  },
  {
    name: "blocks when more than half of the nodes look gone",
    nodes: [node("a", { id: 1, ready: false }), node("b", { id: 2, ready: false }), node("c", { id: 3 })],
    linodes: [linode(3)],
    want: { gone: ["a", "b"], blocked: true },
  },
  {
    name: "allows exactly half",
    nodes: [node("a", { id: 1, ready: false }), node("b", { id: 2 })],
    linodes: [linode(2)],
    want: { gone: ["a"] },
  },
  {
    name: "never deletes all nodes, even with a share of 1",
    nodes: [node("a", { id: 1, ready: false })],
    linodes: [linode(5)],
    share: 1,
    want: { gone: ["a"], blocked: true },
  },
  {
    name: "honours a configured share",
    nodes: [
      node("a", { id: 1, ready: false }),
      node("b", { id: 2 }),
      node("c", { id: 3 }),
      node("d", { id: 4 }),
    ],
    linodes: [linode(2), linode(3), linode(4)],
    share: 0.2,
    want: { gone: ["a"], blocked: true },
  },
];

for (const c of CASES) {
  Deno.test(`planLifecycle() ${c.name}`, () => {
    const index = c.linodes ? new InstanceIndex(c.linodes) : undefined;
    const plan = planLifecycle(c.nodes, index, { maxDeletionShare: c.share });
    assert.deepEqual(names(plan.taint), c.want.taint ?? []);
    assert.deepEqual(names(plan.untaint), c.want.untaint ?? []);
    assert.deepEqual(plan.gone.map((g) => g.node.metadata?.name), c.want.gone ?? []);
    assert.equal(plan.blocked, c.want.blocked ?? false);
  });
}

Deno.test("needsInstanceState() is true only when a Linode node is not Ready", () => {
  assert.equal(needsInstanceState([node("a", { id: 1 }), node("b", { ready: false })]), false);
  assert.equal(needsInstanceState([node("a", { id: 1 }), node("b", { id: 2, ready: false })]), true);
  const unknown: V1Node = { metadata: { name: "u" }, spec: { providerID: "linode://4" }, status: {} };
  assert.equal(needsInstanceState([unknown]), true);
});
