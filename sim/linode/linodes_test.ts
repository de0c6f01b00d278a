import assert from "node:assert/strict";
import {
  getConfigInterface,
  getConfigInterfaces,
  getLinode,
  getLinodeConfig,
  getLinodeConfigs,
  getLinodeFirewalls,
  getLinodeIPs,
  getLinodes,
} from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { failure, oneSubnetVpc, withSim } from "./testdata/test_client.ts";

Deno.test("getLinodes() lists instances with the API's fields", async () => {
  await using sim = await startLinodeSim();
  const a = sim.world.addInstance({ label: "node-a", region: "us-ord", tags: ["k8s"], privateIp: true });
  sim.world.addInstance({ label: "node-b", status: "offline", type: "g6-standard-4" });
  const page = await withSim(sim, () => getLinodes());
  assert.equal(page.results, 2);
  assert.equal(page.pages, 1);
  assert.equal(page.page, 1);
  const first = page.data[0];
  assert.ok(first);
  assert.equal(first.id, a.id);
  assert.equal(first.label, "node-a");
  assert.equal(first.region, "us-ord");
  assert.equal(first.status, "running");
  assert.equal(first.type, "g6-standard-2");
  assert.deepEqual(first.tags, ["k8s"]);
  assert.equal(first.ipv4.length, 2);
  assert.match(first.ipv4[1] ?? "", /^192\.168\.(1[2-9]\d|2[0-5]\d)\.\d+$/);
  assert.match(first.ipv6 ?? "", /^2600:3c03::f03c:[0-9a-f:]+\/128$/);
  for (const key of ["created", "updated", "specs", "alerts", "backups", "hypervisor", "watchdog_enabled"]) {
    assert.ok(key in first, key);
  }
  assert.ok("host_uuid" in first && "lke_cluster_id" in first && "capabilities" in first);
  assert.equal(page.data[1]?.status, "offline");
  assert.equal(page.data[1]?.specs.vcpus, 4);
});

Deno.test("getLinode() returns one instance and 404s with the API's body", async () => {
  await using sim = await startLinodeSim();
  const a = sim.world.addInstance({ label: "one" });
  const got = await withSim(sim, () => getLinode(a.id));
  assert.equal(got.label, "one");
  const missing = await failure(withSim(sim, () => getLinode(999)));
  assert.deepEqual(missing, { status: 404, errors: [{ reason: "Not found" }] });
});

Deno.test("getLinode() without the right token answers 401 Invalid Token", async () => {
  await using sim = await startLinodeSim({ token: "good" });
  const a = sim.world.addInstance();
  const bad = await failure(withSim(sim, () => getLinode(a.id), { token: "wrong" }));
  assert.deepEqual(bad, { status: 401, errors: [{ reason: "Invalid Token" }] });
  const res = await fetch(`${sim.url}/linode/instances`);
  assert.equal(res.status, 401);
  assert.deepEqual(await res.json(), { errors: [{ reason: "Invalid Token" }] });
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}"), 1, "rejected requests are counted");
  assert.equal(sim.calls.count("GET /v4/linode/instances"), 1);
});

Deno.test("getLinodeIPs() returns public, private, VPC and IPv6 addresses", async () => {
  await using sim = await startLinodeSim();
  const { vpcId, subnetId } = oneSubnetVpc(sim);
  const a = sim.world.addInstance({ privateIp: true, vpc: { vpcId, subnetId, nat1to1: true } });
  const ips = await withSim(sim, () => getLinodeIPs(a.id));
  assert.equal(ips.ipv4.public.length, 1);
  assert.equal(ips.ipv4.public[0]?.address, a.ipv4[0]);
  assert.equal(ips.ipv4.public[0]?.prefix, 24);
  assert.deepEqual(ips.ipv4.public[0]?.vpc_nat_1_1, {
    address: "10.0.0.2",
    subnet_id: subnetId,
    vpc_id: vpcId,
  });
  assert.equal(ips.ipv4.private[0]?.address, a.ipv4[1]);
  assert.equal(ips.ipv4.private[0]?.prefix, 17);
  assert.deepEqual(ips.ipv4.shared, []);
  assert.deepEqual(ips.ipv4.reserved, []);
  assert.equal(ips.ipv4.vpc.length, 1);
  assert.equal(ips.ipv4.vpc[0]?.address, "10.0.0.2");
  assert.equal(ips.ipv4.vpc[0]?.gateway, "10.0.0.1");
  assert.equal(ips.ipv4.vpc[0]?.nat_1_1, a.ipv4[0]);
  assert.equal(ips.ipv6?.slaac.address, a.ipv6?.replace("/128", ""));
  assert.match(ips.ipv6?.link_local.address ?? "", /^fe80::/);
  assert.deepEqual(ips.ipv6?.global, []);
});

