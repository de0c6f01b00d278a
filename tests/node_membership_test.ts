/** Which Linodes count as the cluster's: the Go CCM's rules (every region, tag substring, VPC members only). */
import assert from "node:assert/strict";
import { addNodes, isInitialised, kubeletNode, startWorld, UNINITIALIZED } from "./ccm_fixture.ts";

Deno.test("cloud-node finds Linodes in every region whose tags contain --linode-tag-filter, and no others", async () => {
  await using world = await startWorld({ flags: ["--linode-tag-filter=k8s"] });
  const sim = world.linode.world;
  const west = sim.addInstance({ label: "west-1", region: "us-west", tags: ["prod-k8s-pool"] });
  sim.addInstance({ label: "east-1", region: "us-east", tags: ["k8s"] });
  sim.addInstance({ label: "untagged", region: "us-east", tags: ["web"] });
  addNodes(world, kubeletNode("west-1"), kubeletNode("east-1"), kubeletNode("untagged"));
  await world.start();
  for (const name of ["west-1", "east-1"]) {
    await world.waitFor(() => isInitialised(world.node(name)), { what: `${name} initialised` });
  }
  assert.equal(world.node("west-1")?.spec?.providerID, `linode://${west.id}`);
  assert.equal(world.node("west-1")?.metadata?.labels?.["topology.kubernetes.io/region"], "us-west");
  // A Linode without a matching tag is not the cluster's, as in the Go CCM: the Node stays uninitialised.
  await world.waitFor(() => world.events("InstanceNotFound", "untagged").length > 0, {
    what: "untagged warned",
  });
  assert.deepEqual(world.node("untagged")?.spec?.taints, [UNINITIALIZED]);
  // One listing served all three: the tag test is the API's `+contains` over every region.
  assert.equal(world.calls("GET /v4/linode/instances"), 1);
});

Deno.test("cloud-node with --vpc-names counts only Linodes with an address in the VPC", async () => {
  await using world = await startWorld({ flags: ["--vpc-names=cluster"] });
  const sim = world.linode.world;
  const vpc = sim.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  const inside = sim.addInstance({
    label: "inside",
    region: "us-east",
    vpc: { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id ?? 0, ipv4: "10.0.0.4" },
  });
  sim.addInstance({ label: "outside", region: "us-east" });
  addNodes(world, kubeletNode("inside"), kubeletNode("outside"));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("inside")), { what: "inside initialised" });
  assert.equal(world.node("inside")?.spec?.providerID, `linode://${inside.id}`);
  await world.waitFor(() => world.events("InstanceNotFound", "outside").length > 0, {
    what: "outside warned",
  });
  assert.deepEqual(world.node("outside")?.spec?.taints, [UNINITIALIZED]);
  assert.equal(world.node("outside")?.spec?.providerID, undefined);
});
