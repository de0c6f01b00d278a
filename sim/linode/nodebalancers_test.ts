import assert from "node:assert/strict";
import {
  createNodeBalancer,
  createNodeBalancerConfig,
  createNodeBalancerConfigNode,
  deleteNodeBalancer,
  deleteNodeBalancerConfig,
  deleteNodeBalancerConfigNode,
  getNodeBalancer,
  getNodeBalancerConfig,
  getNodeBalancerConfigNode,
  getNodeBalancerConfigNodes,
  getNodeBalancerConfigs,
  getNodeBalancers,
  rebuildNodeBalancerConfig,
  updateNodeBalancer,
  updateNodeBalancerConfig,
  updateNodeBalancerConfigNode,
} from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./test_client.ts";

/** A node body as api-v4 takes it: address and port apart (it joins them as "ip:port"). */
function node(label: string, address: string, port = 30080) {
  return { label, address, port, weight: 100, mode: "accept" as const };
}

async function createOne(sim: LinodeSim) {
  return await withSim(sim, () =>
    createNodeBalancer({
      label: "svc-web",
      region: "us-east",
      tags: ["kubernetes"],
      client_conn_throttle: 5,
      configs: [
        {
          port: 80,
          protocol: "tcp",
          algorithm: "roundrobin",
          nodes: [node("n-1", "192.168.128.2"), node("n-2", "10.0.0.3")],
        },
        { port: 443, protocol: "tcp", nodes: [node("n-1", "192.168.128.2", 30443)] },
      ],
    }));
}

Deno.test("createNodeBalancer() creates configs and nodes inline with generated fields", async () => {
  await using sim = await startLinodeSim();
  const nb = await createOne(sim);
  assert.equal(nb.label, "svc-web");
  assert.equal(nb.region, "us-east");
  assert.match(nb.ipv4, /^172\.232\.\d+\.\d+$/);
  assert.match(nb.hostname, /^nb-172-232-\d+-\d+\.newark\.nodebalancer\.linode\.com$/);
  assert.match(nb.ipv6 ?? "", /^2600:3c03:1::/);
  assert.deepEqual(nb.transfer, { in: 0, out: 0, total: 0 });
  assert.equal(nb.client_conn_throttle, 5);
  assert.deepEqual(nb.tags, ["kubernetes"]);
  assert.equal(nb.type, "common");
  assert.ok(nb.created && nb.updated);
  const configs = await withSim(sim, () => getNodeBalancerConfigs(nb.id));
  assert.deepEqual(configs.data.map((c) => c.port), [80, 443]);
  assert.deepEqual(configs.data[0]?.nodes_status, { up: 2, down: 0 });
  const nodes = await withSim(sim, () => getNodeBalancerConfigNodes(nb.id, configs.data[0]?.id ?? 0));
  assert.deepEqual(nodes.data.map((n) => [n.label, n.address, n.mode, n.weight]), [
    ["n-1", "192.168.128.2:30080", "accept", 100],
    ["n-2", "10.0.0.3:30080", "accept", 100],
  ]);
  assert.equal(nodes.data[0]?.nodebalancer_id, nb.id);
  const snap = sim.world.nodeBalancers();
  assert.equal(snap.length, 1);
  assert.equal(snap[0]?.configs[1]?.nodes[0]?.address, "192.168.128.2:30443");
});

Deno.test("getNodeBalancers(), getNodeBalancer(), updateNodeBalancer() and deleteNodeBalancer() work end to end", async () => {
  await using sim = await startLinodeSim();
  const nb = await createOne(sim);
  // The API names an unlabelled NodeBalancer itself; api-v4 insists on a label, so go raw.
  const other = (await withSim(sim, () => rawCall("POST", "/nodebalancers", { region: "us-ord" }))) as {
    id: number;
    label: string;
  };
  assert.equal(other.label, `nodebalancer${other.id}`);
  const list = await withSim(sim, () => getNodeBalancers({}, { label: "svc-web" }));
  assert.deepEqual(list.data.map((n) => n.id), [nb.id]);
  const updated = await withSim(
    sim,
    () => updateNodeBalancer(nb.id, { label: "svc-web-2", tags: ["a", "b"] }),
  );
  assert.equal(updated.label, "svc-web-2");
  assert.deepEqual((await withSim(sim, () => getNodeBalancer(nb.id))).tags, ["a", "b"]);
  const dupLabel = await failure(withSim(sim, () => updateNodeBalancer(other.id, { label: "svc-web-2" })));
  assert.deepEqual(dupLabel, { status: 400, errors: [{ field: "label", reason: "Label must be unique" }] });
  await withSim(sim, () => deleteNodeBalancer(nb.id));
  assert.equal((await failure(withSim(sim, () => getNodeBalancer(nb.id)))).status, 404);
  assert.equal((await failure(withSim(sim, () => deleteNodeBalancer(nb.id)))).status, 404);
  assert.deepEqual(sim.world.nodeBalancers().map((n) => n.id), [other.id]);
  assert.equal(sim.calls.count("DELETE /v4/nodebalancers/{id}"), 2);
});

