import assert from "node:assert/strict";
import { getNodeBalancerConfigNodes, getNodeBalancerConfigs, getNodeBalancers } from "@linode/api-v4";
import { goCcmCreateBody } from "./seed_nodebalancers.ts";
import { startLinodeSim } from "./server.ts";
import { oneSubnetVpc, withSim } from "./testdata/test_client.ts";

Deno.test("world.addNodeBalancer() seeds a Go-CCM-made NodeBalancer at a given IP that the API then shows", async () => {
  await using sim = await startLinodeSim();
  const body = goCcmCreateBody({
    label: "ccm-0123456789ab",
    tags: ["prod-cluster"],
    ports: [{ port: 80, nodePort: 30080 }, { port: 443, nodePort: 30443 }],
    backends: [
      { nodeName: "node-a", ip: "192.168.128.10", status: "UP" },
      { nodeName: "b", ip: "192.168.128.11", status: "DOWN" },
    ],
  });
  const seeded = sim.world.addNodeBalancer(body, { ipv4: "203.0.113.7" });
  assert.equal(seeded.ipv4, "203.0.113.7");
  assert.equal(seeded.hostname, "nb-203-0-113-7.newark.nodebalancer.linode.com");
  assert.equal(sim.calls.total(), 0, "seeding makes no API call");
  const found = await withSim(sim, () => getNodeBalancers({}, { ipv4: "203.0.113.7" }));
  assert.deepEqual(found.data.map((n) => [n.id, n.label, n.tags]), [[seeded.id, "ccm-0123456789ab", [
    "prod-cluster",
  ]]]);
  const configs = (await withSim(sim, () => getNodeBalancerConfigs(seeded.id))).data;
  assert.deepEqual(
    configs.map((c) => [c.port, c.protocol, c.check, c.check_interval, c.check_timeout, c.check_attempts]),
    [
      [80, "tcp", "connection", 5, 3, 2],
      [443, "tcp", "connection", 5, 3, 2],
    ],
  );
  assert.deepEqual(configs[0]?.nodes_status, { up: 1, down: 1 });
  const nodes = (await withSim(sim, () => getNodeBalancerConfigNodes(seeded.id, configs[0]?.id ?? 0))).data;
  assert.deepEqual(nodes.map((n) => [n.label, n.address, n.status, n.mode, n.weight]), [
    ["node-a", "192.168.128.10:30080", "UP", "accept", 100],
    ["node-b", "192.168.128.11:30080", "DOWN", "accept", 100],
  ]);
  assert.deepEqual(seeded.configs[0]?.nodes.map((n) => n.id), nodes.map((n) => n.id));
});

Deno.test("world.addNodeBalancer() validates like the API and refuses a taken address or a bad status", async () => {
  await using sim = await startLinodeSim();
  const { subnetId } = oneSubnetVpc(sim, { ipv4: "10.0.0.0/24" });
  const vpcBody = goCcmCreateBody({
    label: "ccm-vpc000000001",
    ports: [{ port: 53, nodePort: 30053, protocol: "udp" }],
    backends: [{ nodeName: "node-a", ip: "10.0.0.20", subnetId }],
    backendSubnetId: subnetId,
    type: "premium",
  });
  const seeded = sim.world.addNodeBalancer(vpcBody);
  assert.equal(seeded.configs[0]?.nodes[0]?.mode, "none", "UDP nodes have no mode");
  assert.equal(seeded.configs[0]?.nodes[0]?.vpc_config_id, seeded.vpcs[0]?.id);
  assert.throws(
    () => sim.world.addNodeBalancer({ region: "us-east", label: "dup-ip" }, { ipv4: seeded.ipv4 }),
    /in use/,
  );
  const badStatus = {
    region: "us-east",
    label: "bad-status",
    configs: [{ port: 80, nodes: [{ label: "n-1", address: "192.168.128.1:80", status: "up" }] }],
  };
  assert.throws(() => sim.world.addNodeBalancer(badStatus), /Must be one of UP, DOWN, Unknown/);
  assert.equal(sim.world.nodeBalancers().length, 1, "a refused seed leaves nothing behind");
});

Deno.test("/__admin/world/nodebalancers seeds NodeBalancers and sets node statuses over HTTP", async () => {
  await using sim = await startLinodeSim();
  const admin = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${sim.origin}/__admin/${path}`, { method, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const body = goCcmCreateBody({
    label: "ccm-adm",
    ports: [{ port: 80, nodePort: 30080 }],
    backends: [{ nodeName: "n1", ip: "192.168.128.3" }],
  });
  const seeded = await admin("POST", "world/nodebalancers", { ...body, seedIpv4: "198.51.100.9" });
  assert.equal(seeded.status, 200);
  assert.equal(seeded.body.ipv4, "198.51.100.9");
  const config = seeded.body.configs[0];
  const node = config.nodes[0];
  assert.equal(node.status, "Unknown");
  const path = `world/nodebalancers/${seeded.body.id}/configs/${config.id}/nodes/${node.id}/status`;
  assert.equal((await admin("PUT", path, { status: "UP" })).body.status, "UP");
  assert.deepEqual(sim.world.nodeBalancers()[0]?.configs[0]?.nodes_status, { up: 1, down: 0 });
  assert.equal((await admin("PUT", path, { status: "sideways" })).status, 400);
  assert.equal((await admin("POST", "world/nodebalancers", { label: "x" })).body.errors[0].field, "region");
});
