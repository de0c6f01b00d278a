import assert from "node:assert/strict";
import { startLinodeSim } from "../sim/linode/server.ts";
import { LinodeApiError } from "./errors.ts";
import { clientFor } from "./testdata/test_support.ts";

Deno.test("LinodeInterfaceApi.updateVpcRanges() replaces the routed ranges of a VPC Linode interface", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "vpc",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/8" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const linode = sim.world.addInstance({
    label: "n1",
    region: "us-east",
    interfaceGeneration: "linode",
    vpc: { vpcId: vpc.id, subnetId },
  });
  const { client } = clientFor(sim);
  const iface = (await client.interfaces.list(linode.id)).find((i) => i.vpc);
  assert.ok(iface, "the Linode has a VPC interface");
  const ranges = ["10.192.1.0/24", "10.192.2.0/24"];
  const updated = await client.interfaces.updateVpcRanges(linode.id, iface.id, { subnetId, ranges });
  assert.deepEqual(updated.vpc?.ipv4?.ranges, [{ range: "10.192.1.0/24" }, { range: "10.192.2.0/24" }]);
  assert.equal(updated.vpc?.subnet_id, subnetId, "the subnet is kept");
  await client.interfaces.updateVpcRanges(linode.id, iface.id, { subnetId, ranges: [] });
  assert.deepEqual((await client.interfaces.get(linode.id, iface.id)).vpc?.ipv4?.ranges, []);
  assert.equal(sim.calls.count("PUT /v4/linode/instances/{id}/interfaces/{id}"), 2);
});

Deno.test("LinodeInterfaceApi.updateVpcRanges() reports the API's refusal with its field and does not retry", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "vpc",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/16" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const linode = sim.world.addInstance({
    label: "n1",
    region: "us-east",
    interfaceGeneration: "linode",
    vpc: { vpcId: vpc.id, subnetId },
  });
  const { client } = clientFor(sim);
  const iface = (await client.interfaces.list(linode.id)).find((i) => i.vpc);
  assert.ok(iface);
  // A Linode interface's ranges lie inside its subnet (10.0.0.0/16 here).
  await assert.rejects(
    client.interfaces.updateVpcRanges(linode.id, iface.id, { subnetId, ranges: ["10.192.1.0/24"] }),
    (e: unknown) => {
      assert.ok(e instanceof LinodeApiError);
      assert.equal(e.status, 400);
      assert.ok(e.reasons[0]?.field?.startsWith("vpc.ipv4.ranges"), JSON.stringify(e.reasons));
      return true;
    },
  );
  assert.equal(sim.calls.count("PUT /v4/linode/instances/{id}/interfaces/{id}"), 1);
});
