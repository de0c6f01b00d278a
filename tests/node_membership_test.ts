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

Deno.test("cloud-node's targeted reads of a Linode newer than the listing apply the same membership rules", async () => {
  await using world = await startWorld({ flags: ["--linode-tag-filter=k8s"] });
  const sim = world.linode.world;
  sim.addInstance({ label: "first", region: "us-east", tags: ["k8s"] });
  addNodes(world, kubeletNode("first"));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("first")), { what: "first initialised" });
  await world.tick(1_000);
  // Registered after the listing: each is read by providerID or by label, not by a listing.
  const byId = sim.addInstance({ label: "by-id", region: "us-west", tags: ["pool-k8s"] });
  const foreign = sim.addInstance({ label: "foreign", region: "us-east", tags: ["web"] });
  sim.addInstance({ label: "by-label", region: "eu-west", tags: ["k8s-b"] });
  sim.addInstance({ label: "untagged", region: "us-east", tags: ["web"] });
  addNodes(
    world,
    kubeletNode("n-by-id", { providerID: `linode://${byId.id}` }),
    kubeletNode("n-foreign", { providerID: `linode://${foreign.id}` }),
    kubeletNode("by-label"),
    kubeletNode("untagged"),
  );
  for (const name of ["n-by-id", "by-label"]) {
    await world.waitFor(() => isInitialised(world.node(name)), { what: `${name} initialised` });
  }
  assert.equal(world.node("n-by-id")?.metadata?.labels?.["topology.kubernetes.io/region"], "us-west");
  for (const name of ["n-foreign", "untagged"]) {
    await world.waitFor(() => world.events("InstanceNotFound", name).length > 0, { what: `${name} warned` });
    assert.equal(world.node(name)?.metadata?.labels?.["topology.kubernetes.io/region"], undefined);
  }
  const filters = world.linode.calls.log.filter((c) => c.key === "GET /v4/linode/instances")
    .map((c) => JSON.parse(c.filter ?? "{}"));
  assert.ok(
    filters.some((f) => f.label === "by-label" && f.tags?.["+contains"] === "k8s"),
    `a read by label carries the tag filter: ${JSON.stringify(filters)}`,
  );
});

Deno.test("cloud-node with --vpc-names reads a new Linode's interfaces (IPv4 and IPv6) before it counts, and only a VPC member counts", async () => {
  await using world = await startWorld({ flags: ["--vpc-names=cluster"] });
  const sim = world.linode.world;
  const vpc = sim.createVpc({
    label: "cluster",
    region: "us-east",
    ipv6: [{ range: "/52" }],
    subnets: [{ label: "default", ipv4: "10.0.0.0/24", ipv6: [{ range: "auto" }] }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  sim.addInstance({ label: "first", region: "us-east", vpc: { vpcId: vpc.id, subnetId, ipv4: "10.0.0.3" } });
  addNodes(world, kubeletNode("first"));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("first")), { what: "first initialised" });
  await world.tick(1_000);
  const inside = sim.addInstance({
    label: "inside",
    region: "us-east",
    vpc: { vpcId: vpc.id, subnetId, ipv4: "10.0.0.4", ipv6: true },
  });
  const outside = sim.addInstance({ label: "outside", region: "us-east" });
  addNodes(
    world,
    kubeletNode("inside", { providerID: `linode://${inside.id}` }),
    kubeletNode("outside", { providerID: `linode://${outside.id}` }),
  );
  await world.waitFor(() => isInitialised(world.node("inside")), { what: "inside initialised" });
  const internal = world.node("inside")?.status?.addresses?.filter((a) => a.type === "InternalIP");
  assert.ok(internal?.some((a) => a.address === "10.0.0.4"), `its VPC address: ${JSON.stringify(internal)}`);
  // Its VPC IPv6 (SLAAC) address too, read from its interfaces as the `/ipv6s` listing would give it.
  assert.ok(
    internal?.some((a) => a.address.startsWith("2600:3c05:")),
    `its VPC IPv6: ${JSON.stringify(internal)}`,
  );
  await world.waitFor(() => world.events("InstanceNotFound", "outside").length > 0, {
    what: "outside warned",
  });
  assert.equal(world.node("outside")?.metadata?.labels?.["topology.kubernetes.io/region"], undefined);
});