Deno.test("createNodeBalancer() rejects bad bodies with field errors", async () => {
  await using sim = await startLinodeSim();
  const post = (body: unknown) => failure(withSim(sim, () => rawCall("POST", "/nodebalancers", body)));
  assert.deepEqual((await post({ label: "x-ok" })).errors, [{
    field: "region",
    reason: "region is required",
  }]);
  assert.equal((await post({ region: "us-east", label: "no" })).errors[0]?.field, "label");
  const dupPort = await post({ region: "us-east", configs: [{ port: 80 }, { port: 80, protocol: "http" }] });
  assert.deepEqual(dupPort.errors, [{ field: "configs[1].port", reason: "Port 80 is already configured" }]);
  const publicNode = await post({
    region: "us-east",
    configs: [{ port: 80, nodes: [{ label: "node-1", address: "45.79.1.2:80" }] }],
  });
  assert.deepEqual(publicNode.errors, [{
    field: "configs[0].nodes[0].address",
    reason: "Must be a private IPv4 address",
  }]);
  const noPort = await post({
    region: "us-east",
    configs: [{ port: 80, nodes: [{ label: "node-1", address: "10.0.0.1" }] }],
  });
  assert.equal(noPort.errors[0]?.field, "configs[0].nodes[0].address");
  const badPort = await post({ region: "us-east", configs: [{ port: 70000 }] });
  assert.equal(badPort.errors[0]?.field, "configs[0].port");
  const https = await post({ region: "us-east", configs: [{ port: 443, protocol: "https" }] });
  assert.equal(https.errors[0]?.field, "configs[0].ssl_cert");
  const udpAndTcp = await withSim(
    sim,
    () =>
      rawCall("POST", "/nodebalancers", {
        region: "us-east",
        configs: [{ port: 53, protocol: "udp" }, { port: 53, protocol: "tcp" }],
      }),
  );
  assert.equal(typeof (udpAndTcp as { id: number }).id, "number", "UDP and TCP may share a port");
  assert.equal(sim.world.nodeBalancers().length, 1, "failed creates leave nothing behind");
});

Deno.test("NodeBalancer config functions create, get, update and delete configs", async () => {
  await using sim = await startLinodeSim();
  const nb = await createOne(sim);
  const created = await withSim(
    sim,
    () =>
      createNodeBalancerConfig(nb.id, {
        port: 8080,
        protocol: "http",
        check: "http",
        check_path: "/healthz",
        nodes: [node("n-9", "10.0.0.9")],
      }),
  );
  assert.equal(created.port, 8080);
  assert.equal(created.check_path, "/healthz");
  assert.equal(created.nodebalancer_id, nb.id);
  const got = await withSim(sim, () => getNodeBalancerConfig(nb.id, created.id));
  assert.deepEqual(got, created);
  const updated = await withSim(
    sim,
    () => updateNodeBalancerConfig(nb.id, created.id, { port: 8081, algorithm: "leastconn" }),
  );
  assert.equal(updated.port, 8081);
  assert.equal(updated.algorithm, "leastconn");
  assert.equal(updated.check_path, "/healthz", "PUT keeps fields it does not name");
  const taken = await failure(withSim(sim, () => updateNodeBalancerConfig(nb.id, created.id, { port: 80 })));
  assert.deepEqual(taken.errors, [{ field: "port", reason: "Port 80 is already configured" }]);
  await withSim(sim, () => deleteNodeBalancerConfig(nb.id, created.id));
  assert.equal((await failure(withSim(sim, () => getNodeBalancerConfig(nb.id, created.id)))).status, 404);
  assert.equal((await withSim(sim, () => getNodeBalancerConfigs(nb.id))).results, 2);
});

