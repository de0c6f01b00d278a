import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { addNodes, type CcmWorld, isInitialised, kubeletNode, REGION, startWorld } from "./ccm_fixture.ts";

const REGION_LABEL = "topology.kubernetes.io/region";
const HOST_UUID = "node.k8s.linode.com/host-uuid";

/** Starts the CCM with `count` Nodes on Linodes in the VPC `cluster`, and waits until all are initialised. */
async function initialisedCluster(world: CcmWorld, count: number): Promise<void> {
  const { id: vpcId, subnets } = world.linode.world.createVpc({
    label: "cluster",
    region: REGION,
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  const vpc = { vpcId, subnetId: subnets[0]?.id ?? 0 };
  world.linode.world.addInstances(count, (i) => ({ label: `s-${i}`, region: REGION, vpc }));
  addNodes(world, ...Array.from({ length: count }, (_, i) => kubeletNode(`s-${i}`)));
  await world.start();
  const initialised = world.metrics.counter("ccm_nodes_initialised_total", "");
  await world.waitFor(() => initialised.get() >= count, { what: "cluster initialised" });
  assert.ok(Array.from({ length: count }, (_, i) => world.node(`s-${i}`)).every(isInitialised));
  await world.settle();
}

Deno.test("cloud-node in steady state makes one instance listing per status update period", async () => {
  await using world = await startWorld({ flags: ["--concurrent-node-syncs=10"] });
  await initialisedCluster(world, 50);
  world.linode.calls.reset();
  const periodMs = world.config.nodes.statusUpdateFrequencyMs;
  for (let period = 1; period <= 4; period++) {
    await world.tick(periodMs);
    await world.waitFor(() => world.calls("GET /v4/linode/instances") >= period, {
      what: `listing ${period}`,
    });
  }
  await world.settle();
  assert.equal(world.calls("GET /v4/linode/instances"), 4, "one listing per period");
  assert.equal(world.linode.calls.total(), 4, "no other Linode call: none per node, none by the lifecycle");
  const skipped = world.metrics.counter("ccm_passes_skipped_total", "", ["controller"]);
  assert.equal(
    skipped.get({ controller: "cloud-node" }),
    4 * 50,
    "no Node or Linode changed: none reconciled",
  );
});

Deno.test("cloud-node restores an owned label from the cache without a Linode call", async () => {
  await using world = await startWorld({ flags: ["--vpc-names=cluster"] });
  await initialisedCluster(world, 3);
  // Both caches older than their TTLs: a Node event must not refresh them (only the status update period does).
  await world.tick(world.config.linode.routesCacheTtlMs + 1_000);
  world.linode.calls.reset();
  world.kube.store.patch("nodes", "s-1", { metadata: { labels: { [REGION_LABEL]: null } } }, {
    type: "merge",
  });
  await world.waitFor(() => world.node("s-1")?.metadata?.labels?.[REGION_LABEL] === REGION, {
    what: "region label restored",
  });
  await world.settle();
  assert.equal(world.linode.calls.total(), 0);
});

Deno.test("cloud-node updates a changed Linode's Node at the next status update period, writing each part once", async () => {
  await using world = await startWorld();
  await initialisedCluster(world, 2);
  const [first] = world.linode.world.listInstances();
  assert.ok(first);
  // The Linode is renamed, re-addressed and moved to another host (same id: a Node's providerID never changes):
  // the Hostname address, the new IPv4 and the host label follow at the next refresh.
  const renamed = world.linode.world.updateInstance(first.id, {
    label: "s-0-renamed",
    ipv4: ["45.79.99.1"],
    newHost: true,
  });
  // The watch shows the label write late: the address write before it comes back first and enqueues the Node
  // while the informer still shows the old labels.
  const isRelabelled = (labels: Record<string, string> | undefined) =>
    labels?.[HOST_UUID] === renamed.host_uuid;
  world.kube.faults.lagWatchEvents(
    300,
    (obj) => obj.metadata.name === "s-0" && isRelabelled(obj.metadata.labels),
  );
  const writesBefore = world.nodeWrites("s-0");
  const tookMs = await world.advanceUntil(
    () => world.node("s-0")?.status?.addresses?.some((a) => a.address === "45.79.99.1") ?? false,
    { what: "new address", stepMs: 30_000 },
  );
  assert.equal(tookMs, world.config.nodes.statusUpdateFrequencyMs);
  assert.equal(world.node("s-0")?.status?.addresses?.[0]?.address, "s-0-renamed");
  await world.waitFor(() => isRelabelled(world.ccm.nodes.get("s-0")?.metadata?.labels), {
    what: "the new labels in the informer",
  });
  await world.settle();
  assert.equal(world.nodeWrites("s-0") - writesBefore, 2, "one PATCH of the addresses, one of the labels");
});

Deno.test("cloud-node makes no listing for its own writes coming back after the cache's TTL", async () => {
  // The extra listing of a busy machine: a Node just initialised came back through the watch while the
  // informer still showed it tainted, was looked up as a new Node, and the cache, by then past its TTL, listed.
  await using world = await startWorld({ flags: ["--concurrent-node-syncs=3"] });
  const names = Array.from({ length: 6 }, (_, i) => `n-${i}`);
  for (const label of names) world.linode.world.addInstance({ label, region: REGION });
  // Every event that shows the CCM's writes comes 2 s late (real time), after the clock has moved on below.
  const written = (obj: unknown) => ((obj as V1Node).status?.addresses ?? []).length > 2;
  world.kube.faults.lagWatchEvents(2_000, (obj) => names.includes(obj.metadata.name ?? "") && written(obj));
  addNodes(world, ...names.map((name) => kubeletNode(name)));
  await world.start();
  await world.waitFor(() => names.every((name) => isInitialised(world.node(name))), {
    what: "every Node written",
  });
  assert.equal(world.calls("GET /v4/linode/instances"), 1);
  await world.tick(world.config.linode.instanceCacheTtlMs + 1_000);
  await world.waitFor(() => names.every((name) => isInitialised(world.ccm.nodes.get(name))), {
    what: "the informer showing every write",
  });
  await world.settle();
  assert.equal(world.calls("GET /v4/linode/instances"), 1, "no listing for a Node seen again");
  for (const name of names) assert.equal(world.nodeWrites(name), 2, name);
});

Deno.test("cloud-node: a settled Node whose Linode's public address changes by hand is updated at the next status period", async () => {
  await using world = await startWorld();
  await initialisedCluster(world, 3);
  const external = () =>
    world.node("s-1")?.status?.addresses?.filter((a) => a.type === "ExternalIP").map((a) => a.address);
  const linode = world.linode.world.listInstances().find((l) => l.label === "s-1");
  assert.ok(linode);
  await world.tick(world.config.nodes.statusUpdateFrequencyMs);
  await world.settle();
  const skipped = world.metrics.counter("ccm_passes_skipped_total", "", ["controller"]);
  assert.equal(skipped.get({ controller: "cloud-node" }), 3, "every Node settled: none reconciled");
  // By hand, outside the CCM: the Linode gets another public address; nothing tells the cluster.
  const rec = world.linode.world.instances.require(linode.id);
  rec.linode = { ...rec.linode, ipv4: ["45.79.99.7"] };
  // Fake time up to the next period's listing; then the update follows without time passing (waiting for it
  // in real time: under load a step could end between the listing and the write it leads to).
  const listings = world.calls("GET /v4/linode/instances");
  const tookMs = await world.advanceUntil(() => world.calls("GET /v4/linode/instances") > listings, {
    what: "the next status period's listing",
    stepMs: 30_000,
  });
  await world.waitFor(() => external()?.includes("45.79.99.7") ?? false, { what: "new address" });
  assert.ok(tookMs <= world.config.nodes.statusUpdateFrequencyMs, `updated after ${tookMs} ms`);
  assert.equal(world.calls("GET /v4/linode/instances/{id}"), 0, "from the listing, no read per Node");
});

Deno.test("cloud-node does not rewrite addresses that differ only in order, one per type (upstream's nodeAddressesChangeDetected)", async () => {
  await using world = await startWorld();
  const l = world.linode.world.addInstance({
    label: "o-1",
    region: REGION,
    type: "g6-standard-2",
    ipv4: ["45.79.60.1", "192.168.130.9"],
    ipv6: null,
  });
  // Initialised earlier with the same addresses in another order (e.g. by hand, or by another CCM).
  const addresses = [
    { type: "InternalIP", address: "192.168.130.9" },
    { type: "ExternalIP", address: "45.79.60.1" },
    { type: "Hostname", address: "o-1" },
  ];
  addNodes(world, kubeletNode("o-1", { providerID: `linode://${l.id}`, taints: [], addresses }));
  await world.start();
  // Through a status period: labels and annotations are written, the addresses are not.
  await world.tick(world.config.nodes.statusUpdateFrequencyMs + 1_000, 30_000);
  assert.deepEqual(world.node("o-1")?.status?.addresses, addresses);
  assert.equal(world.node("o-1")?.metadata?.annotations?.["node.k8s.linode.com/private-ip"], "192.168.130.9");
  const statusWrites = world.kube.calls.log.filter((c) => c.path === "/api/v1/nodes/o-1/status").length;
  assert.equal(statusWrites, 0, "no status write");
});
