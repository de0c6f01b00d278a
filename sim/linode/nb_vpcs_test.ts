import assert from "node:assert/strict";
import { getNodeBalancerVPCConfigBeta, getNodeBalancerVPCConfigsBeta, getVPC } from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, oneSubnetVpc, rawCall, withSim } from "./testdata/test_client.ts";

function create(sim: LinodeSim, body: unknown) {
  return withSim(sim, () => rawCall("POST", "/nodebalancers", body)) as Promise<
    { id: number; [k: string]: unknown }
  >;
}

function refused(sim: LinodeSim, body: unknown) {
  return failure(withSim(sim, () => rawCall("POST", "/nodebalancers", body)));
}

Deno.test("createNodeBalancer() with vpcs attaches a backend range that /nodebalancers/{id}/vpcs lists", async () => {
  await using sim = await startLinodeSim();
  const { vpcId, subnetId } = oneSubnetVpc(sim, { ipv4: "10.0.0.0/24" });
  const nb = await create(sim, {
    label: "svc-vpc",
    region: "us-east",
    vpcs: [{ subnet_id: subnetId, ipv4_range: "10.0.0.64/30" }],
    configs: [{
      port: 80,
      protocol: "tcp",
      nodes: [{ label: "node-1", address: "10.0.0.5:30080", subnet_id: subnetId }],
    }],
  });
  const vpcs = await withSim(sim, () => getNodeBalancerVPCConfigsBeta(nb.id));
  const config = vpcs.data[0];
  assert.ok(config);
  assert.deepEqual(vpcs.data, [{
    id: config.id,
    nodebalancer_id: nb.id,
    vpc_id: vpcId,
    subnet_id: subnetId,
    ipv4_range: "10.0.0.64/30",
    ipv6_range: null,
    purpose: "backend",
  }]);
  assert.deepEqual(await withSim(sim, () => getNodeBalancerVPCConfigBeta(nb.id, config.id)), config);
  const node = sim.world.nodeBalancers()[0]?.configs[0]?.nodes[0];
  assert.equal(node?.vpc_config_id, config.id, "VPC nodes report the NodeBalancer's VPC config");
  const subnet = (await withSim(sim, () => getVPC(vpcId))).subnets[0];
  assert.deepEqual(subnet?.nodebalancers, [{ id: nb.id, ipv4_range: "10.0.0.64/30" }]);
  assert.equal(sim.calls.count("GET /v4/nodebalancers/{id}/vpcs"), 1);
  assert.equal(sim.calls.count("GET /v4/nodebalancers/{id}/vpcs/{id}"), 1);
});

Deno.test("createNodeBalancer() with backend_vpcs carves a free /30 and refuses ranges that are taken", async () => {
  await using sim = await startLinodeSim();
  const { vpcId, subnetId } = oneSubnetVpc(sim, { ipv4: "10.0.0.0/24" });
  // A Linode holds 10.0.0.2, the first free host after the gateway.
  sim.world.addInstance({ label: "n1", vpc: { vpcId, subnetId } });
  const auto = await create(sim, {
    label: "svc-a",
    region: "us-east",
    backend_vpcs: [{ subnet_id: subnetId }],
  });
  const autoRange = (await withSim(sim, () => getNodeBalancerVPCConfigsBeta(auto.id))).data[0]?.ipv4_range;
  assert.equal(autoRange, "10.0.0.4/30", "the first /30 holds the network address, gateway and a Linode");
  const taken = await refused(sim, {
    label: "svc-b",
    region: "us-east",
    backend_vpcs: [{ subnet_id: subnetId, ipv4_range: "10.0.0.4/30" }],
  });
  assert.deepEqual(taken.errors, [{
    field: "backend_vpcs[0].ipv4_range",
    reason: "All addresses in the range must be free",
  }]);
  const within = await create(sim, {
    label: "svc-c",
    region: "us-east",
    backend_vpcs: [{ subnet_id: subnetId, ipv4_range: "10.0.0.128/25", ipv4_range_auto_assign: true }],
  });
  const carved = (await withSim(sim, () => getNodeBalancerVPCConfigsBeta(within.id))).data[0]?.ipv4_range;
  assert.equal(carved, "10.0.0.128/30", "auto-assign carves a /30 out of the given range");
  const linode = sim.world.addInstance({ label: "n2", vpc: { vpcId, subnetId } });
  const vpcIface = linode.id ? sim.world.instances.vpcInterface(linode.id) : undefined;
  assert.equal(vpcIface?.ipv4?.vpc, "10.0.0.3", "Linodes never get a NodeBalancer's addresses");
});

