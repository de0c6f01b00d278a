import assert from "node:assert/strict";
import { getNodeBalancerConfigNodes, rebuildNodeBalancerConfig } from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./testdata/test_client.ts";

Deno.test("rebuildNodeBalancerConfig() updates nodes sent with an id, creates the others and deletes the rest", async () => {
  await using sim = await startLinodeSim();
  const nb = await withSim(
    sim,
    () => rawCall("POST", "/nodebalancers", { label: "svc-r", region: "us-east" }),
  );
  const nbId = (nb as { id: number }).id;
  const config = await withSim(sim, () =>
    rawCall("POST", `/nodebalancers/${nbId}/configs`, {
      port: 80,
      protocol: "tcp",
      nodes: [
        { label: "n-1", address: "192.168.128.2:30080" },
        { label: "n-2", address: "192.168.128.3:30080" },
        { label: "n-3", address: "192.168.128.4:30080" },
      ],
    }));
  const configId = Number((config as { id: number }).id);
  const before = (await withSim(sim, () => getNodeBalancerConfigNodes(nbId, configId))).data;
  const [n1, n2] = before;
  assert.ok(n1 && n2);
  sim.world.setNodeStatus(nbId, configId, n1.id, "UP");
  sim.world.setNodeStatus(nbId, configId, n2.id, "UP");
  const rebuild = (body: unknown) =>
    withSim(sim, () => rawCall("POST", `/nodebalancers/${nbId}/configs/${configId}/rebuild`, body));
  const rebuilt = await rebuild({
    port: 80,
    protocol: "tcp",
    check: "connection",
    check_interval: 10,
    check_timeout: 5,
    nodes: [
      { id: n1.id, label: "n-1", address: "192.168.128.2:30080", weight: 50 },
      { id: n2.id, label: "n-2", address: "192.168.128.9:30080" },
      { label: "n-4", address: "192.168.128.5:30080" },
    ],
  }) as Record<string, unknown>;
  assert.deepEqual([rebuilt.id, rebuilt.check, rebuilt.check_timeout], [configId, "connection", 5]);
  const after = (await withSim(sim, () => getNodeBalancerConfigNodes(nbId, configId))).data;
  assert.deepEqual(after.map((n) => [n.id === n1.id, n.id === n2.id, n.address, n.weight, n.status]), [
    [true, false, "192.168.128.2:30080", 50, "UP"],
    [false, true, "192.168.128.9:30080", 100, "Unknown"],
    [false, false, "192.168.128.5:30080", 100, "Unknown"],
  ]);
  assert.ok(!after.some((n) => n.id === before[2]?.id), "the node left out is deleted");
  assert.deepEqual(
    ((await withSim(sim, () => rawCall("GET", `/nodebalancers/${nbId}/configs/${configId}`))) as {
      nodes_status: unknown;
    }).nodes_status,
    {
      up: 1,
      down: 0,
    },
  );
  const unknownId = await failure(rebuild({ nodes: [{ id: 1, label: "n-1", address: "192.168.128.2:1" }] }));
  assert.deepEqual(unknownId.errors, [{ field: "nodes[0].id", reason: "Node not found in this config" }]);
  assert.deepEqual((await failure(rebuild({ port: 80 }))).errors, [{
    field: "nodes",
    reason: "nodes is required",
  }]);
  const duplicate = await failure(rebuild({
    nodes: [{ label: "n-1", address: "192.168.128.2:1" }, { label: "n-2", address: "192.168.128.2:1" }],
  }));
  assert.equal(duplicate.errors[0]?.field, "nodes[1].address");
  // api-v4 joins address and port itself (and drops node ids).
  const n5 = { label: "n-5", address: "192.168.128.6", port: 80 };
  const viaClient = await withSim(
    sim,
    () =>
      rebuildNodeBalancerConfig(nbId, configId, {
        port: 80,
        protocol: "tcp",
        nodes: [n5],
      }),
  );
  assert.equal(viaClient.id, configId);
  const last = (await withSim(sim, () => getNodeBalancerConfigNodes(nbId, configId))).data;
  assert.deepEqual(last.map((n) => n.label), ["n-5"]);
  assert.equal(sim.calls.count("POST /v4/nodebalancers/{id}/configs/{id}/rebuild"), 5);
});
