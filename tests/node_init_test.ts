import type { V1Node } from "@kubernetes/client-node";
import assert from "node:assert/strict";
import { parseIpv4Cidr } from "../controllers/node/addresses.ts";
import { addNodes, kubeletNode, startNodeWorld, UNINITIALIZED, waitFor } from "./node_fixture.ts";

const isInitialised = (n: { spec?: { taints?: { key: string }[] } } | undefined) =>
  n !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED.key);

Deno.test("startNodeControllers() initialises a node found by label, in the Go CCM's address order", async () => {
  await using world = await startNodeWorld();
  const l = world.linode.world.addInstance({
    label: "worker-1",
    region: "us-east",
    type: "g6-standard-2",
    ipv4: ["45.79.10.1", "192.168.130.7"],
  });
  const other = { key: "dedicated", value: "db", effect: "NoExecute" };
  addNodes(world, kubeletNode("worker-1", { taints: [other, UNINITIALIZED], labels: { team: "a" } }));
  await world.start();
  await waitFor(() => isInitialised(world.node("worker-1")), { what: "worker-1 initialised" });
  const n = world.node("worker-1");
  const privateIp = "192.168.130.7";
  assert.equal(n?.spec?.providerID, `linode://${l.id}`);
  assert.deepEqual(n?.spec?.taints, [other]);
  assert.deepEqual(n?.status?.addresses, [
    { type: "Hostname", address: "worker-1" },
    { type: "InternalIP", address: privateIp },
    { type: "ExternalIP", address: "45.79.10.1" },
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

Deno.test("startNodeControllers() finds a node by providerID and by IP when its name is not the label", async () => {
  await using world = await startNodeWorld();
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
    await waitFor(() => isInitialised(world.node(name)), { what: `${name} initialised` });
  }
  assert.equal(world.node("k8s-a")?.spec?.providerID, `linode://${byId.id}`);
  assert.equal(world.node("k8s-b")?.spec?.providerID, `linode://${byIp.id}`);
  assert.equal(world.node("k8s-c")?.spec?.providerID, `linode://${byNodeIp.id}`);
  assert.equal(world.node("k8s-b")?.status?.addresses?.[0]?.address, "linode-b");
});

Deno.test("startNodeControllers() lists VPC IPv4 first and honours LINODE_EXTERNAL_SUBNET", async () => {
  await using world = await startNodeWorld({
    vpc: { vpcNames: ["cluster"] },
    controllers: { externalSubnet: parseIpv4Cidr("192.168.200.0/24") },
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
  await waitFor(() => isInitialised(world.node("vpc-1")), { what: "vpc-1 initialised" });
  assert.deepEqual(world.node("vpc-1")?.status?.addresses, [
    { type: "Hostname", address: "vpc-1" },
    { type: "InternalIP", address: "10.0.0.5" },
    { type: "ExternalIP", address: "45.79.30.1" },
    { type: "ExternalIP", address: "192.168.200.9" },
  ]);
  assert.equal(world.node("vpc-1")?.metadata?.annotations?.["node.k8s.linode.com/private-ip"], undefined);
  assert.equal(world.calls("GET /v4/vpcs/{id}/ips"), 1);
});

Deno.test("startNodeControllers() gives a new VPC Linode its VPC InternalIP in the same write that initialises it", async () => {
  await using world = await startNodeWorld({
    vpc: { vpcNames: ["cluster"] },
    controllers: { forcedRefreshIntervalMs: 200 },
  });
  const vpc = world.linode.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  world.linode.world.addInstance({ label: "first", region: "us-east", vpc: { vpcId: vpc.id, subnetId } });
  addNodes(world, kubeletNode("first"));
  await world.start();
  await waitFor(() => isInitialised(world.node("first")), { what: "first initialised" });
  assert.equal(world.calls("GET /v4/vpcs/{id}/ips"), 1);
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
    await waitFor(() => isInitialised(world.node("second")), { what: "second initialised" });
  } finally {
    unsubscribe();
  }
  assert.deepEqual((atInit as { type: string; address: string }[]).slice(0, 2), [
    { type: "Hostname", address: "second" },
    { type: "InternalIP", address: "10.0.0.9" },
  ]);
  assert.equal(world.calls("GET /v4/vpcs/{id}/ips"), 2);
});

Deno.test("startNodeControllers() keeps the taint of a node without a Linode, warns, and retries", async () => {
  await using world = await startNodeWorld({ ttlMs: 100 });
  addNodes(world, kubeletNode("ghost"));
  await world.start();
  await waitFor(() => world.events("InstanceNotFound").length > 0, { what: "InstanceNotFound event" });
  const event = world.events("InstanceNotFound")[0];
  assert.equal(event?.type, "Warning");
  assert.equal(event?.involvedObject.name, "ghost");
  assert.deepEqual(world.node("ghost")?.spec?.taints, [UNINITIALIZED]);
  assert.equal(world.node("ghost")?.spec?.providerID, undefined);
  world.linode.world.addInstance({ label: "ghost", region: "us-east" });
  await waitFor(() => isInitialised(world.node("ghost")), {
    what: "ghost initialised after its Linode appeared",
  });
});

// In a VPC cluster the VPC addresses (60 s TTL) predate the ghost: they must not make each retry force a listing.
for (const vpc of [undefined, { vpcNames: ["cluster"] }]) {
  const where = vpc ? " in a VPC cluster" : "";
  Deno.test(`startNodeControllers() spends one forced listing on a Node without a Linode${where}, then only backs off`, async () => {
    await using world = await startNodeWorld({ vpc, controllers: { forcedRefreshIntervalMs: 50 } });
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
    await waitFor(() => isInitialised(world.node("real")), { what: "real initialised" });
    addNodes(world, kubeletNode("ghost"));
    await waitFor(
      () => world.events("InstanceNotFound").some((e) => (e.count ?? 1) >= 3),
      { what: "three failed attempts" },
    );
    // The first load, then one refresh forced by the ghost: its retries read data newer than the ghost.
    assert.equal(world.calls("GET /v4/linode/instances"), 2);
    assert.deepEqual(world.node("ghost")?.spec?.taints, [UNINITIALIZED]);
  });
}

Deno.test("startNodeControllers() finds a Linode newer than the cache with one forced refresh, without a warning", async () => {
  // A 30 s backoff would outlast the wait below: only the refresh-paced retry can initialise in time.
  const controllers = { forcedRefreshIntervalMs: 300, retryBaseMs: 30_000, retryMaxMs: 30_000 };
  await using world = await startNodeWorld({ controllers });
  world.linode.world.addInstance({ label: "old", region: "us-east" });
  addNodes(world, kubeletNode("old"));
  await world.start();
  await waitFor(() => isInitialised(world.node("old")), { what: "old initialised" });
  assert.equal(world.calls("GET /v4/linode/instances"), 1);
  // The machine boots and its kubelet registers within the cache's first few hundred milliseconds.
  world.linode.world.addInstance({ label: "new", region: "us-east" });
  addNodes(world, kubeletNode("new"));
  await waitFor(() => isInitialised(world.node("new")), { what: "new initialised", timeoutMs: 5_000 });
  assert.equal(world.calls("GET /v4/linode/instances"), 2);
  assert.equal(world.events("InstanceNotFound").length, 0);
});

Deno.test("startNodeControllers() does not warn about a new Node while the forced refresh fails, and initialises it after", async () => {
  await using world = await startNodeWorld({ controllers: { forcedRefreshIntervalMs: 50 } });
  world.linode.world.addInstance({ label: "old", region: "us-east" });
  addNodes(world, kubeletNode("old"));
  await world.start();
  await waitFor(() => isInitialised(world.node("old")), { what: "old initialised" });
  world.linode.faults.outage(600, { route: "/linode/instances" });
  world.linode.world.addInstance({ label: "new", region: "us-east" });
  addNodes(world, kubeletNode("new"));
  await waitFor(() => world.linode.calls.log.some((c) => c.status === 503), {
    what: "a failed forced refresh",
  });
  await waitFor(() => isInitialised(world.node("new")), { what: "new initialised after the outage" });
  assert.equal(world.events("InstanceNotFound").length, 0, "unknown is not missing");
});

Deno.test("startNodeControllers() treats a Node deleted uninitialised and registered again as new", async () => {
  // A 30 s backoff would outlast the wait below: only the refresh-paced retry of a new Node can initialise it.
  const controllers = { forcedRefreshIntervalMs: 50, retryBaseMs: 30_000, retryMaxMs: 30_000 };
  await using world = await startNodeWorld({ controllers });
  await world.start();
  addNodes(world, kubeletNode("reborn"));
  await waitFor(() => world.events("InstanceNotFound").length === 1, { what: "InstanceNotFound event" });
  world.kube.store.delete("nodes", "reborn");
  world.kube.store.delete("leases", "reborn", "kube-node-lease");
  await waitFor(() => world.deps.nodes.list().length === 0, { what: "the deletion seen" });
  // The machine is replaced: its new Linode registers a Node of the same name, newer than the cached data.
  world.linode.world.addInstance({ label: "reborn", region: "us-east" });
  addNodes(world, kubeletNode("reborn"));
  await waitFor(() => isInitialised(world.node("reborn")), { what: "reborn initialised", timeoutMs: 5_000 });
  assert.equal(world.events("InstanceNotFound")[0]?.count ?? 1, 1, "no warning for the new Node");
});

Deno.test("startNodeControllers() initialises 500 nodes created at once with one instance listing", async () => {
  await using world = await startNodeWorld();
  world.linode.world.addInstances(500, (i) => ({ label: `n-${i}`, region: "us-east" }));
  world.linode.world.addInstances(20, (i) => ({ label: `west-${i}`, region: "us-west" }));
  await world.start();
  addNodes(world, ...Array.from({ length: 500 }, (_, i) => kubeletNode(`n-${i}`)));
  await waitFor(
    () => Array.from({ length: 500 }, (_, i) => world.node(`n-${i}`)).every(isInitialised),
    { what: "500 nodes initialised", timeoutMs: 30_000 },
  );
  assert.equal(world.calls("GET /v4/linode/instances"), 1);
  assert.equal(world.linode.calls.total(), 1);
  assert.equal(world.events("InstanceNotFound").length, 0);
});

Deno.test("InstanceCache.refresh() lists 1,000 Linodes in 2 calls", async () => {
  await using world = await startNodeWorld();
  world.linode.world.addInstances(1000, (i) => ({ label: `n-${i}`, region: "us-east" }));
  await world.cache.refresh();
  assert.equal(world.cache.peek()?.data.size, 1000);
  assert.equal(world.calls("GET /v4/linode/instances"), 2);
});

Deno.test("startNodeControllers() re-reads and re-plans when removing the taint meets a 409", async () => {
  await using world = await startNodeWorld();
  world.linode.world.addInstance({ label: "racy", region: "us-east" });
  world.kube.faults.add({ method: "PATCH", route: "/api/v1/nodes/{name}", status: 409, times: 1 });
  const late = { key: "added-meanwhile", effect: "NoSchedule" };
  addNodes(world, kubeletNode("racy", { taints: [UNINITIALIZED, late] }));
  await world.start();
  await waitFor(() => isInitialised(world.node("racy")), { what: "racy initialised" });
  assert.deepEqual(world.node("racy")?.spec?.taints, [late]);
  assert.ok(world.kube.calls.count("GET /api/v1/nodes/{name}") >= 1, "fresh read after the conflict");
});