Deno.test("createNodeBalancer() refuses VPC configs the API refuses and leaves the subnet untouched", async () => {
  await using sim = await startLinodeSim();
  const { subnetId } = oneSubnetVpc(sim, { ipv4: "10.0.0.0/24" });
  const west = sim.world.createVpc({
    label: "west",
    region: "us-west",
    subnets: [{ label: "sn", ipv4: "10.9.0.0/24" }],
  });
  const other = sim.world.createVpc({
    label: "other",
    region: "us-east",
    subnets: [{ label: "sn", ipv4: "10.8.0.0/24" }],
  });
  const base = { label: "svc-v", region: "us-east" };
  const cases: [unknown, string, string][] = [
    [{ vpcs: [{}] }, "vpcs[0].subnet_id", "subnet_id is required"],
    [{ vpcs: [{ subnet_id: 1 }] }, "vpcs[0].subnet_id", "Subnet not found"],
    [
      { vpcs: [{ subnet_id: west.subnets[0]?.id }] },
      "vpcs[0].subnet_id",
      "The subnet must be in the same region as the NodeBalancer",
    ],
    [
      { vpcs: [{ subnet_id: subnetId, ipv4_range: "10.1.0.0/30" }] },
      "vpcs[0].ipv4_range",
      "Must be an IPv4 CIDR range within the subnet's range",
    ],
    [
      { vpcs: [{ subnet_id: subnetId, ipv4_range: "10.0.0.65/30" }] },
      "vpcs[0].ipv4_range",
      "Must be an IPv4 CIDR range within the subnet's range",
    ],
    [
      { vpcs: [{ subnet_id: subnetId }, { subnet_id: subnetId }] },
      "vpcs[1].subnet_id",
      "Subnet IDs must be unique",
    ],
    [
      { vpcs: [{ subnet_id: subnetId }, { subnet_id: other.subnets[0]?.id }] },
      "vpcs[1].subnet_id",
      "Only one VPC can be attached",
    ],
    [
      { vpcs: [{ subnet_id: subnetId }], backend_vpcs: [{ subnet_id: subnetId }] },
      "vpcs",
      "Use backend_vpcs or the deprecated vpcs, not both",
    ],
    [
      {
        vpcs: [{ subnet_id: subnetId }],
        configs: [{ port: 80, nodes: [{ label: "n-1", address: "192.168.128.9:80" }] }],
      },
      "configs[0].nodes[0].address",
      "A NodeBalancer with VPC backends takes only VPC backend nodes",
    ],
  ];
  for (const [extra, field, reason] of cases) {
    const body = { ...base, ...(extra as object) };
    assert.deepEqual(
      await refused(sim, body),
      { status: 400, errors: [{ field, reason }] },
      JSON.stringify(extra),
    );
  }
  const ok = await create(sim, { ...base, vpcs: [{ subnet_id: subnetId, ipv4_range: "10.0.0.4/30" }] });
  assert.ok(ok.id, "the range refused bodies looked at is still free");
});

Deno.test("deleteVPC() is refused while a NodeBalancer holds a subnet range and allowed once it is deleted", async () => {
  await using sim = await startLinodeSim();
  const { vpcId, subnetId } = oneSubnetVpc(sim);
  const nb = await create(sim, { label: "svc-d", region: "us-east", vpcs: [{ subnet_id: subnetId }] });
  const refusedDelete = await failure(withSim(sim, () => rawCall("DELETE", `/vpcs/${vpcId}`)));
  assert.equal(refusedDelete.status, 400);
  await withSim(sim, () => rawCall("DELETE", `/nodebalancers/${nb.id}`));
  const again = await create(sim, { label: "svc-e", region: "us-east", vpcs: [{ subnet_id: subnetId }] });
  const range = (await withSim(sim, () => getNodeBalancerVPCConfigsBeta(again.id))).data[0]?.ipv4_range;
  assert.equal(range, "10.0.0.4/30", "a deleted NodeBalancer gives its range back");
  await withSim(sim, () => rawCall("DELETE", `/nodebalancers/${again.id}`));
  await withSim(sim, () => rawCall("DELETE", `/vpcs/${vpcId}`));
  assert.deepEqual(sim.world.vpcs.list(), []);
});

Deno.test("createNodeBalancer() with frontend_vpcs gives the NodeBalancer a VPC address instead of a public one", async () => {
  await using sim = await startLinodeSim();
  const { subnetId } = oneSubnetVpc(sim, { ipv4: "10.0.0.0/24" });
  const nb = await create(sim, {
    label: "svc-f",
    region: "us-east",
    frontend_vpcs: [{ subnet_id: subnetId, ipv4_range: "10.0.0.32/28" }],
  });
  assert.deepEqual([nb.ipv4, nb.ipv6, nb.frontend_address_type, nb.frontend_vpc_subnet_id], [
    "10.0.0.32",
    null,
    "vpc",
    subnetId,
  ]);
  const listed = await withSim(sim, () => rawCall("GET", `/nodebalancers/${nb.id}/frontend_vpcs`)) as {
    data: { purpose: string; ipv4_range: string }[];
  };
  assert.deepEqual(listed.data.map((v) => [v.purpose, v.ipv4_range]), [["frontend", "10.0.0.32/32"]]);
  const withIp = await refused(sim, {
    label: "svc-g",
    region: "us-east",
    ipv4: "172.236.1.1",
    frontend_vpcs: [{ subnet_id: subnetId }],
  });
  assert.equal(withIp.errors[0]?.field, "ipv4");
});
