/**
 * A cluster scaling up: each new Linode is created just before its Node registers (providerID and pod CIDR
 * set, as Cluster API's kubelet and node IPAM leave it). The Linode is newer than the VPC listing: its range
 * must be programmed from one read of its own interfaces, without a listing and without a false Warning.
 */
import assert from "node:assert/strict";
import {
  LIST_VPC_IPS,
  PUT_CONFIG_INTERFACE,
  PUT_LINODE_INTERFACE,
  startRouteWorld,
  until,
} from "./route_fixture.ts";

const NEW_NODES = 10;
const CONFIGS = "GET /v4/linode/instances/{id}/configs";
const LINODE_IFACES = "GET /v4/linode/instances/{id}/interfaces";

/** Every value the Node's NetworkUnavailable condition took, in order (`status/reason`). */
function conditionHistory(w: Awaited<ReturnType<typeof startRouteWorld>>, name: string): string[] {
  const seen: string[] = [];
  w.kube.store.subscribe((event) => {
    const node = event.object as { metadata?: { name?: string }; status?: { conditions?: unknown[] } };
    if (node.metadata?.name !== name) return;
    const c = (node.status?.conditions ?? []) as { type: string; status: string; reason: string }[];
    const mine = c.find((x) => x.type === "NetworkUnavailable");
    const text = mine && `${mine.status}/${mine.reason}`;
    if (text && seen.at(-1) !== text) seen.push(text);
  });
  return seen;
}

for (const generation of ["legacy_config", "linode"] as const) {
  Deno.test(`route: new Linodes with their Nodes, one every 3 s, are routed from one read of their own interfaces (${generation})`, async () => {
    await using w = await startRouteWorld();
    const first = w.addLinode("worker-0");
    w.addNode("worker-0", first, "10.192.0.0/24");
    await w.start();
    await until(w, () => w.condition("worker-0") === "False/RouteCreated", "the first route");
    const listings = w.calls(LIST_VPC_IPS);
    assert.equal(listings, 1);
    w.linode.calls.reset();
    const histories = new Map<string, string[]>();
    for (let i = 1; i <= NEW_NODES; i++) {
      await w.tick(3_000, 1_000);
      const name = `worker-${i}`;
      const subnetId = w.subnetId;
      const id = w.linode.world.addInstance({
        label: name,
        region: "us-east",
        interfaceGeneration: generation,
        vpc: { vpcId: w.vpcId, subnetId },
      }).id;
      histories.set(name, conditionHistory(w, name));
      w.addNode(name, id, `10.192.${i}.0/24`);
      const tookMs = await until(w, () => w.linode.world.ipRanges(id).length === 1, `the route of ${name}`);
      assert.ok(tookMs <= 2_000, `${name} routed in ${tookMs} ms of fake time`);
      assert.deepEqual(w.linode.world.ipRanges(id), [`10.192.${i}.0/24`]);
      await until(w, () => w.condition(name) === "False/RouteCreated", `the condition of ${name}`);
    }
    assert.equal(w.calls(LIST_VPC_IPS), 0, "no VPC listing");
    assert.equal(w.calls("GET /v4/linode/instances"), 0, "no instance listing");
    assert.equal(w.calls(CONFIGS), NEW_NODES, "one read of each new Linode's config profiles");
    // A Linode with Linode interfaces has no config profile interface: its interfaces are a second read.
    assert.equal(w.calls(LINODE_IFACES), generation === "linode" ? NEW_NODES : 0);
    const put = generation === "linode" ? PUT_LINODE_INTERFACE : PUT_CONFIG_INTERFACE;
    assert.equal(w.calls(put), NEW_NODES, "one write each");
    assert.equal(
      w.events("FailedToCreateRoute").length,
      0,
      "never reported as a Linode without VPC interface",
    );
    for (const [name, history] of histories) assert.deepEqual(history, ["False/RouteCreated"], name);
  });
}

Deno.test("route: a Linode whose own interfaces show none in the VPC is reported once, and read again with backoff", async () => {
  await using w = await startRouteWorld();
  await w.start();
  await w.tick(1_000);
  const outside = w.linode.world.addInstance({ label: "no-vpc", region: "us-east" }).id;
  w.addNode("no-vpc", outside, "10.192.1.0/24");
  await until(w, () => w.condition("no-vpc") === "True/NoRouteCreated", "the condition");
  assert.equal(w.events("FailedToCreateRoute").length, 1);
  const reads = w.calls(CONFIGS);
  assert.equal(reads, 1, "read once, then reported: the read proves it");
  // Reads again at 2 s, 4 s, 8 s ... up to 5 min apart: one read per few minutes for a Linode never in the VPC.
  await w.tick(60_000, 1_000);
  const after = w.calls(CONFIGS);
  assert.ok(after > reads && after <= reads + 6, `${after - reads} more reads in a minute`);
  assert.equal(w.calls(LIST_VPC_IPS), 1, "no listing for it");
  assert.equal(w.events("FailedToCreateRoute").length, 1, "still one Warning");
});

Deno.test("route: a failed read of a new Linode's interfaces is pending, not a Warning, and retried", async () => {
  await using w = await startRouteWorld();
  await w.start();
  await w.tick(1_000);
  w.linode.faults.error(503, { route: "/linode/instances/{id}/configs" });
  const id = w.addLinode("worker-1");
  w.addNode("worker-1", id, "10.192.1.0/24");
  await w.tick(3_000, 250);
  assert.deepEqual(w.linode.world.ipRanges(id), []);
  assert.equal(w.events("FailedToCreateRoute").length, 0, "unknown is not missing");
  assert.notEqual(w.condition("worker-1"), "True/NoRouteCreated");
  w.linode.faults.clear();
  await until(w, () => w.linode.world.ipRanges(id).length === 1, "the route after the outage");
  assert.equal(w.calls(LIST_VPC_IPS), 1, "no listing");
});
