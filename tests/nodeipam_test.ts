/**
 * Node IPAM end to end: the CCM started through `runCcm` with `--allocate-node-cidrs`, against both emulators
 * (whose apiserver refuses a pod CIDR change once set, as the real one does).
 */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { addNodes, type CcmWorld, kubeletNode, startWorld } from "./ccm_fixture.ts";
import { startRouteWorld, until } from "./route_fixture.ts";

/**
 * IPv4 only, in a cluster CIDR of `ranges` /24s. `--controllers=` runs no upstream controller: node IPAM runs
 * from `--allocate-node-cidrs` alone, whatever `--controllers` says, as in the Go CCM.
 */
function ipamFlags(cidr: string): string[] {
  return [
    "--controllers=",
    "--allocate-node-cidrs",
    `--cluster-cidr=${cidr}`,
    "--disable-ipv6-node-cidr-allocation",
  ];
}

function cidrsOf(w: CcmWorld, name: string): string[] {
  return w.node(name)?.spec?.podCIDRs ?? [];
}

function register(w: CcmWorld, ...names: string[]): void {
  for (const name of names) addNodes(w, kubeletNode(name, { taints: [] }));
}

function allocated(w: CcmWorld, ...names: string[]): () => boolean {
  return () => names.every((n) => cidrsOf(w, n).length > 0);
}

function uniqueRanges(nodes: readonly V1Node[]): void {
  const all = nodes.flatMap((n) => n.spec?.podCIDRs ?? []);
  assert.equal(new Set(all).size, all.length, `pod CIDRs handed out twice: ${all.join(", ")}`);
}

Deno.test("nodeipam: Nodes without pod CIDRs get unique ranges of the cluster CIDR, written once; others are only recorded", async () => {
  await using w = await startWorld({ flags: ipamFlags("10.192.0.0/22") });
  addNodes(w, kubeletNode("has", { taints: [], podCidr: "10.192.0.0/24" }));
  register(w, "a", "b");
  await w.start();
  await w.advanceUntil(allocated(w, "a", "b"), { what: "pod CIDRs", stepMs: 1_000 });
  assert.deepEqual(cidrsOf(w, "has"), ["10.192.0.0/24"]);
  assert.deepEqual([cidrsOf(w, "a"), cidrsOf(w, "b")], [["10.192.1.0/24"], ["10.192.2.0/24"]]);
  assert.equal(w.node("a")?.spec?.podCIDR, "10.192.1.0/24");
  await w.tick(60_000, 5_000);
  assert.deepEqual([w.nodeWrites("has"), w.nodeWrites("a"), w.nodeWrites("b")], [0, 1, 1]);
  // IPv4 allocation costs no Linode call. The one listing is node-metadata's search for the Linodes of Nodes
  // without a providerID (none here): the Go CCM's node controller runs whatever --controllers says.
  assert.equal(w.calls("GET /v4/linode/instances"), 1, "node-metadata's one listing");
  assert.equal(w.linode.calls.total(), 1, "no other Linode call");
  assert.equal(w.metrics.gauge("ccm_nodeipam_free_cidrs", "").get(), 1, "one /24 of four left");
});

Deno.test("nodeipam: a restarted CCM rebuilds the allocation from the Nodes: two lifetimes never give a range twice", async () => {
  await using w = await startWorld({ flags: ipamFlags("10.192.0.0/22") });
  register(w, "a", "b");
  await w.start();
  await w.advanceUntil(allocated(w, "a", "b"), { what: "the first lifetime's ranges", stepMs: 1_000 });
  assert.equal(await w.stop(), "stopped");
  register(w, "c");
  await w.start();
  await w.advanceUntil(allocated(w, "c"), { what: "the second lifetime's range", stepMs: 1_000 });
  uniqueRanges(["a", "b", "c"].map((n) => w.node(n) as V1Node));
  assert.deepEqual(cidrsOf(w, "c"), ["10.192.2.0/24"]);
  assert.deepEqual([w.nodeWrites("a"), w.nodeWrites("b")], [1, 1], "the restart wrote nothing to them");
});

