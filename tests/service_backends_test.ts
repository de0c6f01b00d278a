/**
 * Which Nodes back a NodeBalancer, through the whole CCM: upstream's stable node set (k8s.io/cloud-provider
 * v0.35.4, as the Go CCM pins it), so readiness does not count and a flapping Node costs no NodeBalancer write;
 * the exclusion label as upstream reads it (a Go false keeps the Node in, anything else takes it out).
 */
import assert from "node:assert/strict";
import { EXCLUDE_LABEL } from "../controllers/service/nodebalancer/backends.ts";
import { SERVICE_RESYNC_MS } from "../controllers/service/service_controller.ts";
import { setNodeReady } from "../sim/kubelet.ts";
import { backendIds, type ServiceWorld, startServiceWorld, until } from "./service_fixture.ts";

async function webWorld(): Promise<ServiceWorld> {
  // The node controller's address refresh lists Linodes every 5 min: set apart, only the service controller calls.
  const world = await startServiceWorld({ flags: ["--node-status-update-frequency=24h"] });
  world.addNode("node-1", "192.168.0.11");
  world.addNode("node-2", "192.168.0.12");
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