Deno.test("NodeBalancer node functions create, get, update and delete nodes", async () => {
  await using sim = await startLinodeSim();
  const nb = await createOne(sim);
  const configId = (await withSim(sim, () => getNodeBalancerConfigs(nb.id))).data[0]?.id ?? 0;
  const created = await withSim(
    sim,
    () => createNodeBalancerConfigNode(nb.id, configId, node("n-3", "192.168.128.7", 31000)),
  );
  assert.equal(created.address, "192.168.128.7:31000");
  assert.equal(created.config_id, configId);
  assert.deepEqual(await withSim(sim, () => getNodeBalancerConfigNode(nb.id, configId, created.id)), created);
  const updated = await withSim(
    sim,
    () =>
      updateNodeBalancerConfigNode(nb.id, configId, created.id, {
        ...node("n-3", "192.168.128.8", 31001),
        mode: "drain",
      }),
  );
  assert.equal(updated.address, "192.168.128.8:31001");
  assert.equal(updated.mode, "drain");
  const partial = await withSim(
    sim,
    () => rawCall("PUT", `/nodebalancers/${nb.id}/configs/${configId}/nodes/${created.id}`, { weight: 7 }),
  );
  assert.deepEqual(partial, { ...updated, weight: 7 });
  await withSim(sim, () => deleteNodeBalancerConfigNode(nb.id, configId, created.id));
  assert.equal(
    (await failure(withSim(sim, () => getNodeBalancerConfigNode(nb.id, configId, created.id)))).status,
    404,
  );
  assert.equal((await withSim(sim, () => getNodeBalancerConfigNodes(nb.id, configId))).results, 2);
});

Deno.test("rebuildNodeBalancerConfig() replaces the node set; nodes sent with an id keep it", async () => {
  await using sim = await startLinodeSim();
  const nb = await createOne(sim);
  const configId = (await withSim(sim, () => getNodeBalancerConfigs(nb.id))).data[0]?.id ?? 0;
  const before = (await withSim(sim, () => getNodeBalancerConfigNodes(nb.id, configId))).data;
  const keep = before[0];
  assert.ok(keep);
  // api-v4's rebuild drops node ids, so send the body raw to keep one.
  const rebuilt = await withSim(
    sim,
    () =>
      rawCall("POST", `/nodebalancers/${nb.id}/configs/${configId}/rebuild`, {
        port: 80,
        protocol: "tcp",
        check_timeout: 5,
        nodes: [{ id: keep.id, label: "n-1", address: "192.168.128.2:30081" }, {
          label: "n-4",
          address: "10.0.0.4:30080",
        }],
      }),
  );
  assert.equal((rebuilt as { check_timeout: number }).check_timeout, 5);
  const after = (await withSim(sim, () => getNodeBalancerConfigNodes(nb.id, configId))).data;
  assert.equal(after.length, 2);
  assert.deepEqual(after.map((n) => n.address), ["192.168.128.2:30081", "10.0.0.4:30080"]);
  assert.equal(after[0]?.id, keep.id);
  assert.ok(!after.some((n) => n.id === before[1]?.id), "the node left out is gone");
  const viaClient = await withSim(
    sim,
    () =>
      rebuildNodeBalancerConfig(nb.id, configId, {
        port: 80,
        protocol: "tcp",
        nodes: [node("n-5", "10.0.0.5")],
      }),
  );
  assert.equal(viaClient.id, configId);
  const last = (await withSim(sim, () => getNodeBalancerConfigNodes(nb.id, configId))).data;
  assert.deepEqual(last.map((n) => n.label), ["n-5"]);
  const unknownId = await failure(
    withSim(sim, () =>
      rawCall("POST", `/nodebalancers/${nb.id}/configs/${configId}/rebuild`, {
        nodes: [{ id: 1, label: "n-1", address: "10.0.0.1:1" }],
      })),
  );
  assert.equal(unknownId.errors[0]?.field, "nodes[0].id");
  assert.equal(sim.calls.count("POST /v4/nodebalancers/{id}/configs/{id}/rebuild"), 3);
});