Deno.test("getLinodeConfigs() and interfaces show the VPC interface on the boot config", async () => {
  await using sim = await startLinodeSim();
  const { vpcId, subnetId } = oneSubnetVpc(sim);
  const a = sim.world.addInstance({ vpc: { vpcId, subnetId, ipv4: "10.0.0.9" } });
  const plain = sim.world.addInstance();
  const configs = await withSim(sim, () => getLinodeConfigs(a.id));
  assert.equal(configs.results, 1);
  const config = configs.data[0];
  assert.ok(config);
  assert.deepEqual(await withSim(sim, () => getLinodeConfig(a.id, config.id)), config);
  const ifaces = await withSim(sim, () => getConfigInterfaces(a.id, config.id));
  assert.deepEqual(ifaces.map((i) => i.purpose), ["public", "vpc"]);
  const vpcIface = ifaces[1];
  assert.ok(vpcIface);
  assert.equal(vpcIface.vpc_id, vpcId);
  assert.equal(vpcIface.subnet_id, subnetId);
  assert.deepEqual(vpcIface.ipv4, { vpc: "10.0.0.9", nat_1_1: null });
  assert.deepEqual(vpcIface.ip_ranges, []);
  assert.deepEqual([ifaces[0]?.ipv4, ifaces[0]?.ip_ranges, ifaces[0]?.ipv6], [null, null, null]);
  assert.equal(vpcIface.active, true);
  assert.deepEqual(await withSim(sim, () => getConfigInterface(a.id, config.id, vpcIface.id)), vpcIface);
  const plainConfigs = await withSim(sim, () => getLinodeConfigs(plain.id));
  assert.deepEqual(plainConfigs.data[0]?.interfaces, []);
  assert.equal((await failure(withSim(sim, () => getLinodeConfig(a.id, 1)))).status, 404);
  assert.equal((await failure(withSim(sim, () => getConfigInterface(a.id, config.id, 1)))).status, 404);
});

Deno.test("world.setStatus() and deleteInstance() show through the API", async () => {
  await using sim = await startLinodeSim();
  const a = sim.world.addInstance();
  sim.world.setStatus(a.id, "shutting_down");
  assert.equal((await withSim(sim, () => getLinode(a.id))).status, "shutting_down");
  assert.equal(sim.world.instance(a.id)?.status, "shutting_down");
  assert.equal(sim.world.deleteInstance(a.id), true);
  assert.equal(sim.world.instance(a.id), undefined);
  assert.equal((await failure(withSim(sim, () => getLinode(a.id)))).status, 404);
  assert.equal((await failure(withSim(sim, () => getLinodeFirewalls(a.id)))).status, 404);
});

Deno.test("world.setIpRanges() seeds ranges with the API's overlap check", async () => {
  await using sim = await startLinodeSim();
  const vpc = oneSubnetVpc(sim);
  const a = sim.world.addInstance({ vpc });
  const b = sim.world.addInstance({ vpc });
  assert.deepEqual(sim.world.setIpRanges(a.id, ["10.100.0.0/24"]), ["10.100.0.0/24"]);
  assert.throws(() => sim.world.setIpRanges(b.id, ["10.100.0.0/23"]), /overlaps/);
  assert.throws(() => sim.world.setIpRanges(sim.world.addInstance().id, ["10.1.0.0/24"]), /no VPC interface/);
  assert.equal(sim.calls.total(), 0, "world calls are not API calls");
});

Deno.test("the API answers unknown routes with 404 and wrong methods with 405, on /v4 and /v4beta", async () => {
  await using sim = await startLinodeSim();
  const a = sim.world.addInstance();
  const auth = { authorization: `Bearer ${sim.token}` };
  const get = await fetch(`${sim.origin}/v4beta/linode/instances/${a.id}`, { headers: auth });
  assert.equal((await get.json()).id, a.id);
  assert.equal(sim.calls.count("GET /v4beta/linode/instances/{id}"), 1, "/v4beta is counted apart");
  const unknown = await fetch(`${sim.url}/linode/nothing`, { headers: auth });
  assert.deepEqual([unknown.status, await unknown.json()], [404, { errors: [{ reason: "Not found" }] }]);
  const notNumeric = await fetch(`${sim.url}/linode/instances/abc`, { headers: auth });
  assert.equal(notNumeric.status, 404);
  await notNumeric.body?.cancel();
  const wrong = await fetch(`${sim.url}/linode/instances/${a.id}/ips`, { method: "DELETE", headers: auth });
  assert.deepEqual([wrong.status, await wrong.json()], [405, { errors: [{ reason: "Method Not Allowed" }] }]);
  const root = await fetch(`${sim.origin}/v3/linode/instances`, { headers: auth });
  assert.equal(root.status, 404);
  await root.body?.cancel();
});
