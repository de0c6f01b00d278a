import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { addNodes, type CcmWorld, kubeletNode, REGION, startWorld } from "./ccm_fixture.ts";

const SHUTDOWN_KEY = "node.cloudprovider.kubernetes.io/shutdown";
const hasShutdownTaint = (n: V1Node | undefined) =>
  (n?.spec?.taints ?? []).some((t) => t.key === SHUTDOWN_KEY);

/** Adds one initialised Node per Linode (label = name), Ready or not. */
function cluster(world: CcmWorld, count: number, ready = true): number[] {
  const linodes = world.linode.world.addInstances(count, (i) => ({ label: `w-${i}`, region: REGION }));
  addNodes(
    world,
    ...linodes.map((l) => kubeletNode(l.label, { providerID: `linode://${l.id}`, taints: [], ready })),
  );
  return linodes.map((l) => l.id);
}

function setReady(world: CcmWorld, name: string, ready: boolean): void {
  const status = { conditions: [{ type: "Ready", status: ready ? "True" : "False", reason: "Test" }] };
  world.kube.store.patch("nodes", name, { status }, { type: "merge", subresource: "status" });
}

/** Lets the controllers run for `passes` lifecycle periods of fake time. */
async function runPasses(world: CcmWorld, passes: number): Promise<void> {
  const periodMs = world.config.nodes.monitorPeriodMs;
  await world.tick(passes * periodMs, periodMs);
}

/** Advances fake time a second at a time until `condition` holds. */
function advanceUntil(world: CcmWorld, condition: () => boolean, what: string): Promise<number> {
  return world.advanceUntil(condition, { what, stepMs: 1_000 });
}

Deno.test("cloud-node-lifecycle taints a shut-down Linode's node and untaints it only once the Node is Ready", async () => {
  await using world = await startWorld();
  const [id] = cluster(world, 2);
  await world.start();
  world.linode.world.setStatus(id ?? 0, "offline");
  setReady(world, "w-0", false);
  // Seen at the first pass after the instance cache's TTL.
  await advanceUntil(world, () => hasShutdownTaint(world.node("w-0")), "shutdown taint");
  assert.equal(hasShutdownTaint(world.node("w-1")), false);
  // Running again, kubelet not back yet: upstream's MonitorNodes leaves the taint on a NotReady Node.
  world.linode.world.setStatus(id ?? 0, "running");
  await world.ccm.instances.view({ maxAgeMs: 0 });
  await runPasses(world, 4);
  assert.equal(hasShutdownTaint(world.node("w-0")), true, "kept while NotReady");
  setReady(world, "w-0", true);
  await advanceUntil(world, () => !hasShutdownTaint(world.node("w-0")), "shutdown taint removed once Ready");
  assert.ok(world.node("w-0"), "never deleted");
});

Deno.test("cloud-node-lifecycle leaves a stopped Linode's node untainted (the Go CCM's InstanceShutdown: offline, shutting_down)", async () => {
  await using world = await startWorld();
  const [stopped, shutting] = cluster(world, 3);
  await world.start();
  world.linode.world.setStatus(stopped ?? 0, "stopped");
  world.linode.world.setStatus(shutting ?? 0, "shutting_down");
  setReady(world, "w-0", false);
  setReady(world, "w-1", false);
  await advanceUntil(world, () => hasShutdownTaint(world.node("w-1")), "shutting_down tainted");
  await world.ccm.instances.view({ maxAgeMs: 0 });
  await runPasses(world, 4);
  assert.equal(hasShutdownTaint(world.node("w-0")), false, "stopped is not shut down");
  assert.ok(world.node("w-0"), "nor deleted");
});

Deno.test("cloud-node-lifecycle reports a failed deletion as upstream: DeletingNode, then DeletingNodeFailed (Warning)", async () => {
  await using world = await startWorld();
  const [gone] = cluster(world, 3);
  await world.start();
  world.kube.faults.add({
    method: "DELETE",
    route: "/api/v1/nodes/{name}",
    status: 500,
    message: "etcd down",
  });
  world.linode.world.deleteInstance(gone ?? 0);
  setReady(world, "w-0", false);
  await advanceUntil(world, () => world.events("DeletingNodeFailed", "w-0").length > 0, "DeletingNodeFailed");
  assert.ok(world.node("w-0"), "not deleted");
  const [deleting] = world.events("DeletingNode", "w-0");
  const [failed] = world.events("DeletingNodeFailed", "w-0");
  assert.equal(deleting?.type, "Normal");
  assert.equal(deleting?.message, "Deleting node w-0 because it does not exist in the cloud provider");
  assert.equal(failed?.type, "Warning");
  assert.match(failed?.message ?? "", /^Failed deleting node w-0: .*etcd down/);
  for (const e of [deleting, failed]) assert.equal(e?.source?.component, "cloud-node-lifecycle-controller");
  world.kube.faults.clear();
  await advanceUntil(world, () => world.node("w-0") === undefined, "deleted once the apiserver takes it");
});