Deno.test("nodeipam: a full cluster CIDR gives a Warning Event CIDRNotAvailable; a freed range goes to the waiting Node at once", async () => {
  await using w = await startWorld({ flags: ipamFlags("10.192.0.0/23") });
  register(w, "a", "b");
  await w.start();
  await w.advanceUntil(allocated(w, "a", "b"), { what: "both ranges", stepMs: 1_000 });
  register(w, "c");
  await w.advanceUntil(() => w.events("CIDRNotAvailable", "c").length > 0, {
    what: "the Event",
    stepMs: 1_000,
  });
  const [event] = w.events("CIDRNotAvailable", "c");
  assert.equal(event?.type, "Warning");
  assert.match(event?.message ?? "", /every \/24 of --cluster-cidr 10\.192\.0\.0\/23 is in use/);
  // Others are still served: a Node that brings its own range is recorded meanwhile.
  addNodes(w, kubeletNode("own", { taints: [], podCidr: "10.50.0.0/24" }));
  await w.tick(120_000, 10_000);
  assert.deepEqual(cidrsOf(w, "c"), []);
  assert.equal(w.events("CIDRNotAvailable", "c").length, 1, "told once, not at every retry");
  const freed = cidrsOf(w, "a")[0];
  w.kube.store.delete("nodes", "a");
  const waited = await w.advanceUntil(allocated(w, "c"), { what: "the freed range", stepMs: 250 });
  assert.deepEqual(cidrsOf(w, "c"), [freed]);
  assert.ok(waited <= 1_000, `served when the range was freed, not at its next retry (${waited} ms)`);
  assert.deepEqual(cidrsOf(w, "own"), ["10.50.0.0/24"]);
});

Deno.test("nodeipam: with routes, a Node that joins without a pod CIDR gets one and then its VPC ip_ranges", async () => {
  await using w = await startRouteWorld({
    flags: ["--controllers=", "--allocate-node-cidrs", "--disable-ipv6-node-cidr-allocation"],
  });
  const id = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id);
  await until(w, () => cidrsOf(w, "worker-1").length > 0, "the pod CIDR");
  const [cidr = ""] = cidrsOf(w, "worker-1");
  assert.equal(cidr, "10.192.0.0/24");
  await until(w, () => w.linode.world.ipRanges(id).includes(cidr), "the route");
  assert.equal(w.condition("worker-1"), "False/RouteCreated");
});

