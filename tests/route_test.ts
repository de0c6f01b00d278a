/** The route controller end to end: Nodes' pod CIDRs become VPC interface ranges in the Linode emulator. */
import assert from "node:assert/strict";
import { setNodeReady } from "../sim/kubelet.ts";
import { addNodes, isInitialised, kubeletNode } from "./ccm_fixture.ts";
import {
  LIST_VPC_IPS,
  PUT_CONFIG_INTERFACE,
  resyncs,
  type RouteWorld,
  startRouteWorld,
  until,
} from "./route_fixture.ts";

Deno.test("route: a new Node's pod CIDR is routed to its Linode and NetworkUnavailable is False/RouteCreated", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await until(w, () => w.condition("worker-1") === "False/RouteCreated", "the condition");
  assert.deepEqual(w.linode.world.ipRanges(id), ["10.192.1.0/24"]);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1);
  await resyncs(w, 3);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1, "a range in place is never written again");
  assert.equal(w.calls(LIST_VPC_IPS), 1, "one listing per TTL, none per Node or pass");
  assert.equal(w.events("FailedToCreateRoute").length, 0);
});

Deno.test("route: a Node without a pod CIDR gets nothing until its pod CIDR is set", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("worker-1", ["10.192.9.0/24"]);
  await w.start();
  w.addNode("worker-1", id);
  await resyncs(w, 2);
  assert.deepEqual(w.linode.world.ipRanges(id), ["10.192.9.0/24"], "its ranges are not touched");
  assert.equal(w.condition("worker-1"), undefined);
  const podCidr = { spec: { podCIDR: "10.192.1.0/24", podCIDRs: ["10.192.1.0/24"] } };
  w.kube.store.patch("nodes", "worker-1", podCidr, { type: "merge" });
  await until(w, () => w.condition("worker-1") === "False/RouteCreated", "the route");
  assert.deepEqual(w.linode.world.ipRanges(id), ["10.192.1.0/24"], "the stale cluster range is replaced");
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1);
});

Deno.test("route: a Node registered again with a new pod CIDR moves its range, keeping ranges outside the cluster CIDR", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("worker-1", ["172.16.5.0/24"]);
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await until(w, () => w.linode.world.ipRanges(id).includes("10.192.1.0/24"), "the first route");
  w.kube.store.delete("nodes", "worker-1");
  w.kube.store.delete("leases", "worker-1", "kube-node-lease");
  w.addNode("worker-1", id, "10.192.2.0/24");
  await until(w, () => w.linode.world.ipRanges(id).includes("10.192.2.0/24"), "the new route");
  await until(w, () => !w.linode.world.ipRanges(id).includes("10.192.1.0/24"), "the old one to go");
  assert.deepEqual(w.linode.world.ipRanges(id), ["172.16.5.0/24", "10.192.2.0/24"]);
});

Deno.test("route: a deleted Node's range is removed from its Linode; foreign ranges and Linodes stay", async () => {
  await using w = await startRouteWorld();
  const a = w.addLinode("worker-a", ["192.168.77.0/24"]);
  const b = w.addLinode("worker-b");
  const foreign = w.addLinode("not-a-node", ["10.192.200.0/24"]);
  await w.start();
  w.addNode("worker-a", a, "10.192.1.0/24");
  w.addNode("worker-b", b, "10.192.2.0/24");
  await until(
    w,
    () => w.linode.world.ipRanges(b).length === 1 && w.linode.world.ipRanges(a).length === 2,
    "both routes",
  );
  w.kube.store.delete("nodes", "worker-a");
  await until(w, () => !w.linode.world.ipRanges(a).includes("10.192.1.0/24"), "the removal");
  assert.deepEqual(w.linode.world.ipRanges(a), ["192.168.77.0/24"], "a range outside the cluster CIDR stays");
  assert.deepEqual(w.linode.world.ipRanges(b), ["10.192.2.0/24"]);
  assert.deepEqual(
    w.linode.world.ipRanges(foreign),
    ["10.192.200.0/24"],
    "a Linode that is no Node is untouched",
  );
  const writes = w.calls(PUT_CONFIG_INTERFACE);
  await resyncs(w, 3);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), writes, "the removal is not repeated");
});

