import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { FakeClock } from "../common/clock.ts";
import { startKubeSim } from "./kube/server.ts";
import { KUBELET_VERSION, kubeletNode, registerNode, setNodeReady, UNINITIALIZED_TAINT } from "./kubelet.ts";

function readyCondition(node: unknown) {
  return (node as V1Node).status?.conditions?.find((c) => c.type === "Ready");
}

Deno.test("kubeletNode() reports system info, capacity and a timestamped Ready condition", () => {
  const node = kubeletNode("n1", { nowMs: Date.parse("2026-01-01T00:00:00.500Z") });
  assert.deepEqual(node.spec?.taints, [UNINITIALIZED_TAINT]);
  assert.equal(node.status?.nodeInfo?.kubeletVersion, KUBELET_VERSION);
  assert.equal(node.status?.nodeInfo?.operatingSystem, "linux");
  assert.match(
    node.status?.nodeInfo?.systemUUID ?? "",
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  );
  assert.equal(kubeletNode("n1").status?.nodeInfo?.machineID, node.status?.nodeInfo?.machineID);
  assert.notEqual(kubeletNode("n2").status?.nodeInfo?.machineID, node.status?.nodeInfo?.machineID);
  assert.equal(node.status?.capacity?.pods, "110");
  const ready = readyCondition(node);
  assert.equal(ready?.status, "True");
  assert.equal(String(ready?.lastHeartbeatTime), "2026-01-01T00:00:00Z");
  assert.equal(String(ready?.lastTransitionTime), "2026-01-01T00:00:00Z");
  const custom = kubeletNode("n1", { ready: false, nodeInfo: { osImage: "Ubuntu 24.04.1 LTS" } });
  assert.equal(readyCondition(custom)?.status, "False");
  assert.equal(custom.status?.nodeInfo?.osImage, "Ubuntu 24.04.1 LTS");
  assert.equal(custom.status?.nodeInfo?.kernelVersion, node.status?.nodeInfo?.kernelVersion);
});

Deno.test("setNodeReady() beats the heartbeat and moves lastTransitionTime only when the status changes", async () => {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  await using kube = await startKubeSim({ clock });
  registerNode(kube, kubeletNode("n1", { nowMs: clock.now() }));
  await clock.advance(40_000);
  setNodeReady(kube, "n1", true);
  const same = readyCondition(kube.store.get("nodes", "n1"));
  assert.equal(same?.lastHeartbeatTime, "2026-01-01T00:00:40Z");
  assert.equal(same?.lastTransitionTime, "2026-01-01T00:00:00Z");
  await clock.advance(20_000);
  setNodeReady(kube, "n1", false);
  const lost = readyCondition(kube.store.get("nodes", "n1"));
  assert.equal(lost?.status, "Unknown");
  assert.equal(lost?.reason, "NodeStatusUnknown");
  assert.equal(lost?.lastTransitionTime, "2026-01-01T00:01:00Z");
});

Deno.test("kubeletNode() with --node-ip annotates it and lists it as InternalIP before the hostname", () => {
  const node = kubeletNode("n1", { nodeIp: "10.0.0.5,2600:3c03::1" });
  assert.equal(node.metadata?.annotations?.["alpha.kubernetes.io/provided-node-ip"], "10.0.0.5,2600:3c03::1");
  assert.deepEqual(node.status?.addresses, [
    { type: "InternalIP", address: "10.0.0.5" },
    { type: "InternalIP", address: "2600:3c03::1" },
    { type: "Hostname", address: "n1" },
  ]);
  assert.deepEqual(kubeletNode("n1").status?.addresses, [{ type: "Hostname", address: "n1" }]);
});
