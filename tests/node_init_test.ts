import type { V1Node } from "@kubernetes/client-node";
import assert from "node:assert/strict";
import { addNodes, isInitialised, kubeletNode, startWorld, UNINITIALIZED } from "./ccm_fixture.ts";

/** A new machine boots and registers a while after the CCM first listed Linodes. */
const BOOT_MS = 1_000;

Deno.test("cloud-node initialises a node found by label, in the Go CCM's address order", async () => {
  await using world = await startWorld();
  const l = world.linode.world.addInstance({
    label: "worker-1",
    region: "us-east",
    type: "g6-standard-2",
    ipv4: ["45.79.10.1", "192.168.130.7"],
  });
  const other = { key: "dedicated", value: "db", effect: "NoExecute" };
  addNodes(world, kubeletNode("worker-1", { taints: [other, UNINITIALIZED], labels: { team: "a" } }));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("worker-1")), { what: "worker-1 initialised" });
  const n = world.node("worker-1");
  const privateIp = "192.168.130.7";
  assert.equal(n?.spec?.providerID, `linode://${l.id}`);
  assert.deepEqual(n?.spec?.taints, [other]);
  // The API's ipv4 order (public first), as the Go CCM lists them.
  assert.deepEqual(n?.status?.addresses, [
    { type: "Hostname", address: "worker-1" },
    { type: "ExternalIP", address: "45.79.10.1" },
    { type: "InternalIP", address: privateIp },
    ...(l.ipv6 ? [{ type: "ExternalIP", address: l.ipv6.replace(/\/128$/, "") }] : []),
  ]);
  assert.deepEqual(n?.metadata?.labels, {
    "kubernetes.io/hostname": "worker-1",
    "kubernetes.io/os": "linux",
    team: "a",
    "node.kubernetes.io/instance-type": "g6-standard-2",
    "beta.kubernetes.io/instance-type": "g6-standard-2",
    "topology.kubernetes.io/region": "us-east",
    "failure-domain.beta.kubernetes.io/region": "us-east",
    "node.k8s.linode.com/host-uuid": l.host_uuid,
  });
  assert.equal(n?.metadata?.annotations?.["node.k8s.linode.com/private-ip"], privateIp);
  assert.deepEqual(n?.status?.conditions?.map((c) => c.type), ["Ready"]);
});

Deno.test("cloud-node finds a node by providerID and by IP when its name is not the label", async () => {
  await using world = await startWorld();
  const byId = world.linode.world.addInstance({ label: "linode-a", region: "us-east", ipv4: ["45.79.20.1"] });
  const byIp = world.linode.world.addInstance({ label: "linode-b", region: "us-east", ipv4: ["45.79.20.2"] });
  const byNodeIp = world.linode.world.addInstance({
    label: "linode-c",
    region: "us-east",
    ipv4: ["45.79.20.3"],
  });
  addNodes(
    world,
    kubeletNode("k8s-a", { providerID: `linode://${byId.id}` }),
    kubeletNode("k8s-b", { addresses: [{ type: "ExternalIP", address: "45.79.20.2" }] }),
    kubeletNode("k8s-c", { nodeIp: "45.79.20.3" }),
  );
  await world.start();
  for (const name of ["k8s-a", "k8s-b", "k8s-c"]) {
    await world.waitFor(() => isInitialised(world.node(name)), { what: `${name} initialised` });
  }
  assert.equal(world.node("k8s-a")?.spec?.providerID, `linode://${byId.id}`);
  assert.equal(world.node("k8s-b")?.spec?.providerID, `linode://${byIp.id}`);
  assert.equal(world.node("k8s-c")?.spec?.providerID, `linode://${byNodeIp.id}`);
  assert.equal(world.node("k8s-b")?.status?.addresses?.[0]?.address, "linode-b");
});

Deno.test("cloud-node lists VPC IPv4 first and honours LINODE_EXTERNAL_SUBNET", async () => {
  await using world = await startWorld({
    flags: ["--vpc-names=cluster"],
    env: { LINODE_EXTERNAL_SUBNET: "192.168.200.0/24" },
  });
  const vpc = world.linode.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  world.linode.world.addInstance({
    label: "vpc-1",
    region: "us-east",
    ipv4: ["45.79.30.1", "192.168.200.9"],
    ipv6: null,
    vpc: { vpcId: vpc.id, subnetId, ipv4: "10.0.0.5" },
  });
  addNodes(world, kubeletNode("vpc-1"));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("vpc-1")), { what: "vpc-1 initialised" });
  assert.deepEqual(world.node("vpc-1")?.status?.addresses, [
    { type: "Hostname", address: "vpc-1" },
    { type: "InternalIP", address: "10.0.0.5" },
    { type: "ExternalIP", address: "45.79.30.1" },
    { type: "ExternalIP", address: "192.168.200.9" },
  ]);
  assert.equal(world.node("vpc-1")?.metadata?.annotations?.["node.k8s.linode.com/private-ip"], undefined);
  assert.equal(world.calls("GET /v4/vpcs/{id}/ips"), 1);
});

