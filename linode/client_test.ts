import assert from "node:assert/strict";
import { LeaseLostError, SwitchFence } from "../common/write_guard.ts";
import { type LinodeSim, startLinodeSim } from "../sim/linode/server.ts";
import { FakeClock } from "../common/clock.ts";
import { LinodeApiError } from "./errors.ts";
import { fileToken } from "./token.ts";
import { clientFor } from "./testdata/test_support.ts";

Deno.test("listInstances() reads 1,234 Linodes in exactly 3 calls of 500", async () => {
  await using sim = await startLinodeSim();
  sim.world.addInstances(1234, (i) => ({ label: `node-${i}` }));
  const { client } = clientFor(sim);
  const all = await client.instances.list();
  assert.equal(all.length, 1234);
  assert.equal(new Set(all.map((l) => l.id)).size, 1234);
  assert.equal(sim.calls.count("GET /v4/linode/instances"), 3);
  assert.equal(sim.calls.total(), 3);
  assert.deepEqual(client.callCounts(), { "GET /linode/instances": 3 });
  assert.ok(sim.calls.log.every((c) => c.path === "/v4/linode/instances"));
});

Deno.test("listInstances() passes the X-Filter through", async () => {
  await using sim = await startLinodeSim();
  sim.world.addInstances(3, (i) => ({ label: `east-${i}`, region: "us-east", tags: ["k8s"] }));
  sim.world.addInstances(2, (i) => ({ label: `west-${i}`, region: "us-west" }));
  const { client } = clientFor(sim);
  const east = await client.instances.list({ region: "us-east" });
  assert.deepEqual(east.map((l) => l.label).sort(), ["east-0", "east-1", "east-2"]);
  const tagged = await client.instances.list({ tags: "k8s", region: "us-east" });
  assert.equal(tagged.length, 3);
  assert.equal(sim.calls.count("GET /v4/linode/instances"), 2);
});

Deno.test("listInstances() fails instead of returning a truncated list", async () => {
  await using sim = await startLinodeSim();
  sim.world.addInstances(1100);
  sim.faults.truncatePage({ route: "/linode/instances", count: 1 }, 10);
  const { client } = clientFor(sim, { maxRetries: 0 });
  await assert.rejects(client.instances.list(), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.kind, "server");
    assert.match(e.message, /^Cannot list linode instances: /);
    return true;
  });
});

Deno.test("getInstance() answers a 404 with a not_found LinodeApiError and no retry", async () => {
  await using sim = await startLinodeSim();
  const { client, clock } = clientFor(sim);
  await assert.rejects(client.instances.get(424242), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.kind, "not_found");
    assert.equal(e.status, 404);
    assert.equal(e.route, "/linode/instances/{id}");
    assert.equal(e.message, "Cannot get linode 424242: HTTP 404 (Not found)");
    return true;
  });
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}"), 1);
  assert.deepEqual(clock.sleeps, []);
});

Deno.test("updateConfigInterface() programs ip_ranges on the VPC interface", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "vpc",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/24" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const linode = sim.world.addInstance({ label: "n1", region: "us-east", vpc: { vpcId: vpc.id, subnetId } });
  const { client } = clientFor(sim);
  const [config] = await client.instances.listConfigs(linode.id);
  const iface = config?.interfaces?.find((i) => i.purpose === "vpc");
  assert.ok(config && iface, "the sim gives the Linode a config with a VPC interface");
  await client.instances.updateConfigInterface(linode.id, config.id, iface.id, {
    ip_ranges: ["10.1.2.0/24"],
  });
  assert.deepEqual(sim.world.ipRanges(linode.id), ["10.1.2.0/24"]);
  const ips = await client.vpcs.listIps(vpc.id);
  assert.ok(ips.some((ip) => ip.address_range === "10.1.2.0/24" && ip.linode_id === linode.id));
});

Deno.test("createFirewall() reports a 400 with its field errors and does not retry", async () => {
  await using sim = await startLinodeSim();
  const { client, clock } = clientFor(sim);
  const rules = {
    inbound_policy: "DROP" as const,
    outbound_policy: "ACCEPT" as const,
    inbound: [],
    outbound: [],
  };
  await client.firewalls.create({ label: "ccm-fw", rules });
  await assert.rejects(client.firewalls.create({ label: "ccm-fw", rules }), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.kind, "client");
    assert.equal(e.status, 400);
    assert.deepEqual(e.reasons, [{ field: "label", reason: "Label must be unique" }]);
    assert.equal(e.message, "Cannot create firewall: HTTP 400 (label: Label must be unique)");
    return true;
  });
  assert.equal(sim.calls.count("POST /v4/networking/firewalls"), 2);
  assert.deepEqual(clock.sleeps, []);
});

