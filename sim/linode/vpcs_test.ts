import assert from "node:assert/strict";
import { deleteVPC, getSubnet, getSubnets, getVPC, getVPCIPs, getVPCs, getVPCsIPs } from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./testdata/test_client.ts";

async function vpcWorld() {
  const sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "nodes", ipv4: "10.0.0.0/24" }, { label: "extra", ipv4: "10.0.1.0/24" }],
  });
  const other = sim.world.createVpc({
    label: "other",
    region: "us-ord",
    subnets: [{ label: "s", ipv4: "10.9.0.0/24" }],
  });
  const [nodes, extra] = vpc.subnets;
  assert.ok(nodes && extra);
  const a = sim.world.addInstance({
    vpc: { vpcId: vpc.id, subnetId: nodes.id, ipRanges: ["10.192.0.0/24"] },
  });
  const b = sim.world.addInstance({ vpc: { vpcId: vpc.id, subnetId: extra.id }, status: "offline" });
  const c = sim.world.addInstance({ vpc: { vpcId: other.id, subnetId: other.subnets[0]?.id ?? 0 } });
  return { sim, vpc, other, nodes, extra, a, b, c };
}

Deno.test("getVPCs() and getVPC() return VPCs with subnets listing their Linodes", async () => {
  const { sim, vpc, other, nodes, a } = await vpcWorld();
  await using _ = sim;
  const page = await withSim(sim, () => getVPCs());
  assert.deepEqual(page.data.map((v) => v.id), [vpc.id, other.id]);
  const got = await withSim(sim, () => getVPC(vpc.id));
  assert.equal(got.label, "cluster");
  assert.equal(got.region, "us-east");
  assert.equal(got.subnets.length, 2);
  const config = sim.world.instances.get(a.id)?.config;
  const iface = config?.interfaces?.find((i) => i.purpose === "vpc");
  assert.ok(config && iface);
  const want = [{ id: a.id, interfaces: [{ id: iface.id, active: true, config_id: config.id }] }];
  assert.deepEqual(got.subnets[0]?.linodes, want);
  assert.deepEqual((await withSim(sim, () => getSubnet(vpc.id, nodes.id))).linodes, want);
  assert.deepEqual(got.subnets[0]?.nodebalancers, []);
  assert.equal((await failure(withSim(sim, () => getVPC(1)))).status, 404);
});

Deno.test("getSubnets() and getSubnet() page subnets and 404 on a foreign subnet", async () => {
  const { sim, vpc, other, extra, b } = await vpcWorld();
  await using _ = sim;
  const subnets = await withSim(sim, () => getSubnets(vpc.id));
  assert.equal(subnets.results, 2);
  assert.deepEqual(subnets.data.map((s) => s.ipv4), ["10.0.0.0/24", "10.0.1.0/24"]);
  const one = await withSim(sim, () => getSubnet(vpc.id, extra.id));
  assert.equal(one.linodes[0]?.id, b.id);
  assert.equal(one.linodes[0]?.interfaces[0]?.active, false, "offline instance has an inactive interface");
  assert.equal((await failure(withSim(sim, () => getSubnet(other.id, extra.id)))).status, 404);
});

Deno.test("getVPCsIPs() lists addresses and ip_ranges of every VPC", async () => {
  const { sim, vpc, other, nodes, a, b, c } = await vpcWorld();
  await using _ = sim;
  const all = await withSim(sim, () => getVPCsIPs());
  assert.equal(all.results, 4);
  const forA = all.data.filter((ip) => ip.linode_id === a.id);
  assert.equal(forA.length, 2);
  const [addr, range] = forA;
  assert.ok(addr && range);
  assert.equal(addr.address, "10.0.0.2");
  assert.equal(addr.address_range, null);
  assert.equal(addr.vpc_id, vpc.id);
  assert.equal(addr.subnet_id, nodes.id);
  assert.equal(addr.region, "us-east");
  assert.equal(addr.gateway, "10.0.0.1");
  assert.equal(addr.prefix, 24);
  assert.equal(addr.subnet_mask, "255.255.255.0");
  assert.equal(addr.active, true);
  assert.equal(addr.nat_1_1, null);
  assert.equal(typeof addr.config_id, "number");
  assert.equal(typeof addr.interface_id, "number");
  assert.equal(range.address, null);
  assert.equal(range.address_range, "10.192.0.0/24");
  assert.equal(range.interface_id, addr.interface_id);
  assert.equal(all.data.find((ip) => ip.linode_id === b.id)?.active, false);
  assert.equal(all.data.find((ip) => ip.linode_id === c.id)?.vpc_id, other.id);
});