Deno.test("cloud-node-lifecycle runs only when --controllers enables it", async () => {
  await using world = await startWorld({ flags: ["--controllers=cloud-node"] });
  const [id] = cluster(world, 2);
  await world.start();
  world.linode.world.setStatus(id ?? 0, "offline");
  setReady(world, "w-0", false);
  await world.tick(1_000);
  world.linode.world.addInstance({ label: "w-2", region: REGION });
  addNodes(world, kubeletNode("w-2"));
  // cloud-node still initialises (after its forced refresh); cloud-node-lifecycle never taints.
  await world.waitFor(() => (world.node("w-2")?.spec?.taints ?? []).length === 0, {
    what: "w-2 initialised",
  });
  await runPasses(world, 6);
  assert.equal(hasShutdownTaint(world.node("w-0")), false);
  assert.equal(world.calls("GET /v4/linode/instances/{id}"), 0);
});

Deno.test("cloud-node-lifecycle untaints a Ready node without reading Linode", async () => {
  await using world = await startWorld();
  const [l] = world.linode.world.addInstances(1, { label: "r-0", region: REGION });
  const taints = [{ key: SHUTDOWN_KEY, effect: "NoSchedule" }, { key: "keep", effect: "NoSchedule" }];
  addNodes(world, kubeletNode("r-0", { providerID: `linode://${l?.id}`, taints }));
  await world.start();
  await world.waitFor(() => !hasShutdownTaint(world.node("r-0")), { what: "shutdown taint removed" });
  assert.deepEqual(world.node("r-0")?.spec?.taints, [{ key: "keep", effect: "NoSchedule" }]);
  // Only the node controller's start-up sync listed; passes past the TTL that read the cache would list.
  await world.settle();
  world.linode.calls.reset();
  await runPasses(world, 6);
  assert.equal(world.linode.calls.total(), 0, "no Linode read by the lifecycle while every Node is Ready");
});

Deno.test("cloud-node-lifecycle deletes a NotReady node only after GET of its Linode answers 404", async () => {
  await using world = await startWorld();
  const [gone] = cluster(world, 3);
  await world.start();
  world.linode.world.deleteInstance(gone ?? 0);
  setReady(world, "w-0", false);
  await advanceUntil(world, () => world.node("w-0") === undefined, "w-0 deleted");
  assert.ok(world.calls("GET /v4/linode/instances/{id}") >= 1);
  assert.ok(world.node("w-1") && world.node("w-2"));
  await world.waitFor(() => world.events("DeletingNode").length === 1, { what: "DeletingNode event" });
  assert.equal(world.events("DeletingNode")[0]?.source?.component, "cloud-node-lifecycle-controller");
});

Deno.test("cloud-node-lifecycle keeps a NotReady node whose Linode only left the listing", async () => {
  await using world = await startWorld({ flags: ["--linode-tag-filter=k8s"] });
  const linodes = world.linode.world.addInstances(
    3,
    (i) => ({ label: `w-${i}`, region: REGION, tags: ["k8s"] }),
  );
  addNodes(
    world,
    ...linodes.map((l) => kubeletNode(l.label, { providerID: `linode://${l.id}`, taints: [], ready: true })),
  );
  await world.start();
  // The Linode still exists (GET answers 200) but no longer matches the listing's tag filter (its tag removed).
  const [moved] = linodes;
  assert.ok(moved);
  world.linode.world.updateInstance(moved.id, { tags: [] });
  setReady(world, "w-0", false);
  await advanceUntil(world, () => world.calls("GET /v4/linode/instances/{id}") >= 1, "confirmation GET");
  await runPasses(world, 4);
  assert.ok(world.node("w-0"), "not deleted");
  assert.equal(world.events("DeletingNode").length, 0);
});

// Faults on the listing only: the confirming GET still works, so only the stale-cache rule prevents harm.
const LISTING = { route: "/linode/instances" };
const OUTAGES: { name: string; inject: (world: CcmWorld) => void }[] = [
  { name: "5xx", inject: (w) => w.linode.faults.error(503, LISTING) },
  { name: "429", inject: (w) => w.linode.faults.rateLimit(0, LISTING) },
  { name: "hang", inject: (w) => w.linode.faults.hang(LISTING) },
];