Deno.test("cloud-node gives a new VPC Linode its VPC InternalIP in the same write that initialises it", async () => {
  await using world = await startWorld({ flags: ["--vpc-names=cluster"] });
  const vpc = world.linode.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  world.linode.world.addInstance({ label: "first", region: "us-east", vpc: { vpcId: vpc.id, subnetId } });
  addNodes(world, kubeletNode("first"));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("first")), { what: "first initialised" });
  assert.equal(world.calls("GET /v4/vpcs/{id}/ips"), 1);
  await world.tick(BOOT_MS);
  // Addresses of "second" at the moment its taint goes, as every watcher of the Node sees it.
  let atInit: unknown;
  const unsubscribe = world.kube.store.subscribe((event) => {
    const n = event.object as unknown as V1Node;
    if (n.metadata?.name === "second" && isInitialised(n) && atInit === undefined) {
      atInit = n.status?.addresses;
    }
  });
  try {
    world.linode.world.addInstance({
      label: "second",
      region: "us-east",
      vpc: { vpcId: vpc.id, subnetId, ipv4: "10.0.0.9" },
    });
    addNodes(world, kubeletNode("second"));
    await world.waitFor(() => isInitialised(world.node("second")), { what: "second initialised" });
  } finally {
    unsubscribe();
  }
  assert.deepEqual((atInit as { type: string; address: string }[]).slice(0, 2), [
    { type: "Hostname", address: "second" },
    { type: "InternalIP", address: "10.0.0.9" },
  ]);
  // Its own interfaces were read (one call), not every address in the VPC.
  assert.equal(world.calls("GET /v4/vpcs/{id}/ips"), 1);
  assert.equal(world.calls("GET /v4/linode/instances/{id}/configs"), 1);
});

Deno.test("cloud-node keeps the taint of a node without a Linode, warns, and retries", async () => {
  await using world = await startWorld();
  addNodes(world, kubeletNode("ghost"));
  await world.start();
  await world.waitFor(() => world.events("InstanceNotFound").length > 0, { what: "InstanceNotFound event" });
  const event = world.events("InstanceNotFound")[0];
  assert.equal(event?.type, "Warning");
  assert.equal(event?.involvedObject.name, "ghost");
  assert.equal(event?.source?.component, "cloud-node-controller", "upstream's recorder name");
  assert.equal(event?.reportingComponent, "cloud-node-controller");
  assert.deepEqual(world.node("ghost")?.spec?.taints, [UNINITIALIZED]);
  assert.equal(world.node("ghost")?.spec?.providerID, undefined);
  world.linode.world.addInstance({ label: "ghost", region: "us-east" });
  // Retried with backoff on data newer than the Node; the Linode shows up once the cache's TTL has passed.
  const tookMs = await world.advanceUntil(() => isInitialised(world.node("ghost")), {
    what: "ghost initialised after its Linode appeared",
    stepMs: 1_000,
  });
  assert.ok(tookMs >= world.config.linode.instanceCacheTtlMs, `initialised after ${tookMs} ms`);
  assert.equal(world.calls("GET /v4/linode/instances"), 2);
});

