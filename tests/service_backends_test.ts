/**
 * Which Nodes back a NodeBalancer, through the whole CCM: upstream's stable node set (k8s.io/cloud-provider
 * v0.35.4, as the Go CCM pins it), so readiness does not count and a flapping Node costs no NodeBalancer write;
 * the exclusion label as upstream reads it (a Go false keeps the Node in, anything else takes it out); a
 * replaced Node's address, reused by its successor before the old Node is deleted, backed once.
 */
import assert from "node:assert/strict";
import { EXCLUDE_LABEL } from "../controllers/service/nodebalancer/plan.ts";
import { SERVICE_RESYNC_MS } from "../controllers/service/controller.ts";
import { setNodeReady } from "../sim/kubelet.ts";
import { backendIds, type ServiceWorld, startServiceWorld, until } from "./service_fixture.ts";

async function webWorld(): Promise<ServiceWorld> {
  // The node controller's address refresh lists Linodes every 5 min: set apart, only the service controller calls.
  const world = await startServiceWorld({ flags: ["--node-status-update-frequency=24h"] });
  world.addNode("node-1", "192.168.140.11");
  world.addNode("node-2", "192.168.140.12");
  await world.start();
  world.addService("web");
  await until(world, () => backendCount(world) === 2, "web backed by both Nodes");
  return world;
}

function backendCount(world: ServiceWorld): number {
  return Object.keys(backendIds(world.nodeBalancerOf("web"))[80] ?? {}).length;
}

function nodeBalancerWrites(world: ServiceWorld): string[] {
  return world.linode.calls.log.filter((c) => c.method !== "GET" && c.path.includes("/nodebalancers"))
    .map((c) => `${c.method} ${c.path}`);
}

function label(world: ServiceWorld, value: string | null): void {
  world.kube.store.patch("nodes", "node-2", { metadata: { labels: { [EXCLUDE_LABEL]: value } } }, {
    type: "merge",
  });
}

Deno.test("service keeps a NotReady Node's backends, and a flapping Node writes nothing to the NodeBalancer", async () => {
  await using world = await webWorld();
  const before = backendIds(world.nodeBalancerOf("web"));
  world.linode.calls.reset();
  for (let flap = 0; flap < 4; flap++) {
    setNodeReady(world.kube, "node-2", flap % 2 === 1);
    await world.tick(5_000, 1_000);
  }
  setNodeReady(world.kube, "node-2", false);
  await world.tick(SERVICE_RESYNC_MS + 10_000, 10_000); // a resync plans the NotReady Node too
  assert.deepEqual(backendIds(world.nodeBalancerOf("web")), before, "same backends, same node ids");
  assert.deepEqual(nodeBalancerWrites(world), []);
  assert.deepEqual(world.events("UpdatedLoadBalancer", "web").length, 0);
});

Deno.test("service reads the exclusion label as upstream: a Go false keeps the Node, any other value removes it", async () => {
  await using world = await webWorld();
  world.linode.calls.reset();
  label(world, "false");
  await world.tick(5_000, 1_000);
  assert.equal(backendCount(world), 2, "exclude=false keeps node-2");
  assert.deepEqual(nodeBalancerWrites(world), []);
  label(world, "yes"); // not a Go bool: upstream excludes
  await until(world, () => backendCount(world) === 1, "exclude=yes removes node-2");
  label(world, null);
  await until(world, () => backendCount(world) === 2, "node-2 back once the label goes");
});

Deno.test("service gives a reused address to the newer Node: one backend update, no refused create or re-read", async () => {
  await using world = await webWorld();
  const before = backendIds(world.nodeBalancerOf("web"));
  const old = world.linode.world.listInstances().find((l) => l.label === "node-2");
  assert.ok(old);
  await world.tick(5_000, 1_000); // node-3 is born seconds after node-2
  world.linode.calls.reset();
  // node-2's Linode is deleted and its private address goes to node-3's, while node-2 waits for the lifecycle
  // controller: both Nodes claim 192.168.140.12 until then.
  world.linode.world.deleteInstance(old.id);
  setNodeReady(world.kube, "node-2", false);
  world.addNode("node-3", "192.168.140.12");
  await until(world, () => world.node("node-2") === undefined, "node-2 deleted");
  await world.tick(SERVICE_RESYNC_MS, 10_000);
  const nb = world.nodeBalancerOf("web");
  const config = nb?.configs[0];
  assert.deepEqual(config?.nodes.map((n) => n.label).sort(), ["node-1", "node-3"]);
  assert.deepEqual(backendIds(nb), before, "node-2's backend, same id, now backs node-3");
  const reused = config?.nodes.find((n) => n.label === "node-3");
  const nbCalls = world.linode.calls.log.filter((c) => c.path.includes("/nodebalancers"));
  assert.deepEqual(
    nbCalls.filter((c) => c.status >= 400).map((c) => `${c.status} ${c.method} ${c.path}`),
    [],
  );
  assert.deepEqual(nodeBalancerWrites(world), [
    `PUT /v4/nodebalancers/${nb?.id}/configs/${config?.id}/nodes/${reused?.id}`,
  ]);
  // The ids a creation does not answer are read once, at the first change; a refused write would read again.
  const reads = nbCalls.filter((c) => c.method === "GET").map((c) => c.path);
  assert.deepEqual(reads, [...new Set(reads)], "each read once");
});