Deno.test("getVPCIPs() lists one VPC, filters, and 404s on an unknown VPC", async () => {
  const { sim, vpc, a, b } = await vpcWorld();
  await using _ = sim;
  const one = await withSim(sim, () => getVPCIPs(vpc.id));
  assert.equal(one.results, 3);
  assert.ok(one.data.every((ip) => ip.vpc_id === vpc.id));
  const filtered = await withSim(sim, () => getVPCIPs(vpc.id, {}, { linode_id: b.id }));
  assert.deepEqual(filtered.data.map((ip) => ip.address), ["10.0.1.2"]);
  const ofA = await withSim(sim, () => getVPCsIPs({}, { linode_id: a.id, active: true }));
  assert.deepEqual(ofA.data.map((ip) => [ip.address, ip.address_range]), [["10.0.0.2", null], [
    null,
    "10.192.0.0/24",
  ]]);
  assert.equal((await failure(withSim(sim, () => getVPCIPs(1)))).status, 404);
  assert.equal(sim.calls.count("GET /v4/vpcs/{id}/ips"), 3);
  assert.equal(sim.calls.count("GET /v4/vpcs/ips"), 1);
});

Deno.test("world.deleteInstance() frees its VPC address for the next instance", async () => {
  const { sim, vpc, nodes, a } = await vpcWorld();
  await using _ = sim;
  sim.world.deleteInstance(a.id);
  assert.deepEqual((await withSim(sim, () => getSubnet(vpc.id, nodes.id))).linodes, []);
  const d = sim.world.addInstance({ vpc: { vpcId: vpc.id, subnetId: nodes.id } });
  const ips = await withSim(sim, () => getVPCIPs(vpc.id, {}, { linode_id: d.id }));
  assert.equal(ips.data[0]?.address, "10.0.0.2");
});

Deno.test("deleteVPC() refuses a VPC in use with 400, deletes an empty one, then answers 404", async () => {
  const { sim, vpc, nodes } = await vpcWorld();
  await using _ = sim;
  const inUse = await failure(withSim(sim, () => deleteVPC(vpc.id)));
  assert.equal(inUse.status, 400);
  for (const l of sim.world.listInstances()) sim.world.deleteInstance(l.id);
  await withSim(sim, () => deleteVPC(vpc.id));
  assert.equal((await failure(withSim(sim, () => getVPC(vpc.id)))).status, 404);
  assert.equal((await failure(withSim(sim, () => getSubnet(vpc.id, nodes.id)))).status, 404);
  assert.equal((await failure(withSim(sim, () => deleteVPC(vpc.id)))).status, 404);
});

Deno.test("POST /vpcs creates a VPC and validates subnets with field errors", async () => {
  await using sim = await startLinodeSim();
  const created = await withSim(
    sim,
    () =>
      rawCall("POST", "/vpcs", {
        label: "made",
        region: "us-east",
        subnets: [{ label: "a", ipv4: "10.5.0.0/24" }],
      }),
  );
  assert.equal((created as { label: string }).label, "made");
  const overlap = await failure(withSim(sim, () =>
    rawCall("POST", "/vpcs", {
      label: "bad",
      region: "us-east",
      subnets: [{ label: "a", ipv4: "10.6.0.0/24" }, { label: "b", ipv4: "10.6.0.0/25" }],
    })));
  assert.deepEqual(overlap.errors, [{ field: "subnets[1].ipv4", reason: "Subnet ranges must not overlap" }]);
  const noRegion = await failure(withSim(sim, () => rawCall("POST", "/vpcs", { label: "x" })));
  assert.deepEqual(noRegion.errors, [{ field: "region", reason: "region is required" }]);
  const badJson = await fetch(`${sim.url}/vpcs`, {
    method: "POST",
    headers: { authorization: `Bearer ${sim.token}` },
    body: "{nope",
  });
  assert.equal(badJson.status, 400);
  assert.deepEqual(await badJson.json(), { errors: [{ reason: "Request body must be valid JSON" }] });
});
