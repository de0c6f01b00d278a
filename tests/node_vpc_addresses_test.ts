/** Node addresses in a VPC cluster: VPC IPv6 (SLAAC) addresses, and only the configured subnets count. */
import assert from "node:assert/strict";
import { addNodes, isInitialised, kubeletNode, startWorld, UNINITIALIZED } from "./ccm_fixture.ts";

Deno.test("cloud-node lists VPC IPv6 SLAAC addresses after the IPv4 ones, ExternalIP when the interface is public", async () => {
  await using world = await startWorld({ flags: ["--vpc-names=cluster"] });
  const sim = world.linode.world;
  const vpc = sim.createVpc({
    label: "cluster",
    region: "us-east",
    ipv6: [{ range: "/52" }],
    subnets: [{ label: "default", ipv4: "10.0.0.0/24", ipv6: [{ range: "auto" }] }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const ipv6 = "2600:3c03::f03c:91ff:fe24:3a2f/128";
  const inner = sim.addInstance({
    label: "v6-private",
    ipv4: ["45.79.40.1"],
    ipv6,
    vpc: { vpcId: vpc.id, subnetId, ipv4: "10.0.0.5", ipv6: true },
  });
  sim.addInstance({
    label: "v6-public",
    ipv4: ["45.79.40.2"],
    ipv6: null,
    interfaceGeneration: "linode",
    vpc: {
      vpcId: vpc.id,
      subnetId,
      ipv4: "10.0.0.6",
      ipv6: { range: "2600:3c05:0:1042::/64", isPublic: true },
    },
  });
  addNodes(world, kubeletNode("v6-private"), kubeletNode("v6-public"));
  await world.start();
  for (const name of ["v6-private", "v6-public"]) {
    await world.waitFor(() => isInitialised(world.node(name)), { what: `${name} initialised` });
  }
  const slaac = (name: string) =>
    (world.node(name)?.status?.addresses ?? []).find((a) => a.address.startsWith("2600:3c05:"))?.address ??
      "";
  assert.match(slaac("v6-private"), /^2600:3c05:0:1000:/);
  assert.match(slaac("v6-public"), /^2600:3c05:0:1042:/);
  assert.deepEqual(world.node("v6-private")?.status?.addresses, [
    { type: "Hostname", address: "v6-private" },
    { type: "InternalIP", address: "10.0.0.5" },
    { type: "ExternalIP", address: "45.79.40.1" },
    { type: "InternalIP", address: slaac("v6-private") },
    { type: "ExternalIP", address: "2600:3c03::f03c:91ff:fe24:3a2f" },
  ]);
  assert.deepEqual(world.node("v6-public")?.status?.addresses, [
    { type: "Hostname", address: "v6-public" },
    { type: "InternalIP", address: "10.0.0.6" },
    { type: "ExternalIP", address: "45.79.40.2" },
    { type: "ExternalIP", address: slaac("v6-public") },
  ]);
  // The public-ipv6 annotation keeps the /128, as the Go CCM writes it.
  assert.equal(world.node("v6-private")?.metadata?.annotations?.["node.k8s.linode.com/public-ipv6"], ipv6);
  assert.equal(world.node("v6-private")?.spec?.providerID, `linode://${inner.id}`);
  // One listing of each kind per VPC served both Nodes.
  assert.equal(world.calls("GET /v4/vpcs/{id}/ips"), 1);
  assert.equal(world.calls("GET /v4/vpcs/{id}/ipv6s"), 1);
});

Deno.test("cloud-node with --subnet-names takes VPC addresses only from those subnets", async () => {
  await using world = await startWorld({ flags: ["--vpc-names=cluster", "--subnet-names=nodes"] });
  const sim = world.linode.world;
  const vpc = sim.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "nodes", ipv4: "10.0.0.0/24" }, { label: "other", ipv4: "10.1.0.0/24" }],
  });
  const [nodes, other] = [vpc.subnets[0]?.id ?? 0, vpc.subnets[1]?.id ?? 0];
  sim.addInstance({
    label: "in-nodes",
    ipv4: ["45.79.50.1"],
    vpc: { vpcId: vpc.id, subnetId: nodes, ipv4: "10.0.0.7" },
  });
  sim.addInstance({
    label: "in-other",
    ipv4: ["45.79.50.2"],
    vpc: { vpcId: vpc.id, subnetId: other, ipv4: "10.1.0.7" },
  });
  addNodes(world, kubeletNode("in-nodes"), kubeletNode("in-other"));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("in-nodes")), { what: "in-nodes initialised" });
  assert.deepEqual(world.node("in-nodes")?.status?.addresses?.slice(0, 2), [
    { type: "Hostname", address: "in-nodes" },
    { type: "InternalIP", address: "10.0.0.7" },
  ]);
  // Its only VPC address is in a subnet the cluster does not use: not a member, as in the Go CCM.
  await world.waitFor(() => world.events("InstanceNotFound", "in-other").length > 0, {
    what: "in-other warned",
  });
  assert.deepEqual(world.node("in-other")?.spec?.taints, [UNINITIALIZED]);
  assert.ok(!(world.node("in-other")?.status?.addresses ?? []).some((a) => a.address === "10.1.0.7"));
});
