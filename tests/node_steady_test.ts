import assert from "node:assert/strict";
import { addNodes, kubeletNode, type NodeWorld, startNodeWorld, waitFor } from "./node_fixture.ts";

const REGION = "topology.kubernetes.io/region";

/** `count` initialised Nodes on Linodes in the VPC `cluster` (used when the world selects it). */
async function initialisedCluster(world: NodeWorld, count: number): Promise<void> {
  const { id: vpcId, subnets } = world.linode.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  const vpc = { vpcId, subnetId: subnets[0]?.id ?? 0 };
  world.linode.world.addInstances(count, (i) => ({ label: `s-${i}`, region: "us-east", vpc }));
  addNodes(world, ...Array.from({ length: count }, (_, i) => kubeletNode(`s-${i}`)));
  await world.start();
  await waitFor(
    () => Array.from({ length: count }, (_, i) => world.node(`s-${i}`)).every((n) => n?.spec?.providerID),
    { what: "cluster initialised" },
  );
}

Deno.test("startNodeControllers() in steady state makes one instance listing per status update period", async () => {
  await using world = await startNodeWorld({ ttlMs: 50, controllers: { statusUpdateFrequencyMs: 300 } });
  await initialisedCluster(world, 50);
  world.linode.calls.reset();
  await new Promise((r) => setTimeout(r, 1_000));
  const lists = world.calls("GET /v4/linode/instances");
  assert.ok(lists >= 2 && lists <= 4, `about one listing per 300 ms, got ${lists}`);
  assert.equal(
    world.linode.calls.total(),
    lists,
    "no other Linode call: none per node, none by the lifecycle",
  );
});

Deno.test("startNodeControllers() restores an owned label from the cache without a Linode call", async () => {
  // Caches older than their TTLs: a Node event must not refresh them (only the status update period does).
  await using world = await startNodeWorld({ ttlMs: 50, vpc: { vpcNames: ["cluster"] }, vpcTtlMs: 50 });
  await initialisedCluster(world, 3);
  world.linode.calls.reset();
  await new Promise((r) => setTimeout(r, 100));
  world.kube.store.patch("nodes", "s-1", { metadata: { labels: { [REGION]: null } } }, { type: "merge" });
  await waitFor(() => world.node("s-1")?.metadata?.labels?.[REGION] === "us-east", {
    what: "region label restored",
  });
  assert.equal(world.linode.calls.total(), 0);
});

Deno.test("startNodeControllers() updates addresses when the cache shows a changed Linode", async () => {
  await using world = await startNodeWorld({ ttlMs: 50, controllers: { statusUpdateFrequencyMs: 100 } });
  await initialisedCluster(world, 2);
  const [first] = world.linode.world.listInstances();
  assert.ok(first);
  // The Linode's label changes (a rename): the Hostname address follows at the next refresh.
  world.linode.world.deleteInstance(first.id);
  const renamed = world.linode.world.addInstance({
    label: "s-0-renamed",
    region: "us-east",
    ipv4: ["45.79.99.1"],
  });
  world.kube.store.patch("nodes", "s-0", { spec: { providerID: `linode://${renamed.id}` } }, {
    type: "merge",
  });
  await waitFor(
    () => world.node("s-0")?.status?.addresses?.some((a) => a.address === "45.79.99.1") ?? false,
    { what: "new address" },
  );
  assert.equal(world.node("s-0")?.status?.addresses?.[0]?.address, "s-0-renamed");
});