/** Starts the CCM with Nodes `worker-a` and `worker-b`, each routed; returns their Linodes' ids. */
async function twoRoutedNodes(w: RouteWorld): Promise<[number, number]> {
  const a = w.addLinode("worker-a");
  const b = w.addLinode("worker-b");
  await w.start();
  w.addNode("worker-a", a, "10.192.1.0/24");
  w.addNode("worker-b", b, "10.192.2.0/24");
  const routes = () => w.linode.world.ipRanges(a).length + w.linode.world.ipRanges(b).length;
  await until(w, () => routes() === 2, "both routes");
  return [a, b];
}

Deno.test("route: a Node leaving with its Linode costs one removal attempt: the API's 404 says its ranges went too", async () => {
  await using w = await startRouteWorld();
  const [a, b] = await twoRoutedNodes(w);
  const writes = w.calls(PUT_CONFIG_INTERFACE);
  const listings = w.calls(LIST_VPC_IPS);
  // As a machine leaves: its Node is deleted and its Linode goes before the controller's pass writes.
  w.kube.store.delete("nodes", "worker-a");
  w.linode.world.deleteInstance(a);
  await until(w, () => w.calls(PUT_CONFIG_INTERFACE) > writes, "the removal attempt");
  // Write retries back off 1 s doubling, and a failed write relists after the 60 s routes cache TTL.
  await w.tick(120_000, 1_000);
  assert.equal(
    w.calls(PUT_CONFIG_INTERFACE),
    writes + 1,
    "one attempt, no retry of a removal from a gone Linode",
  );
  assert.equal(w.calls(LIST_VPC_IPS), listings, "and no relisting for it");
  assert.deepEqual(w.linode.world.ipRanges(b), ["10.192.2.0/24"]);
  assert.equal(w.events("FailedToCreateRoute").length, 0);
});

Deno.test("route with the node lifecycle: a Node deleted because its Linode is gone costs no route write", async () => {
  await using w = await startRouteWorld({ flags: ["--controllers=cloud-node-lifecycle"] });
  const [a, b] = await twoRoutedNodes(w);
  const writes = w.calls(PUT_CONFIG_INTERFACE);
  // The machine goes first; its Node turns NotReady, and the lifecycle controller's GET answers 404.
  w.linode.world.deleteInstance(a);
  setNodeReady(w.kube, "worker-a", false);
  await until(w, () => w.node("worker-a") === undefined, "the Node deleted");
  await w.tick(120_000, 1_000);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), writes, "no removal sent to a Linode the API said is gone");
  assert.deepEqual(w.linode.world.ipRanges(b), ["10.192.2.0/24"]);
  assert.equal(w.events("FailedToCreateRoute").length, 0);
});

Deno.test("route: a Node is found by providerID only: a Node named unlike its Linode's label keeps its routes", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("renamed-in-cloud-manager");
  const other = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await until(w, () => w.condition("worker-1") === "False/RouteCreated", "the route");
  assert.deepEqual(w.linode.world.ipRanges(id), ["10.192.1.0/24"]);
  assert.deepEqual(w.linode.world.ipRanges(other), [], "the Linode labelled like the Node is not its Linode");
});

Deno.test("route: IPv6 pod CIDRs are skipped; a pod CIDR outside the cluster CIDR gets one Warning Event", async () => {
  await using w = await startRouteWorld();
  const a = w.addLinode("worker-a");
  const b = w.addLinode("worker-b");
  await w.start();
  w.kube.store.create("nodes", {
    metadata: { name: "dual" },
    spec: {
      providerID: `linode://${a}`,
      podCIDR: "10.192.1.0/24",
      podCIDRs: ["10.192.1.0/24", "fd00:10::/64"],
    },
  });
  w.addNode("outside", b, "10.50.0.0/24");
  await until(w, () => w.condition("dual") === "False/RouteCreated", "the dual-stack route");
  assert.deepEqual(w.linode.world.ipRanges(a), ["10.192.1.0/24"]);
  await until(w, () => w.condition("outside") === "True/NoRouteCreated", "the failed condition");
  await resyncs(w, 3);
  const events = w.events("FailedToCreateRoute");
  assert.equal(events.length, 1);
  assert.equal(events[0]?.count ?? 1, 1, "reported once, not every pass");
  assert.match(
    events[0]?.message ?? "",
    /10\.50\.0\.0\/24 for node outside: not an IPv4 CIDR inside --cluster-cidr/,
  );
  assert.deepEqual(w.linode.world.ipRanges(b), []);
});