Deno.test("createNodeBalancer() sends configs as given (api-v4 validation bypassed); the API wants a node in each", async () => {
  await using sim = await startLinodeSim();
  const { client } = clientFor(sim);
  await assert.rejects(
    client.nodeBalancers.create({
      label: "ccm-abc",
      region: "us-east",
      configs: [{ port: 80, protocol: "tcp", nodes: [] }],
    }),
    (e: unknown) => {
      assert.ok(e instanceof LinodeApiError, "the API's answer, not api-v4's client-side refusal");
      assert.deepEqual(e.reasons.map((r) => r.field), ["configs[0].nodes"]);
      return true;
    },
  );
  const nb = await client.nodeBalancers.create({
    label: "ccm-abc",
    region: "us-east",
    configs: [{ port: 80, protocol: "tcp", nodes: [{ label: "node-1", address: "192.168.130.10:30080" }] }],
  });
  const configs = await client.nodeBalancers.listConfigs(nb.id);
  assert.deepEqual(configs.map((c) => c.port), [80]);
  const config = configs[0];
  assert.ok(config);
  const node = await client.nodeBalancers.createConfigNode(nb.id, config.id, {
    label: "node-2",
    address: "192.168.130.11:30080",
  });
  const nodes = await client.nodeBalancers.listConfigNodes(nb.id, config.id);
  assert.deepEqual(nodes.map((n) => n.id).slice(1), [node.id]);
  await client.nodeBalancers.delete(nb.id);
  assert.equal(sim.world.nodeBalancers().length, 0);
  assert.equal(sim.calls.count("POST /v4/nodebalancers"), 2);
});

Deno.test("LinodeClient() instances on two sims keep their own URL and token", async () => {
  await using a = await startLinodeSim({ token: "token-of-sim-a" });
  await using b = await startLinodeSim({ token: "token-of-sim-b" });
  a.world.addInstances(2, (i) => ({ label: `a-${i}` }));
  b.world.addInstances(3, (i) => ({ label: `b-${i}` }));
  const ca = clientFor(a).client;
  const cb = clientFor(b).client;
  const [la, lb] = await Promise.all([ca.instances.list(), cb.instances.list()]);
  assert.deepEqual(la.map((l) => l.label).sort(), ["a-0", "a-1"]);
  assert.deepEqual(lb.map((l) => l.label).sort(), ["b-0", "b-1", "b-2"]);
  const wrong = clientFor({ url: a.url, token: b.token }).client;
  await assert.rejects(
    wrong.instances.list(),
    (e: unknown) => e instanceof LinodeApiError && e.kind === "auth",
  );
});

Deno.test("LinodeClient() refuses writes when not leading, before anything is sent", async () => {
  await using sim = await startLinodeSim();
  const linode = sim.world.addInstance({ label: "n1" });
  const fence = new SwitchFence(false);
  const { client } = clientFor(sim, { fence });
  await assert.rejects(
    client.instances.updateConfigInterface(linode.id, 1, 1, { ip_ranges: [] }),
    LeaseLostError,
  );
  await assert.rejects(client.nodeBalancers.delete(1), LeaseLostError);
  assert.equal(sim.calls.total(), 0);
  assert.equal((await client.instances.get(linode.id)).label, "n1", "reads need no leadership");
});

Deno.test("LinodeClient() asks the fence again before each retry of a write", async () => {
  await using sim = await startLinodeSim();
  const fence = new SwitchFence(true);
  const { client, clock } = clientFor(sim, { fence });
  sim.faults.error(503, { method: "DELETE", count: 1 });
  clock.onSleep = () => fence.set(false);
  await assert.rejects(client.firewalls.delete(7), LeaseLostError);
  assert.equal(sim.calls.count("DELETE /v4/networking/firewalls/{id}"), 1);
});

Deno.test("LinodeClient() sends every call to the version in its base URL", async () => {
  await using sim = await startLinodeSim();
  const beta = clientFor({ url: sim.url.replace(/\/v4$/, "/v4beta"), token: sim.token }).client;
  const stable = clientFor(sim).client;
  await beta.instances.list();
  await stable.firewalls.list();
  assert.equal(sim.calls.count("GET /v4beta/linode/instances"), 1);
  assert.equal(sim.calls.count("GET /v4/networking/firewalls"), 1, "api-v4 asks /v4beta; LINODE_URL wins");
});

