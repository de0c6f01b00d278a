/**
 * Service behaviours docs/migration.md's parity table names that no other scenario asserts: this CCM's own
 * Event reasons (each with its type, on its object), and a Service deleted without a status, which the Go CCM
 * leaves its NodeBalancer behind for (`EnsureLoadBalancerDeleted` stops early without an ingress).
 */
import assert from "node:assert/strict";
import type { CoreV1Event } from "@kubernetes/client-node";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { MAX_DELETIONS_PER_CHECK } from "../controllers/service/cleanup.ts";
import { IDENTITY_NAMESPACE, ownershipTag } from "../controllers/service/ownership.ts";
import { LB_FINALIZER } from "../controllers/service/read.ts";
import { clusterIdTagOf } from "./go_ccm_fixture.ts";
import { REGION } from "./ccm_fixture.ts";
import { type ServiceWorld, startServiceWorld, until, userNodeBalancer } from "./service_fixture.ts";

/** The cluster name the fixture runs with (`--cluster-name` default). */
const CLUSTER = "kubernetes";

async function served(world: ServiceWorld, name: string): Promise<void> {
  await until(world, () => (world.service(name)?.status?.loadBalancer?.ingress?.length ?? 0) > 0, name);
}

/** The one Event of `reason` on Service `name`, after waiting for it. */
async function eventOf(world: ServiceWorld, reason: string, name: string): Promise<CoreV1Event> {
  await until(world, () => world.events(reason, name).length > 0, `${reason} on ${name}`);
  const [event] = world.events(reason, name);
  assert.ok(event);
  return event;
}

function annotate(world: ServiceWorld, name: string, annotations: Record<string, string>): void {
  world.kube.store.patch("services", name, { metadata: { annotations } }, {
    type: "merge",
    namespace: "default",
  });
}

Deno.test("service says NodeBalancerCreated, and AnnotationWarning for an annotation that changes nothing", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("web", { annotations: { [annotationKey("bogus")]: "1" } });
  await served(world, "web");
  const nb = world.nodeBalancerOf("web");
  const created = await eventOf(world, "NodeBalancerCreated", "web");
  assert.equal(created.type, "Normal");
  assert.match(created.message ?? "", new RegExp(`NodeBalancer ${nb?.id}`));
  const warned = await eventOf(world, "AnnotationWarning", "web");
  assert.equal(warned.type, "Warning");
  assert.match(warned.message ?? "", /linode-loadbalancer-bogus: unknown annotation ignored/);
});

Deno.test("service says BackendNodesSkipped for a Node whose address a NodeBalancer cannot reach, and serves the rest", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  world.addNode("node-2", "10.0.0.12");
  await world.start();
  world.addService("web");
  await served(world, "web");
  const skipped = await eventOf(world, "BackendNodesSkipped", "web");
  assert.equal(skipped.type, "Warning");
  assert.match(skipped.message ?? "", /node-2/);
  const addresses = world.nodeBalancerOf("web")?.configs[0]?.nodes.map((n) => n.address.split(":")[0]);
  assert.deepEqual(addresses, ["192.168.140.11"]);
});

Deno.test("service says LoadBalancerFieldImmutable when the type of an existing NodeBalancer is asked to change", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("web");
  await served(world, "web");
  const before = world.nodeBalancerOf("web");
  annotate(world, "web", { [annotationKey("nodebalancer-type")]: "premium" });
  const immutable = await eventOf(world, "LoadBalancerFieldImmutable", "web");
  assert.equal(immutable.type, "Warning");
  assert.match(immutable.message ?? "", new RegExp(`NodeBalancer ${before?.id} keeps type`));
  assert.deepEqual(world.nodeBalancers().map((nb) => [nb.id, nb.type]), [[before?.id, before?.type]]);
});