/** A dual-stack VPC `cluster` (subnet `nodes` with an auto /56) and IPAM with IPv6 on. */
async function dualStackWorld() {
  const w = await startWorld({
    flags: ["--controllers=", "--allocate-node-cidrs", "--cluster-cidr=10.192.0.0/22"],
  });
  const vpc = w.linode.world.createVpc({
    label: "cluster",
    region: "us-east",
    ipv6: [{ range: "/52" }],
    subnets: [{ label: "nodes", ipv4: "10.0.0.0/24", ipv6: [{ range: "auto" }] }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const linode = (label: string, o: { ipv6?: boolean; generation?: "linode" } = {}) =>
    w.linode.world.addInstance({
      label,
      region: "us-east",
      interfaceGeneration: o.generation,
      vpc: { vpcId: vpc.id, subnetId, ipv6: o.ipv6 ?? true },
    }).id;
  const node = (name: string, id: number) =>
    addNodes(w, kubeletNode(name, { taints: [], providerID: `linode://${id}` }));
  return Object.assign(w, { linodeWith: linode, nodeOf: node });
}

Deno.test("nodeipam: the IPv6 pod CIDR is the stable /112 of the Node's VPC interface IPv6 range, either generation", async () => {
  await using w = await dualStackWorld();
  const legacy = w.linodeWith("legacy");
  const modern = w.linodeWith("modern", { generation: "linode" });
  w.nodeOf("legacy", legacy);
  w.nodeOf("modern", modern);
  await w.start();
  await w.advanceUntil(allocated(w, "legacy", "modern"), { what: "dual-stack pod CIDRs", stepMs: 1_000 });
  assert.deepEqual(cidrsOf(w, "legacy"), ["10.192.0.0/24", "2600:3c05:0:1000:0:c::/112"]);
  assert.deepEqual(cidrsOf(w, "modern"), ["10.192.1.0/24", "2600:3c05:0:1001:0:c::/112"]);
  assert.equal(
    w.calls("GET /v4/linode/instances/{id}/configs"),
    1,
    "one read of the legacy Linode's interfaces",
  );
  assert.equal(w.calls("GET /v4/linode/instances/{id}/interfaces"), 1, "one read of the Linode interfaces");
  await w.tick(60_000, 5_000);
  // One pod CIDR write each, and node-metadata's one (host-uuid, public-ipv6), which runs whatever
  // --controllers says.
  assert.deepEqual([w.nodeWrites("legacy"), w.nodeWrites("modern")], [2, 2]);
});

Deno.test("nodeipam: a Node whose VPC interface has no IPv6 range waits with a Warning Event; the IPv4 range stays its own", async () => {
  await using w = await dualStackWorld();
  const bare = w.linodeWith("bare", { ipv6: false });
  const good = w.linodeWith("good");
  w.nodeOf("bare", bare);
  await w.start();
  await w.advanceUntil(() => w.events("CIDRNotAvailable", "bare").length > 0, {
    what: "the Event",
    stepMs: 1_000,
  });
  assert.match(w.events("CIDRNotAvailable", "bare")[0]?.message ?? "", /linode \d+ has no IPv6 range/);
  w.nodeOf("good", good);
  await w.advanceUntil(allocated(w, "good"), { what: "the other Node's CIDRs", stepMs: 1_000 });
  assert.equal(cidrsOf(w, "good")[0], "10.192.1.0/24", "the waiting Node keeps 10.192.0.0/24");
  assert.deepEqual(cidrsOf(w, "bare"), []);
});

Deno.test("nodeipam: a cluster CIDR that ends where the VPC subnet ends keeps its last range back, as the Go CCM", async () => {
  await using w = await startRouteWorld({
    flags: [
      "--controllers=",
      "--allocate-node-cidrs",
      "--disable-ipv6-node-cidr-allocation",
      "--cluster-cidr=10.255.252.0/22",
    ],
  });
  const ids = ["n1", "n2", "n3", "n4"].map((n) => w.addLinode(n));
  await w.start();
  ["n1", "n2", "n3", "n4"].forEach((n, i) => w.addNode(n, ids[i] ?? 0));
  await until(w, () => w.events("CIDRNotAvailable", "n4").length > 0, "the fourth Node's Event");
  assert.deepEqual(["n1", "n2", "n3"].map((n) => cidrsOf(w, n)[0]), [
    "10.255.252.0/24",
    "10.255.253.0/24",
    "10.255.254.0/24",
  ]);
  assert.deepEqual(cidrsOf(w, "n4"), [], "10.255.255.0/24 holds the subnet's last address 10.255.255.255");
});

Deno.test("nodeipam: with IPv6, a Node without a providerID waits quietly; the update that sets it brings both ranges", async () => {
  await using w = await dualStackWorld();
  // Labelled apart from its Node, so neither node-metadata nor anyone else finds it: the providerID patch
  // below is what cloud-node would do.
  const id = w.linodeWith("joiner-linode");
  await w.start();
  addNodes(w, kubeletNode("joiner", { taints: [] }));
  await w.tick(10_000, 1_000);
  assert.deepEqual(cidrsOf(w, "joiner"), [], "no providerID, no IPv6 range: nothing written yet");
  w.kube.store.patch("nodes", "joiner", { spec: { providerID: `linode://${id}` } }, { type: "merge" });
  await w.advanceUntil(allocated(w, "joiner"), { what: "the pod CIDRs", stepMs: 250 });
  assert.deepEqual(cidrsOf(w, "joiner"), ["10.192.0.0/24", "2600:3c05:0:1000:0:c::/112"]);
  assert.equal(w.events("CIDRNotAvailable", "joiner").length, 0);
});

Deno.test("nodeipam: a refused write gives one Warning Event CIDRAssignmentFailed; the retry writes the same range", async () => {
  await using w = await startWorld({ flags: ipamFlags("10.192.0.0/22") });
  register(w, "a");
  w.kube.faults.add({ method: "PATCH", route: "/api/v1/nodes/{name}", status: 500, times: 3 });
  await w.start();
  await w.advanceUntil(() => w.events("CIDRAssignmentFailed", "a").length > 0, {
    what: "the Event",
    stepMs: 250,
  });
  assert.match(
    w.events("CIDRAssignmentFailed", "a")[0]?.message ?? "",
    /Cannot write pod CIDRs 10\.192\.0\.0\/24/,
  );
  register(w, "b");
  await w.advanceUntil(allocated(w, "a", "b"), { what: "both written", stepMs: 1_000 });
  assert.deepEqual([cidrsOf(w, "a"), cidrsOf(w, "b")], [["10.192.0.0/24"], ["10.192.1.0/24"]]);
  assert.equal(w.events("CIDRAssignmentFailed", "a").length, 1);
  assert.equal(w.events("CIDRAssignmentFailed", "a")[0]?.type, "Warning");
});

Deno.test("nodeipam: with --vpc-names and --subnet-names, nothing is handed out until the subnet is read", async () => {
  await using w = await startRouteWorld({
    flags: ["--controllers=", "--allocate-node-cidrs", "--disable-ipv6-node-cidr-allocation"],
  });
  const id = w.addLinode("worker-1");
  const fault = w.linode.faults.error(503, { method: "GET", route: "/v4/vpcs" });
  await w.start();
  w.addNode("worker-1", id);
  await w.tick(30_000, 1_000);
  assert.deepEqual(cidrsOf(w, "worker-1"), [], "no range while the VPC subnet is unknown");
  assert.equal(w.nodeWrites("worker-1"), 0);
  w.linode.faults.remove(fault);
  await until(w, () => cidrsOf(w, "worker-1").length > 0, "the pod CIDR once the subnet is read");
  assert.deepEqual(cidrsOf(w, "worker-1"), ["10.192.0.0/24"]);
});