Deno.test("LinodeClient() sends a rotated token file's new token", async () => {
  await using sim = await startLinodeSim();
  const dir = await Deno.makeTempDir({ prefix: "ccm-client-token-" });
  try {
    const path = `${dir}/token`;
    await Deno.writeTextFile(path, "revoked-token\n");
    const clock = new FakeClock();
    const { client } = clientFor(sim, { token: fileToken(path, { clock, minCheckIntervalMs: 1000 }) });
    await assert.rejects(
      client.instances.list(),
      (e: unknown) => e instanceof LinodeApiError && e.kind === "auth",
    );
    await Deno.writeTextFile(path, `${sim.token}\n`);
    await clock.advance(1000);
    assert.deepEqual(await client.instances.list(), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("LinodeClient sends its userAgent on every request, reads and writes alike", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "v",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/24" }],
  });
  const linode = sim.world.addInstance({
    region: "us-east",
    vpc: { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id ?? 0 },
  });
  const agent = "linode-cloud-controller-manager/0.1.0 (host_1)";
  const { client } = clientFor(sim, { userAgent: agent });
  const [config] = await client.instances.listConfigs(linode.id);
  const iface = config?.interfaces?.find((i) => i.purpose === "vpc");
  assert.ok(config && iface);
  await client.instances.updateConfigInterface(linode.id, config.id, iface.id, {
    ip_ranges: ["10.1.2.0/24"],
  });
  await clientFor(sim).client.vpcs.list();
  // Without one, api-v4's own: the emulator tells the two clients apart.
  assert.deepEqual(sim.calls.log.map((c) => `${c.method} ${c.userAgent}`), [
    `GET ${agent}`,
    `PUT ${agent}`,
    "GET linodejs",
  ]);
});

/** A Linode with a VPC Linode interface (`interface_generation: "linode"`) in a subnet of `ipv4`. */
function linodeOnVpc(sim: LinodeSim, ipv4: string): { linodeId: number; subnetId: number } {
  const vpc = sim.world.createVpc({ label: "vpc", region: "us-east", subnets: [{ label: "s", ipv4 }] });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const linode = sim.world.addInstance({
    label: "n1",
    region: "us-east",
    interfaceGeneration: "linode",
    vpc: { vpcId: vpc.id, subnetId },
  });
  return { linodeId: linode.id, subnetId };
}

Deno.test("LinodeInterfaceApi.updateVpcRanges() replaces the routed ranges of a VPC Linode interface", async () => {
  await using sim = await startLinodeSim();
  const { linodeId, subnetId } = linodeOnVpc(sim, "10.0.0.0/8");
  const { client } = clientFor(sim);
  const iface = (await client.interfaces.list(linodeId)).find((i) => i.vpc);
  assert.ok(iface, "the Linode has a VPC interface");
  const ranges = ["10.192.1.0/24", "10.192.2.0/24"];
  const updated = await client.interfaces.updateVpcRanges(linodeId, iface.id, { ranges });
  assert.deepEqual(updated.vpc?.ipv4?.ranges, [{ range: "10.192.1.0/24" }, { range: "10.192.2.0/24" }]);
  assert.equal(updated.vpc?.subnet_id, subnetId, "the subnet is kept");
  const sent = sim.calls.log.find((c) => c.method === "PUT")?.body;
  assert.deepEqual(sent, { vpc: { ipv4: { ranges: ranges.map((range) => ({ range })) } } }, "no subnet_id");
  await client.interfaces.updateVpcRanges(linodeId, iface.id, { ranges: [] });
  assert.deepEqual((await client.interfaces.get(linodeId, iface.id)).vpc?.ipv4?.ranges, []);
  assert.equal(sim.calls.count("PUT /v4/linode/instances/{id}/interfaces/{id}"), 2);
});

Deno.test("LinodeInterfaceApi.updateVpcRanges() reports the API's refusal with its field and does not retry", async () => {
  await using sim = await startLinodeSim();
  const { linodeId } = linodeOnVpc(sim, "10.0.0.0/16");
  const { client } = clientFor(sim);
  const iface = (await client.interfaces.list(linodeId)).find((i) => i.vpc);
  assert.ok(iface);
  // A Linode interface's ranges lie inside its subnet (10.0.0.0/16 here).
  await assert.rejects(
    client.interfaces.updateVpcRanges(linodeId, iface.id, { ranges: ["10.192.1.0/24"] }),
    (e: unknown) => {
      assert.ok(e instanceof LinodeApiError);
      assert.equal(e.status, 400);
      assert.ok(e.reasons[0]?.field?.startsWith("vpc.ipv4.ranges"), JSON.stringify(e.reasons));
      return true;
    },
  );
  assert.equal(sim.calls.count("PUT /v4/linode/instances/{id}/interfaces/{id}"), 1);
});
