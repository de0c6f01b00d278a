import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { addNodes, kubeletNode, type NodeWorld, startNodeWorld, waitFor } from "./node_fixture.ts";

const SHUTDOWN_KEY = "node.cloudprovider.kubernetes.io/shutdown";
const hasShutdownTaint = (n: V1Node | undefined) =>
  (n?.spec?.taints ?? []).some((t) => t.key === SHUTDOWN_KEY);

/** Adds one initialised Node per Linode (label = name), Ready or not. */
function cluster(world: NodeWorld, count: number, ready = true): number[] {
  const linodes = world.linode.world.addInstances(count, (i) => ({ label: `w-${i}`, region: "us-east" }));
  addNodes(
    world,
    ...linodes.map((l) => kubeletNode(l.label, { providerID: `linode://${l.id}`, taints: [], ready })),
  );
  return linodes.map((l) => l.id);
}

function setReady(world: NodeWorld, name: string, ready: boolean): void {
  const status = { conditions: [{ type: "Ready", status: ready ? "True" : "False", reason: "Test" }] };
  world.kube.store.patch("nodes", name, { status }, { type: "merge", subresource: "status" });
}

/** Lets the controllers run for `ms` (several lifecycle periods of 50 ms). */
function settle(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

Deno.test("startNodeControllers() taints a shut-down Linode's node and untaints it when it runs again", async () => {
  await using world = await startNodeWorld({ ttlMs: 50 });
  const [id] = cluster(world, 2);
  await world.start();
  world.linode.world.setStatus(id ?? 0, "offline");
  setReady(world, "w-0", false);
  await waitFor(() => hasShutdownTaint(world.node("w-0")), { what: "shutdown taint" });
  assert.equal(hasShutdownTaint(world.node("w-1")), false);
  world.linode.world.setStatus(id ?? 0, "running");
  await waitFor(() => !hasShutdownTaint(world.node("w-0")), { what: "shutdown taint removed" });
  assert.ok(world.node("w-0"), "never deleted");
});

Deno.test("startNodeControllers() runs only the controllers --controllers enables", async () => {
  await using world = await startNodeWorld({ ttlMs: 50, enabled: new Set(["cloud-node"]) });
  const [id] = cluster(world, 2);
  await world.start();
  world.linode.world.setStatus(id ?? 0, "offline");
  setReady(world, "w-0", false);
  addNodes(world, kubeletNode("w-2"));
  world.linode.world.addInstance({ label: "w-2", region: "us-east" });
  // cloud-node still initialises (after its forced refresh); cloud-node-lifecycle never taints.
  await waitFor(() => (world.node("w-2")?.spec?.taints ?? []).length === 0, { what: "w-2 initialised" });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(hasShutdownTaint(world.node("w-0")), false);
  assert.equal(world.calls("GET /v4/linode/instances/{id}"), 0);
});

Deno.test("startNodeControllers() untaints a Ready node without reading Linode", async () => {
  await using world = await startNodeWorld({ ttlMs: 50 });
  const [l] = world.linode.world.addInstances(1, { label: "r-0", region: "us-east" });
  const taints = [{ key: SHUTDOWN_KEY, effect: "NoSchedule" }, { key: "keep", effect: "NoSchedule" }];
  addNodes(world, kubeletNode("r-0", { providerID: `linode://${l?.id}`, taints }));
  await world.start();
  await waitFor(() => !hasShutdownTaint(world.node("r-0")), { what: "shutdown taint removed" });
  assert.deepEqual(world.node("r-0")?.spec?.taints, [{ key: "keep", effect: "NoSchedule" }]);
  // Only the node controller's start-up sync listed: with a 50 ms TTL each lifecycle pass that read would list.
  world.linode.calls.reset();
  await settle(300);
  assert.equal(world.linode.calls.total(), 0, "no Linode read by the lifecycle while every Node is Ready");
});

Deno.test("startNodeControllers() deletes a NotReady node only after GET of its Linode answers 404", async () => {
  await using world = await startNodeWorld({ ttlMs: 50 });
  const [gone] = cluster(world, 3);
  await world.start();
  world.linode.world.deleteInstance(gone ?? 0);
  setReady(world, "w-0", false);
  await waitFor(() => world.node("w-0") === undefined, { what: "w-0 deleted" });
  assert.ok(world.calls("GET /v4/linode/instances/{id}") >= 1);
  assert.ok(world.node("w-1") && world.node("w-2"));
  await waitFor(() => world.events("DeletingNode").length === 1, { what: "DeletingNode event" });
});

Deno.test("startNodeControllers() keeps a NotReady node whose Linode only left the listing", async () => {
  await using world = await startNodeWorld({ ttlMs: 50 });
  const [moved] = cluster(world, 3);
  await world.start();
  // The Linode still exists (GET answers 200) but no longer matches the region filter.
  const l = world.linode.world.instance(moved ?? 0);
  assert.ok(l);
  world.linode.world.deleteInstance(l.id);
  const back = world.linode.world.addInstance({ label: "w-0-elsewhere", region: "us-west" });
  world.kube.store.patch("nodes", "w-0", { spec: { providerID: `linode://${back.id}` } }, { type: "merge" });
  setReady(world, "w-0", false);
  await waitFor(() => world.calls("GET /v4/linode/instances/{id}") >= 1, { what: "confirmation GET" });
  await settle(200);
  assert.ok(world.node("w-0"), "not deleted");
  assert.equal(world.events("DeletingNode").length, 0);
});

// Faults on the listing only: the confirming GET still works, so only the stale-cache rule prevents harm.
const LISTING = { route: "/linode/instances" };
const OUTAGES: { name: string; inject: (world: NodeWorld) => void }[] = [
  { name: "5xx", inject: (w) => w.linode.faults.error(503, LISTING) },
  { name: "429", inject: (w) => w.linode.faults.rateLimit(0, LISTING) },
  { name: "hang", inject: (w) => w.linode.faults.hang(LISTING) },
];

for (const outage of OUTAGES) {
  Deno.test(`startNodeControllers() deletes and taints nothing during a Linode ${outage.name} outage`, async () => {
    await using world = await startNodeWorld({ ttlMs: 50 });
    const [gone, off] = cluster(world, 4);
    await world.start();
    // The last good listing already shows w-0 gone and w-1 offline; then the listing starts failing.
    world.linode.world.deleteInstance(gone ?? 0);
    world.linode.world.setStatus(off ?? 0, "offline");
    await world.cache.view({ maxAgeMs: 0 });
    outage.inject(world);
    await settle(60);
    setReady(world, "w-0", false);
    setReady(world, "w-1", false);
    const failed = () => world.metrics.counter("ccm_cache_refreshes_total", "", ["cache", "result"]);
    await waitFor(
      () => failed().get({ cache: "instances", result: "error" }) >= 1,
      { what: "a failed refresh", timeoutMs: 5_000 },
    );
    await settle(200);
    assert.ok(world.node("w-0"), "not deleted");
    assert.equal(hasShutdownTaint(world.node("w-1")), false);
    assert.equal(world.events("DeletingNode").length, 0);
    assert.equal(world.calls("GET /v4/linode/instances/{id}"), 0);
    world.linode.faults.clear();
  });
}

Deno.test("startNodeControllers() does not delete when the confirming GET fails", async () => {
  await using world = await startNodeWorld({ ttlMs: 50 });
  const [gone] = cluster(world, 3);
  await world.start();
  world.linode.faults.error(500, { route: "/linode/instances/{id}" });
  world.linode.world.deleteInstance(gone ?? 0);
  setReady(world, "w-0", false);
  await waitFor(() => world.calls("GET /v4/linode/instances/{id}") >= 2, { what: "confirmation attempts" });
  await settle(100);
  assert.ok(world.node("w-0"), "not deleted");
  world.linode.faults.clear();
});

Deno.test("startNodeControllers() blocks a mass deletion and reports it", async () => {
  await using world = await startNodeWorld({ ttlMs: 50 });
  const ids = cluster(world, 4);
  await world.start();
  for (const id of ids.slice(0, 3)) world.linode.world.deleteInstance(id);
  for (const name of ["w-0", "w-1", "w-2"]) setReady(world, name, false);
  await waitFor(() => world.events("NodeDeletionBlocked").length === 1, {
    what: "NodeDeletionBlocked event",
  });
  await settle(200);
  assert.equal(world.kube.store.list("nodes").length, 4);
  assert.equal(world.calls("GET /v4/linode/instances/{id}"), 0);
  assert.ok(world.metrics.counter("ccm_node_deletions_blocked_total", "").get() >= 2);
  assert.equal(world.events("NodeDeletionBlocked").length, 1, "reported once while unchanged");
});

Deno.test("startNodeControllers() never touches nodes of another provider", async () => {
  await using world = await startNodeWorld({ ttlMs: 50 });
  cluster(world, 2);
  const taints = [{ key: SHUTDOWN_KEY, effect: "NoSchedule" }];
  addNodes(world, kubeletNode("aws-1", { providerID: "aws:///us-east-1a/i-1", taints, ready: false }));
  await world.start();
  await settle(200);
  const n = world.node("aws-1");
  assert.deepEqual(n?.spec?.taints, taints);
  assert.equal(n?.metadata?.labels?.["topology.kubernetes.io/region"], undefined);
  // The one listing is the node controller's start-up sync of the two Linode nodes.
  assert.equal(world.linode.calls.total(), 1);
});