Deno.test("route: a Linode without a VPC interface is reported once, not every pass", async () => {
  await using w = await startRouteWorld();
  const outside = w.linode.world.addInstance({ label: "no-vpc", region: "us-east" }).id;
  await w.start();
  w.addNode("no-vpc", outside, "10.192.1.0/24");
  await until(w, () => w.condition("no-vpc") === "True/NoRouteCreated", "the condition");
  await resyncs(w, 3);
  const events = w.events("FailedToCreateRoute");
  assert.equal(events.length, 1);
  assert.equal(events[0]?.count ?? 1, 1);
  assert.match(events[0]?.message ?? "", /linode \d+ has no interface in a configured VPC subnet/);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 0);
});

Deno.test("route: drift is repaired within the drift period: a route removed by hand returns, a range added stays", async () => {
  // The drift period is the status period (shortened here); the bound is one period plus one resync.
  await using w = await startRouteWorld({ flags: ["--node-status-update-frequency=1m"] });
  const driftMs = w.config.nodes.statusUpdateFrequencyMs;
  const boundMs = driftMs + w.config.routes.reconciliationPeriodMs;
  const id = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await until(w, () => w.linode.world.ipRanges(id).length === 1, "the route");
  w.linode.world.setIpRanges(id, ["172.16.9.0/24"]);
  await w.tick(driftMs / 2, 1_000);
  assert.deepEqual(w.linode.world.ipRanges(id), ["172.16.9.0/24"], "a listing within the period is trusted");
  assert.equal(w.calls(LIST_VPC_IPS), 1);
  const tookMs = await until(w, () => w.linode.world.ipRanges(id).length === 2, "the repair");
  assert.ok(tookMs + driftMs / 2 <= boundMs, `repaired ${tookMs + driftMs / 2} ms after the change`);
  assert.deepEqual(w.linode.world.ipRanges(id), ["172.16.9.0/24", "10.192.1.0/24"]);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 2);
  assert.equal(w.calls(LIST_VPC_IPS), 2, "one refresh");
});

Deno.test("route: a Linode's interface replaced by hand is found within the drift period and routed", async () => {
  await using w = await startRouteWorld({ flags: ["--node-status-update-frequency=1m"] });
  const driftMs = w.config.nodes.statusUpdateFrequencyMs;
  const boundMs = driftMs + w.config.routes.reconciliationPeriodMs;
  const id = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await until(w, () => w.linode.world.ipRanges(id).length === 1, "the route");
  // By hand: the VPC interface is detached and a new one (another id, no ranges) attached.
  const before = w.linode.world.instances.vpcInterface(id)?.id;
  w.linode.world.replaceVpcInterface(id);
  assert.notEqual(w.linode.world.instances.vpcInterface(id)?.id, before);
  assert.deepEqual(w.linode.world.ipRanges(id), []);
  const tookMs = await until(w, () => w.linode.world.ipRanges(id).length === 1, "the new interface routed");
  assert.ok(tookMs <= boundMs, `routed ${tookMs} ms after the change (bound ${boundMs} ms)`);
  assert.equal(w.calls(LIST_VPC_IPS), 2, "found by the drift listing");
});

Deno.test("route with the node controllers: a Linode that joins after start is initialised, then routed at once", async () => {
  await using w = await startRouteWorld({ flags: ["--controllers=cloud-node,cloud-node-lifecycle"] });
  await w.start();
  await w.tick(5_000, 1_000);
  const listings = w.calls(LIST_VPC_IPS);
  // A new machine: created after the listing, its kubelet registers the Node (tainted, no providerID).
  const id = w.addLinode("worker-1");
  addNodes(w, kubeletNode("worker-1", { podCidr: "10.192.1.0/24" }));
  const tookMs = await until(w, () => w.condition("worker-1") === "False/RouteCreated", "the route");
  assert.ok(isInitialised(w.node("worker-1")), "cloud-node initialised it");
  assert.equal(w.node("worker-1")?.spec?.providerID, `linode://${id}`);
  assert.deepEqual(w.linode.world.ipRanges(id), ["10.192.1.0/24"]);
  assert.ok(tookMs <= 2_000, `routed ${tookMs} ms after joining, not at the next listing`);
  assert.equal(w.calls(LIST_VPC_IPS), listings, "no VPC listing");
  assert.equal(w.calls("GET /v4/linode/instances/{id}/configs"), 1, "one read of its own interfaces");
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1);
  assert.equal(w.events("FailedToCreateRoute").length, 0, "never reported as a Linode without VPC interface");
});

