import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { node } from "./testdata/fixtures.ts";
import { nodeBackendFields } from "./controller.ts";

function changed(change: (n: V1Node) => void): boolean {
  const before = node("n1");
  const after = structuredClone(before);
  change(after);
  return nodeBackendFields(before) !== nodeBackendFields(after);
}

const CASES: { name: string; change: (n: V1Node) => void; enqueues: boolean }[] = [
  {
    name: "a kubelet heartbeat",
    change: (n) => n.status?.conditions?.forEach((c) => c.lastHeartbeatTime = new Date(1)),
    enqueues: false,
  },
  { name: "an unrelated label", change: (n) => n.metadata!.labels!["team"] = "a", enqueues: false },
  {
    // Upstream keeps NotReady Nodes in load balancers, so a flapping Node is no reason to sync.
    name: "readiness",
    change: (n) => n.status?.conditions?.forEach((c) => c.status = "False"),
    enqueues: false,
  },
  {
    name: "a deletion timestamp",
    change: (n) => n.metadata!.deletionTimestamp = new Date(1),
    enqueues: true,
  },
  {
    name: "the exclusion label",
    change: (n) => n.metadata!.labels!["node.kubernetes.io/exclude-from-external-load-balancers"] = "",
    enqueues: true,
  },
  {
    name: "the autoscaler's deletion taint",
    change: (n) => n.spec!.taints = [{ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule" }],
    enqueues: true,
  },
  {
    name: "an address",
    change: (n) => n.status!.addresses = [{ type: "InternalIP", address: "192.168.140.9" }],
    enqueues: true,
  },
  {
    name: "the private-ip annotation",
    change: (n) => n.metadata!.annotations!["node.k8s.linode.com/private-ip"] = "192.168.140.9",
    enqueues: true,
  },
];

for (const c of CASES) {
  Deno.test(`nodeBackendFields() ${c.enqueues ? "changes" : "stays"} with ${c.name}`, () => {
    assert.equal(changed(c.change), c.enqueues);
  });
}
