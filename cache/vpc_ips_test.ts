import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { clientFor } from "../linode/test_support.ts";
import { Registry } from "../server/metrics.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { VpcIpCache } from "./vpc_ips.ts";
import { VpcCache } from "./vpcs.ts";

Deno.test("VpcIpCache reuses the resolved VPC list: one GET /vpcs for any number of address refreshes", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  sim.world.addInstance({ label: "n1", vpc: { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id ?? 0 } });
  const { client } = clientFor(sim);
  const clock = new FakeClock();
  const metrics = new Registry();
  const vpcs = new VpcCache(client.vpcs, { vpcNames: ["cluster"] }, { clock, metrics, ttlMs: 60_000 });
  const ips = new VpcIpCache(client.vpcs, vpcs, { clock, metrics, ttlMs: 60_000 });
  for (let i = 0; i < 5; i++) {
    assert.equal((await ips.get()).data.filter((ip) => ip.address).length, 1);
    clock.advance(61_000);
  }
  assert.equal(sim.calls.count("GET /v4/vpcs/{id}/ips"), 5);
  assert.equal(sim.calls.count("GET /v4/vpcs"), 1);
});

Deno.test("VpcIpCache resolves the VPC names again when a resolved VPC answers 404 (replaced VPC)", async () => {
  await using sim = await startLinodeSim();
  const subnets = [{ label: "default", ipv4: "10.0.0.0/24" }];
  const old = sim.world.createVpc({ label: "cluster", region: "us-east", subnets });
  const { client } = clientFor(sim);
  const clock = new FakeClock();
  const metrics = new Registry();
  const vpcs = new VpcCache(client.vpcs, { vpcNames: ["cluster"] }, { clock, metrics });
  const ips = new VpcIpCache(client.vpcs, vpcs, { clock, metrics });
  assert.deepEqual((await ips.get()).data, []);
  sim.world.deleteVpc(old.id);
  const replaced = sim.world.createVpc({ label: "cluster", region: "us-east", subnets });
  sim.world.addInstance({ label: "n1", vpc: { vpcId: replaced.id, subnetId: replaced.subnets[0]?.id ?? 0 } });
  clock.advance(61_000);
  const after = await ips.get();
  assert.equal(after.stale, false);
  assert.deepEqual(after.data.map((ip) => [ip.vpc_id, ip.address]), [[replaced.id, "10.0.0.2"]]);
  assert.equal(sim.calls.count("GET /v4/vpcs"), 2);
});