// In a VPC cluster the VPC addresses (60 s TTL) predate the ghost: they must not make each retry force a listing.
for (const vpc of [undefined, { vpcNames: ["cluster"] }]) {
  const where = vpc ? " in a VPC cluster" : "";
  Deno.test(`cloud-node spends one forced listing on a Node without a Linode${where}, then only backs off`, async () => {
    await using world = await startWorld({ flags: vpc ? ["--vpc-names=cluster"] : [] });
    const { id: vpcId, subnets } = world.linode.world.createVpc({
      label: "cluster",
      region: "us-east",
      subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
    });
    world.linode.world.addInstance({
      label: "real",
      region: "us-east",
      vpc: { vpcId, subnetId: subnets[0]?.id ?? 0 },
    });
    addNodes(world, kubeletNode("real"));
    await world.start();
    await world.waitFor(() => isInitialised(world.node("real")), { what: "real initialised" });
    await world.tick(BOOT_MS);
    addNodes(world, kubeletNode("ghost"));
    await world.advanceUntil(
      () => world.events("InstanceNotFound").some((e) => (e.count ?? 1) >= 3),
      { what: "three failed attempts", stepMs: 250 },
    );
    // The first load, a read filtered to its label, then one listing forced by the ghost (a Linode matched
    // by IP alone is found only in a listing): its retries read data newer than the ghost.
    assert.equal(world.calls("GET /v4/linode/instances"), 3);
    assert.deepEqual(world.node("ghost")?.spec?.taints, [UNINITIALIZED]);
  });
}

Deno.test("cloud-node finds a Linode newer than the cache with one read filtered to its label, without a warning", async () => {
  await using world = await startWorld();
  world.linode.world.addInstance({ label: "old", region: "us-east" });
  addNodes(world, kubeletNode("old"));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("old")), { what: "old initialised" });
  assert.equal(world.calls("GET /v4/linode/instances"), 1);
  // The machine boots and registers well within the cache's TTL.
  await world.tick(BOOT_MS);
  world.linode.world.addInstance({ label: "new", region: "us-east" });
  addNodes(world, kubeletNode("new"));
  // No time passes: a retry after a backoff or the TTL cannot be what initialises it.
  await world.waitFor(() => isInitialised(world.node("new")), { what: "new initialised" });
  assert.equal(world.calls("GET /v4/linode/instances"), 2);
  const filters = world.linode.calls.log.filter((c) => c.key === "GET /v4/linode/instances")
    .map((c) => JSON.parse(c.filter ?? "{}"));
  assert.deepEqual(
    filters.at(-1),
    { label: "new" },
    "the last read is filtered to its label (no region: members may be in any region)",
  );
  assert.equal(world.events("InstanceNotFound").length, 0);
});

Deno.test("cloud-node does not warn about a new Node while the forced refresh fails, and initialises it after", async () => {
  await using world = await startWorld();
  world.linode.world.addInstance({ label: "old", region: "us-east" });
  addNodes(world, kubeletNode("old"));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("old")), { what: "old initialised" });
  await world.tick(BOOT_MS);
  world.linode.faults.error(503, { route: "/linode/instances" });
  world.linode.world.addInstance({ label: "new", region: "us-east" });
  addNodes(world, kubeletNode("new"));
  // Every retry of the listing fails, and so does the reconcile that forced it.
  await world.advanceUntil(() => world.linode.calls.log.filter((c) => c.status === 503).length >= 5, {
    what: "failed forced refreshes",
    stepMs: 500,
  });
  world.linode.faults.clear();
  await world.advanceUntil(() => isInitialised(world.node("new")), {
    what: "new initialised after the outage",
    stepMs: 500,
  });
  assert.equal(world.events("InstanceNotFound").length, 0, "unknown is not missing");
});

Deno.test("cloud-node treats a Node deleted uninitialised and registered again as new", async () => {
  await using world = await startWorld();
  await world.start();
  addNodes(world, kubeletNode("reborn"));
  await world.waitFor(() => world.events("InstanceNotFound").length === 1, {
    what: "InstanceNotFound event",
  });
  world.kube.store.delete("nodes", "reborn");
  world.kube.store.delete("leases", "reborn", "kube-node-lease");
  await world.waitFor(() => world.ccm.nodes.list().length === 0, { what: "the deletion seen" });
  // The machine is replaced: its new Linode registers a Node of the same name, newer than the cached data.
  await world.tick(BOOT_MS);
  world.linode.world.addInstance({ label: "reborn", region: "us-east" });
  addNodes(world, kubeletNode("reborn"));
  // No time passes: only the forced refresh of a new Node, not the old one's backoff, can initialise it.
  await world.waitFor(() => isInitialised(world.node("reborn")), { what: "reborn initialised" });
  assert.equal(world.events("InstanceNotFound")[0]?.count ?? 1, 1, "no warning for the new Node");
});