Deno.test("route: an idle resync after a settled pass plans nothing; a condition set by hand is put back at the next one", async () => {
  await using w = await startRouteWorld();
  const skipped = () =>
    w.metrics.counter("ccm_passes_skipped_total", "", ["controller"]).get({ controller: "route" });
  const id = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await until(w, () => w.condition("worker-1") === "False/RouteCreated", "the condition");
  await resyncs(w, 1);
  const before = skipped();
  await resyncs(w, 3);
  assert.equal(skipped(), before + 3, "nothing changed: each resync is skipped");
  // By hand: someone says the network is unavailable. The pass reads that, so the next resync is not skipped.
  const conditions = [{ type: "NetworkUnavailable", status: "True", reason: "ByHand", message: "" }];
  w.kube.store.patch("nodes", "worker-1", { status: { conditions } }, {
    type: "strategic",
    subresource: "status",
  });
  await until(w, () => w.condition("worker-1") === "False/RouteCreated", "the condition put back");
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1, "the range itself was never written again");
  const after = skipped();
  await resyncs(w, 3);
  // The first resync reads its own condition write (a Node change), then the cluster is settled again.
  assert.equal(skipped(), after + 2, "settled again");
});

Deno.test("route: a drift re-list that finds what the cache holds leaves a settled cluster settled", async () => {
  await using w = await startRouteWorld({ flags: ["--node-status-update-frequency=1m"] });
  const skipped = () =>
    w.metrics.counter("ccm_passes_skipped_total", "", ["controller"]).get({ controller: "route" });
  const driftMs = w.config.nodes.statusUpdateFrequencyMs;
  const ids = ["worker-1", "worker-2", "worker-3"].map((name) => w.addLinode(name));
  await w.start();
  // Three Nodes: the listing holds each interface's address and range together, where the cache recorded
  // the writes' ranges after every address; that order alone is no change.
  ids.forEach((id, i) => w.addNode(`worker-${i + 1}`, id, `10.192.${i + 1}.0/24`));
  await until(
    w,
    () => ids.every((_, i) => w.condition(`worker-${i + 1}`) === "False/RouteCreated"),
    "conditions",
  );
  await resyncs(w, 1);
  const listings = w.calls(LIST_VPC_IPS);
  const before = skipped();
  const count = Math.ceil(driftMs / w.config.routes.reconciliationPeriodMs) + 2;
  await resyncs(w, count);
  assert.ok(w.calls(LIST_VPC_IPS) > listings, "the listing was read again for drift");
  assert.equal(skipped(), before + count, "nothing new in it: every resync skipped, none planned every Node");
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 3);
});

Deno.test("route: a settled cluster still finds a range removed by hand at the drift re-list, and a new Node at once", async () => {
  await using w = await startRouteWorld({ flags: ["--node-status-update-frequency=1m"] });
  const driftMs = w.config.nodes.statusUpdateFrequencyMs;
  const id = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await until(w, () => w.linode.world.ipRanges(id).length === 1, "the route");
  await resyncs(w, 2);
  w.linode.world.setIpRanges(id, []);
  const tookMs = await until(w, () => w.linode.world.ipRanges(id).length === 1, "the repair");
  assert.ok(tookMs <= driftMs + w.config.routes.reconciliationPeriodMs, `repaired after ${tookMs} ms`);
  const other = w.addLinode("worker-2");
  w.addNode("worker-2", other, "10.192.2.0/24");
  await until(w, () => w.linode.world.ipRanges(other).length === 1, "the new Node's route");
});
