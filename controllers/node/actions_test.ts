import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { UNINITIALIZED_TAINT_KEY } from "./addresses.ts";
import { nodeUpdateAction } from "./cloud_node.ts";
import { deleteNodeAction, shutdownTaintAction } from "./lifecycle.ts";

function node(o: { uninitialised?: boolean; labels?: Record<string, string> } = {}): V1Node {
  return {
    metadata: { name: "node-4", labels: o.labels ?? {} },
    spec: { taints: o.uninitialised ? [{ key: UNINITIALIZED_TAINT_KEY, effect: "NoSchedule" }] : [] },
    status: { addresses: [{ type: "Hostname", address: "node-4" }] },
  };
}

Deno.test("nodeUpdateAction() names an initialisation with every field it sets, old and new", () => {
  const action = nodeUpdateAction(node({ uninitialised: true }), {
    addresses: [{ type: "Hostname", address: "node-4" }, { type: "InternalIP", address: "10.0.0.4" }],
    patch: {
      metadata: { labels: { "topology.kubernetes.io/region": "us-east" } },
      spec: { providerID: "linode://4", taints: [] },
    },
  });
  assert.deepEqual(action, {
    action: "initialise-node",
    object: "node-4",
    changes: [
      {
        field: "status.addresses",
        old: ["Hostname:node-4"],
        new: ["Hostname:node-4", "InternalIP:10.0.0.4"],
      },
      { field: "metadata.labels[topology.kubernetes.io/region]", old: null, new: "us-east" },
      { field: "spec.providerID", old: null, new: "linode://4" },
      { field: "spec.taints", old: [`${UNINITIALIZED_TAINT_KEY}:NoSchedule`], new: [] },
    ],
  });
});

Deno.test("nodeUpdateAction() names a label drift on an initialised Node, and nothing when in line", () => {
  const drifted = node({ labels: { "topology.kubernetes.io/region": "us-west" } });
  const plan = { patch: { metadata: { labels: { "topology.kubernetes.io/region": "us-east" } } } };
  assert.deepEqual(nodeUpdateAction(drifted, plan)?.action, "update-node");
  assert.deepEqual(nodeUpdateAction(drifted, plan)?.changes, [
    { field: "metadata.labels[topology.kubernetes.io/region]", old: "us-west", new: "us-east" },
  ]);
  assert.equal(nodeUpdateAction(drifted, {}), undefined);
});

Deno.test("shutdownTaintAction() and deleteNodeAction() name the lifecycle writes", () => {
  const taint = { key: "node.cloudprovider.kubernetes.io/shutdown", effect: "NoSchedule" };
  assert.deepEqual(shutdownTaintAction(node(), [taint], true).changes, [
    { field: "spec.taints", old: [], new: ["node.cloudprovider.kubernetes.io/shutdown:NoSchedule"] },
  ]);
  assert.equal(shutdownTaintAction(node(), [], false).action, "remove-shutdown-taint");
  assert.deepEqual(deleteNodeAction(node(), 4), {
    action: "delete-node",
    object: "node-4",
    changes: [{ field: "linode", old: "4", new: null }],
  });
});