Deno.test("cloud-node initialises 500 nodes created at once with one instance listing", async () => {
  await using world = await startWorld({ flags: ["--concurrent-node-syncs=10"] });
  // Members in any region count (as in the Go CCM); 500 Linodes are one page of the listing.
  world.linode.world.addInstances(480, (i) => ({ label: `n-${i}`, region: "us-east" }));
  world.linode.world.addInstances(20, (i) => ({ label: `n-${480 + i}`, region: "us-west" }));
  await world.start();
  addNodes(world, ...Array.from({ length: 500 }, (_, i) => kubeletNode(`n-${i}`)));
  // The metric, not 500 copies of Nodes from the emulator per poll: those would starve the CCM.
  const initialised = world.metrics.counter("ccm_nodes_initialised_total", "");
  await world.waitFor(() => initialised.get() >= 500, { what: "500 nodes initialised", timeoutMs: 30_000 });
  assert.ok(Array.from({ length: 500 }, (_, i) => world.node(`n-${i}`)).every(isInitialised));
  assert.equal(world.calls("GET /v4/linode/instances"), 1);
  assert.equal(world.linode.calls.total(), 1);
  assert.equal(world.events("InstanceNotFound").length, 0);
});

Deno.test("InstanceCache.refresh() lists 1,000 Linodes in 2 calls", async () => {
  await using world = await startWorld();
  world.linode.world.addInstances(1000, (i) => ({ label: `n-${i}`, region: "us-east" }));
  const { instances } = world.parts();
  await instances.refresh();
  assert.equal(instances.peek()?.data.size, 1000);
  assert.equal(world.calls("GET /v4/linode/instances"), 2);
});

Deno.test("cloud-node re-reads and merges when someone else changed the Node under its write (409)", async () => {
  await using world = await startWorld();
  world.linode.world.addInstance({ label: "racy", region: "us-east" });
  // The write that removes the taint is held on arrival; meanwhile another controller adds a taint, so the
  // write's resourceVersion precondition fails for real. A blind retry of the same body would fail again (or,
  // without the precondition, drop that taint); only a re-read and a new plan keeps it and removes ours.
  world.kube.faults.add({ method: "PATCH", route: "/api/v1/nodes/{name}", latencyMs: 2_000, times: 1 });
  addNodes(world, kubeletNode("racy"));
  const started = world.start();
  await world.waitFor(() => world.kube.calls.count("PATCH /api/v1/nodes/{name}") === 1, {
    what: "the held write",
  });
  const meanwhile = { key: "added-meanwhile", effect: "NoSchedule" };
  world.kube.store.patch("nodes", "racy", { spec: { taints: [UNINITIALIZED, meanwhile] } }, {
    type: "merge",
  });
  await started;
  await world.waitFor(() => isInitialised(world.node("racy")), { what: "racy initialised" });
  // The apiserver has the write before the CCM has its answer (and counts the Node): let it finish.
  await world.settle();
  assert.deepEqual(world.node("racy")?.spec?.taints, [meanwhile]);
  assert.deepEqual(
    world.kube.calls.log.filter((c) => c.path === "/api/v1/nodes/racy").map((c) => `${c.key} ${c.status}`),
    ["PATCH /api/v1/nodes/{name} 409", "GET /api/v1/nodes/{name} 200", "PATCH /api/v1/nodes/{name} 200"],
  );
  assert.equal(world.metrics.counter("ccm_nodes_initialised_total", "").get(), 1);
});

Deno.test("cloud-node writes each new Node once, and does not act again on its own writes coming back late", async () => {
  await using world = await startWorld({ flags: ["--concurrent-node-syncs=3"] });
  const names = Array.from({ length: 6 }, (_, i) => `node-${i}`);
  for (const label of names) world.linode.world.addInstance({ label, region: "us-east" });
  // A busy apiserver's watch shows the write that removes the taint late: the address write before it comes
  // back first and enqueues the Node again while the informer still shows it tainted.
  world.kube.faults.lagWatchEvents(
    300,
    (obj) => names.includes(obj.metadata.name ?? "") && isInitialised(obj as unknown as V1Node),
  );
  addNodes(world, ...names.map((name) => kubeletNode(name)));
  await world.start();
  await world.waitFor(() => names.every((name) => isInitialised(world.ccm.nodes.get(name))), {
    what: "every Node initialised, as the informer sees it",
  });
  await world.settle();
  for (const name of names) {
    assert.equal(world.nodeWrites(name), 2, `${name}: one PATCH of the status, one of the metadata and spec`);
  }
  assert.equal(world.kube.calls.count("GET /api/v1/nodes/{name}"), 0, "no conflict to re-read after");
  assert.equal(world.metrics.counter("ccm_nodes_initialised_total", "").get(), names.length);
});
