/** The route controller with several configured VPCs and both interface generations. */
import assert from "node:assert/strict";
import { LIST_VPC_IPS, PUT_CONFIG_INTERFACE, startRouteWorld, waitFor } from "./route_fixture.ts";

Deno.test("route: two configured VPCs: each Node's range goes to its interface in its own VPC", async () => {
  await using w = await startRouteWorld({
    vpc: { vpcNames: ["cluster", "cluster-b"], subnetNames: ["default"] },
  });
  const b = w.linode.world.createVpc({
    label: "cluster-b",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "172.16.0.0/16" }],
  });
  const inA = w.addLinode("worker-a");
  const inB = w.linode.world.addInstance({
    label: "worker-b",
    region: "us-east",
    vpc: { vpcId: b.id, subnetId: b.subnets[0]?.id ?? 0 },
  }).id;
  await w.start();
  w.addNode("worker-a", inA, "10.192.1.0/24");
  w.addNode("worker-b", inB, "10.192.2.0/24");
  await waitFor(() => w.condition("worker-a") === "False/RouteCreated", { what: "the route in VPC cluster" });
  await waitFor(() => w.condition("worker-b") === "False/RouteCreated", {
    what: "the route in VPC cluster-b",
  });
  assert.deepEqual(w.linode.world.ipRanges(inA), ["10.192.1.0/24"]);
  assert.deepEqual(w.linode.world.ipRanges(inB), ["10.192.2.0/24"]);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 2);
  assert.equal(w.calls(LIST_VPC_IPS), 2, "one listing per VPC");
  const ips = await w.client.vpcs.listIps(b.id);
  assert.ok(ips.some((ip) => ip.address_range === "10.192.2.0/24" && ip.linode_id === inB));
});