Deno.test("service says ReplacedLoadBalancer when nodebalancer-id moves it off the NodeBalancer it made", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("web");
  await served(world, "web");
  const made = world.nodeBalancerOf("web");
  const other = await userNodeBalancer(world, "other-nb");
  annotate(world, "web", { [annotationKey("nodebalancer-id")]: String(other.id) });
  const replaced = await eventOf(world, "ReplacedLoadBalancer", "web");
  assert.equal(replaced.type, "Normal");
  assert.equal(replaced.message, `Deleted NodeBalancer ${made?.id}, replaced by ${other.id}`);
  assert.deepEqual(world.nodeBalancers().map((nb) => nb.id), [other.id]);
});

Deno.test("service says LoadBalancerNotOwned and deletes nothing when a deleted Service names another Service's NodeBalancer", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  const owner = world.addService("owner");
  await served(world, "owner");
  const theirs = world.nodeBalancerOf("owner");
  assert.ok(theirs && theirs.tags.includes(ownershipTag(CLUSTER, owner.metadata?.uid ?? "")));
  world.addService("web", { annotations: { [annotationKey("nodebalancer-id")]: String(theirs.id) } });
  await until(world, () => world.events("SyncLoadBalancerFailed", "web").length > 0, "web refused");
  world.kube.store.delete("services", "web", "default");
  const notOwned = await eventOf(world, "LoadBalancerNotOwned", "web");
  assert.equal(notOwned.type, "Warning");
  await until(world, () => world.service("web") === undefined, "web gone, its finalizer released");
  assert.deepEqual(world.nodeBalancers().map((nb) => nb.id), [theirs.id]);
  assert.equal(world.linode.calls.count("DELETE /v4/nodebalancers/{id}"), 0);
});

Deno.test("service deletes the NodeBalancer of a Service deleted without a status, found by its ownership tag", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  // Deleted while no CCM ran, after its NodeBalancer was made but before its status was written.
  const svc = world.addService("web");
  world.kube.store.patch("services", "web", { metadata: { finalizers: [LB_FINALIZER] } }, {
    type: "merge",
    namespace: "default",
  });
  world.kube.store.delete("services", "web", "default");
  const tags = [CLUSTER, ownershipTag(CLUSTER, svc.metadata?.uid ?? ""), clusterIdTagOf(world.kube)];
  const nb = world.linode.world.addNodeBalancer({ region: REGION, label: "ccm-0123456789ab", tags });
  assert.deepEqual(world.service("web")?.status?.loadBalancer?.ingress, undefined);
  await world.start();
  await until(world, () => world.service("web") === undefined, "web gone");
  assert.equal(
    world.linode.world.nodeBalancer(nb.id),
    undefined,
    "its NodeBalancer deleted, not left behind",
  );
  assert.equal(world.events("DeletedLoadBalancer", "web").length, 1);
});

Deno.test("service says OrphanCleanupLimited on the kube-system Namespace when more orphans wait than one check deletes", async () => {
  await using world = await startServiceWorld({ flags: ["--cleanup-orphaned-nodebalancers"] });
  world.addNode("node-1", "192.168.140.11");
  const orphans = Array.from({ length: MAX_DELETIONS_PER_CHECK + 2 }, (_, i) => {
    const uid = `5e1f0000-dead-4bee-8f00-0000000000${10 + i}`;
    const tags = [CLUSTER, ownershipTag(CLUSTER, uid), clusterIdTagOf(world.kube)];
    return world.linode.world.addNodeBalancer({ region: REGION, label: `ccm-00000000${10 + i}`, tags }).id;
  });
  world.addService("web");
  await world.start();
  const left = () => orphans.filter((id) => world.linode.world.nodeBalancer(id)).length;
  await world.advanceUntil(() => left() === 2, { what: "one check's deletions", stepMs: 60_000 });
  const [limited] = world.events("OrphanCleanupLimited");
  assert.equal(limited?.type, "Warning");
  assert.deepEqual([limited?.involvedObject?.kind, limited?.involvedObject?.name], [
    "Namespace",
    IDENTITY_NAMESPACE,
  ]);
  assert.match(limited?.message ?? "", /\b2\b/);
});
