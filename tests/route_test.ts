/** The route controller end to end: Nodes' pod CIDRs become VPC interface ranges in the Linode emulator. */
import assert from "node:assert/strict";
import { LIST_VPC_IPS, PUT_CONFIG_INTERFACE, startRouteWorld, waitFor } from "./route_fixture.ts";

Deno.test("route: a new Node's pod CIDR is routed to its Linode and NetworkUnavailable is False/RouteCreated", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await waitFor(() => w.condition("worker-1") === "False/RouteCreated", { what: "the condition" });
  assert.deepEqual(w.linode.world.ipRanges(id), ["10.192.1.0/24"]);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1);
  const passes = w.passes();
  await waitFor(() => w.passes() >= passes + 3, { what: "three more resyncs" });
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1, "a range in place is never written again");
  assert.equal(w.calls(LIST_VPC_IPS), 1, "one listing per TTL, none per Node or pass");
  assert.equal(w.events("FailedToCreateRoute").length, 0);
});

Deno.test("route: a Node without a pod CIDR gets nothing until its pod CIDR is set", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("worker-1", ["10.192.9.0/24"]);
  await w.start();
  w.addNode("worker-1", id);
  const passes = w.passes();
  await waitFor(() => w.passes() >= passes + 2, { what: "two passes" });
  assert.deepEqual(w.linode.world.ipRanges(id), ["10.192.9.0/24"], "its ranges are not touched");
  assert.equal(w.condition("worker-1"), undefined);
  w.kube.store.patch(
    "nodes",
    "worker-1",
    { spec: { podCIDR: "10.192.1.0/24", podCIDRs: ["10.192.1.0/24"] } },
    {
      type: "merge",
    },
  );
  await waitFor(() => w.condition("worker-1") === "False/RouteCreated", { what: "the route" });
  assert.deepEqual(w.linode.world.ipRanges(id), ["10.192.1.0/24"], "the stale cluster range is replaced");
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1);
});

Deno.test("route: a Node registered again with a new pod CIDR moves its range, keeping ranges outside the cluster CIDR", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("worker-1", ["172.16.5.0/24"]);
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await waitFor(() => w.linode.world.ipRanges(id).includes("10.192.1.0/24"), { what: "the first route" });
  w.kube.store.delete("nodes", "worker-1");
  w.kube.store.delete("leases", "worker-1", "kube-node-lease");
  w.addNode("worker-1", id, "10.192.2.0/24");
  await waitFor(() => w.linode.world.ipRanges(id).includes("10.192.2.0/24"), { what: "the new route" });
  await waitFor(() => !w.linode.world.ipRanges(id).includes("10.192.1.0/24"), { what: "the old one to go" });
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
  await waitFor(() => w.linode.world.ipRanges(b).length === 1 && w.linode.world.ipRanges(a).length === 2, {
    what: "both routes",
  });
  w.kube.store.delete("nodes", "worker-a");
  await waitFor(() => !w.linode.world.ipRanges(a).includes("10.192.1.0/24"), { what: "the removal" });
  assert.deepEqual(w.linode.world.ipRanges(a), ["192.168.77.0/24"], "a range outside the cluster CIDR stays");
  assert.deepEqual(w.linode.world.ipRanges(b), ["10.192.2.0/24"]);
  assert.deepEqual(
    w.linode.world.ipRanges(foreign),
    ["10.192.200.0/24"],
    "a Linode that is no Node is untouched",
  );
  const writes = w.calls(PUT_CONFIG_INTERFACE);
  const passes = w.passes();
  await waitFor(() => w.passes() >= passes + 3, { what: "three more resyncs" });
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), writes, "the removal is not repeated");
});

Deno.test("route: a Node is found by providerID only: a Node named unlike its Linode's label keeps its routes", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("renamed-in-cloud-manager");
  const other = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await waitFor(() => w.condition("worker-1") === "False/RouteCreated", { what: "the route" });
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
  await waitFor(() => w.condition("dual") === "False/RouteCreated", { what: "the dual-stack route" });
  assert.deepEqual(w.linode.world.ipRanges(a), ["10.192.1.0/24"]);
  await waitFor(() => w.condition("outside") === "True/NoRouteCreated", { what: "the failed condition" });
  const passes = w.passes();
  await waitFor(() => w.passes() >= passes + 3, { what: "three more resyncs" });
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
  await waitFor(() => w.condition("no-vpc") === "True/NoRouteCreated", { what: "the condition" });
  const passes = w.passes();
  await waitFor(() => w.passes() >= passes + 3, { what: "three more resyncs" });
  const events = w.events("FailedToCreateRoute");
  assert.equal(events.length, 1);
  assert.equal(events[0]?.count ?? 1, 1);
  assert.match(events[0]?.message ?? "", /linode \d+ has no interface in a configured VPC subnet/);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 0);
});

Deno.test("route: drift is repaired once the listing refreshes: a route removed by hand returns, a range added stays", async () => {
  await using w = await startRouteWorld({ ttlMs: 200 });
  const id = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id, "10.192.1.0/24");
  await waitFor(() => w.linode.world.ipRanges(id).length === 1, { what: "the route" });
  w.linode.world.setIpRanges(id, ["172.16.9.0/24"]);
  await waitFor(() => w.linode.world.ipRanges(id).length === 2, { what: "the repair" });
  assert.deepEqual(w.linode.world.ipRanges(id), ["172.16.9.0/24", "10.192.1.0/24"]);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 2);
});
