/**
 * Nobody takes what is not theirs: a `nodebalancer-id` (or a status address) that points at another
 * cluster's NodeBalancer, at another live Service's, or at one only a cluster of the same name could own, is
 * neither adopted, changed nor deleted; the Service still goes when deleted.
 */
import assert from "node:assert/strict";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { ownershipTag } from "../controllers/service/ownership.ts";
import { clusterIdTagOf } from "./go_ccm_fixture.ts";
import { type ServiceWorld, startServiceWorld, until, userNodeBalancer } from "./service_fixture.ts";

const FOREIGN_ID = "ccm-cluster:" + "f".repeat(32);
const OTHER_UID = "77777777-0000-4000-8000-000000000001";
const NB_WRITES = /^(POST|PUT|DELETE) \/v4\/nodebalancers\/\{id\}/;

/** A NodeBalancer made by hand, then tagged as `tags` say. */
async function taggedNodeBalancer(
  world: ServiceWorld,
  tags: string[],
): Promise<{ id: number; ipv4: string }> {
  const nb = await userNodeBalancer(world, "someone-elses");
  await world.userCall("PUT", `/nodebalancers/${nb.id}`, { tags });
  return nb;
}

function writesTo(world: ServiceWorld): string[] {
  return world.linode.calls.log.map((c) => c.key).filter((k) => NB_WRITES.test(k));
}

const FOREIGN: { name: string; tags: (world: ServiceWorld) => string[]; why: RegExp }[] = [
  { name: "another cluster's identity tag", tags: () => [FOREIGN_ID], why: /another cluster/ },
  {
    name: "an ownership tag of a cluster with the same name but no identity",
    tags: () => ["kubernetes", ownershipTag("kubernetes", OTHER_UID)],
    why: /may be another cluster's/,
  },
  {
    name: "another cluster name's ownership tag",
    tags: () => [ownershipTag("staging", OTHER_UID)],
    why: /another cluster/,
  },
];

for (const c of FOREIGN) {
  Deno.test(`service never adopts, changes or deletes a NodeBalancer with ${c.name}`, async () => {
    await using world = await startServiceWorld();
    world.addNode("node-1", "192.168.140.11");
    await world.start();
    const theirs = await taggedNodeBalancer(world, c.tags(world));
    const before = world.nodeBalancers().find((nb) => nb.id === theirs.id);
    world.linode.calls.reset();
    world.addService("web", { annotations: { [annotationKey("nodebalancer-id")]: String(theirs.id) } });
    await until(world, () => world.events("SyncLoadBalancerFailed", "web").length > 0, "a Warning");
    assert.match(world.events("SyncLoadBalancerFailed", "web")[0]?.message ?? "", c.why);
    assert.match(world.events("SyncLoadBalancerFailed", "web")[0]?.message ?? "", new RegExp(`${theirs.id}`));
    assert.deepEqual(writesTo(world), [], "nothing written to it");
    assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 0, "and none created instead");

    // Deleting the Service completes and leaves the NodeBalancer as it was.
    world.kube.store.delete("services", "web", "default");
    await until(world, () => world.service("web") === undefined, "the Service gone (finalizer released)");
    assert.deepEqual(world.nodeBalancers().find((nb) => nb.id === theirs.id), before, "untouched");
    assert.deepEqual(writesTo(world), []);
  });
}

Deno.test("service never takes the NodeBalancer of another live Service of this cluster", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("first");
  await until(world, () => world.nodeBalancerOf("first") !== undefined, "first's NodeBalancer");
  const first = world.nodeBalancerOf("first");
  assert.ok(first);
  world.linode.calls.reset();
  world.addService("second", { annotations: { [annotationKey("nodebalancer-id")]: String(first.id) } });
  await until(world, () => world.events("SyncLoadBalancerFailed", "second").length > 0, "a Warning");
  assert.match(world.events("SyncLoadBalancerFailed", "second")[0]?.message ?? "", /another Service/);
  assert.deepEqual(writesTo(world), []);
});

Deno.test("service adopts an untagged NodeBalancer (the Go CCM's) and tags it with this cluster's identity", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  const untagged = await userNodeBalancer(world, "go-ccm-made");
  const svc = world.addService("web", {
    annotations: { [annotationKey("nodebalancer-id")]: String(untagged.id) },
  });
  const uid = svc.metadata?.uid ?? "";
  const want = [ownershipTag("kubernetes", uid), clusterIdTagOf(world.kube)];
  await until(
    world,
    () => want.every((t) => world.nodeBalancers().find((nb) => nb.id === untagged.id)?.tags.includes(t)),
    "ownership and identity tags",
  );
});

Deno.test("service creates nothing and cleans up nothing while the cluster identity cannot be read", async () => {
  await using world = await startServiceWorld({ flags: ["--cleanup-orphaned-nodebalancers"] });
  world.addNode("node-1", "192.168.140.11");
  const fault = world.kube.faults.add({
    method: "GET",
    route: "/api/v1/namespaces/{name}",
    status: 403,
    message: "forbidden",
  });
  // An orphan that would be this cluster's: ownership and identity tags of a Service that is gone.
  const orphan = await taggedNodeBalancer(world, [
    "kubernetes",
    ownershipTag("kubernetes", OTHER_UID),
    clusterIdTagOf(world.kube),
  ]);
  world.linode.calls.reset();
  await world.start();
  world.addService("web");
  await until(world, () => world.events("SyncLoadBalancerFailed", "web").length > 0, "a Warning");
  assert.match(world.events("SyncLoadBalancerFailed", "web")[0]?.message ?? "", /cluster identity/);
  await world.tick(2 * 3_600_000 + 60_000, 60_000);
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 0, "nothing created");
  assert.ok(world.nodeBalancers().some((nb) => nb.id === orphan.id), "nothing deleted");
  assert.equal(
    world.ccm.orphanCheck.list().find((o) => o.id === orphan.id)?.fate,
    "kept: cluster identity unknown",
  );
  fault();
  await until(world, () => world.nodeBalancerOf("web") !== undefined, "web served once the identity is read");
  assert.ok(world.nodeBalancerOf("web")?.tags.includes(clusterIdTagOf(world.kube)));
});