for (const outage of OUTAGES) {
  Deno.test(`cloud-node-lifecycle deletes and taints nothing during a Linode ${outage.name} outage`, async () => {
    // A hung listing ends after the per-request timeout (real time: it is the HTTP client's).
    await using world = await startWorld({ env: { LINODE_REQUEST_TIMEOUT_SECONDS: "1" } });
    const [gone, off] = cluster(world, 4);
    await world.start();
    // The last good listing already shows w-0 gone and w-1 offline; then the listing starts failing.
    world.linode.world.deleteInstance(gone ?? 0);
    world.linode.world.setStatus(off ?? 0, "offline");
    await world.ccm.instances.view({ maxAgeMs: 0 });
    outage.inject(world);
    // Past the TTL: the next pass that needs Linode state must refresh, and fails.
    await world.tick(world.config.linode.instanceCacheTtlMs + 1_000);
    setReady(world, "w-0", false);
    setReady(world, "w-1", false);
    const refreshes = world.metrics.counter("ccm_cache_refreshes_total", "", ["cache", "result"]);
    await advanceUntil(
      world,
      () => refreshes.get({ cache: "instances", result: "error" }) >= 1,
      "a failed refresh",
    );
    await runPasses(world, 4);
    assert.ok(world.node("w-0"), "not deleted");
    assert.equal(hasShutdownTaint(world.node("w-1")), false);
    assert.equal(world.events("DeletingNode").length, 0);
    assert.equal(world.calls("GET /v4/linode/instances/{id}"), 0);
    world.linode.faults.clear();
  });
}

Deno.test("cloud-node-lifecycle does not delete when the confirming GET fails", async () => {
  await using world = await startWorld();
  const [gone] = cluster(world, 3);
  await world.start();
  world.linode.faults.error(500, { route: "/linode/instances/{id}" });
  world.linode.world.deleteInstance(gone ?? 0);
  setReady(world, "w-0", false);
  await advanceUntil(world, () => world.calls("GET /v4/linode/instances/{id}") >= 2, "confirmation attempts");
  await runPasses(world, 4);
  assert.ok(world.node("w-0"), "not deleted");
  world.linode.faults.clear();
});

Deno.test("cloud-node-lifecycle blocks a mass deletion and reports it", async () => {
  await using world = await startWorld();
  const ids = cluster(world, 4);
  await world.start();
  for (const id of ids.slice(0, 3)) world.linode.world.deleteInstance(id);
  for (const name of ["w-0", "w-1", "w-2"]) setReady(world, name, false);
  await advanceUntil(
    world,
    () => world.events("NodeDeletionBlocked").length === 1,
    "NodeDeletionBlocked event",
  );
  await runPasses(world, 4);
  assert.equal(world.kube.store.list("nodes").length, 4);
  assert.equal(world.calls("GET /v4/linode/instances/{id}"), 0);
  assert.ok(world.metrics.counter("ccm_node_deletions_blocked_total", "").get() >= 4);
  assert.equal(world.events("NodeDeletionBlocked").length, 1, "reported once while unchanged");
});

Deno.test("cloud-node-lifecycle never touches nodes of another provider", async () => {
  await using world = await startWorld();
  cluster(world, 2);
  const taints = [{ key: SHUTDOWN_KEY, effect: "NoSchedule" }];
  addNodes(world, kubeletNode("aws-1", { providerID: "aws:///us-east-1a/i-1", taints, ready: false }));
  await world.start();
  await runPasses(world, 4);
  const n = world.node("aws-1");
  assert.deepEqual(n?.spec?.taints, taints);
  assert.equal(n?.metadata?.labels?.["topology.kubernetes.io/region"], undefined);
  // The one listing is the node controller's start-up sync of the two Linode nodes.
  assert.equal(world.linode.calls.total(), 1);
});

Deno.test("cloud-node-lifecycle skips passes over unchanged Nodes and Linodes, and still taints a Linode shut down later", async () => {
  await using world = await startWorld();
  const skipped = () =>
    world.metrics.counter("ccm_passes_skipped_total", "", ["controller"]).get({
      controller: "cloud-node-lifecycle",
    });
  const [id] = cluster(world, 3);
  await world.start();
  await runPasses(world, 2);
  const idle = skipped();
  await runPasses(world, 4);
  assert.ok(
    skipped() >= idle + 3,
    `every Node Ready and unchanged: passes skipped (${skipped() - idle} of 4)`,
  );
  // A NotReady Node makes the passes read Linode state; they skip again while the listing is the same one.
  setReady(world, "w-0", false);
  world.linode.world.setStatus(id ?? 0, "offline");
  await advanceUntil(world, () => hasShutdownTaint(world.node("w-0")), "shutdown taint");
  assert.equal(hasShutdownTaint(world.node("w-1")), false);
  const tainted = skipped();
  await runPasses(world, 3);
  assert.ok(skipped() > tainted, "settled again once the taint is in place");
  assert.ok(world.node("w-0"), "never deleted");
});
