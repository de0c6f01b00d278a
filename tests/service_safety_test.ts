import assert from "node:assert/strict";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { backendIds, type ServiceWorld, startServiceWorld, until } from "./service_fixture.ts";

const WRITE = /^(POST|PUT|DELETE) /;

function writeCount(world: ServiceWorld): number {
  return world.linode.calls.log.filter((c) => WRITE.test(c.key)).length;
}

async function ensured(world: ServiceWorld, name: string): Promise<void> {
  await until(
    world,
    () => (world.service(name)?.status?.loadBalancer?.ingress?.length ?? 0) > 0,
    `${name} to get an ingress`,
  );
}

function warnings(world: ServiceWorld, name: string): string[] {
  return world.events("SyncLoadBalancerFailed", name).map((e) => e.message ?? "");
}

// A value the Go CCM refuses too (those it reads leniently go on syncing: service_lenient_test.ts).
Deno.test("service leaves the NodeBalancer exactly as it was while an annotation is invalid", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("web");
  await ensured(world, "web");
  const before = world.nodeBalancerOf("web");
  world.linode.calls.reset();
  const timeout = annotationKey("check-timeout");
  world.kube.store.patch("services", "web", { metadata: { annotations: { [timeout]: "soon" } } }, {
    type: "merge",
    namespace: "default",
  });
  await until(world, () => warnings(world, "web").length > 0, "a Warning");
  assert.match(
    warnings(world, "web")[0] ?? "",
    /linode-loadbalancer-check-timeout="soon": expected .*1 to 30/,
  );
  const refused = () =>
    world.metrics.counter("ccm_reconciles_total", "", ["controller", "result"]).get({
      controller: "service",
      result: "permanent",
    });
  const before2 = refused();
  world.addNode("node-2", "192.168.140.12");
  await until(world, () => refused() > before2, "the Node change synced (and refused)");
  assert.equal(writeCount(world), 0, "nothing changed, not even for the new Node");
  assert.deepEqual(world.nodeBalancerOf("web"), before);

  world.kube.store.patch("services", "web", { metadata: { annotations: { [timeout]: "2" } } }, {
    type: "merge",
    namespace: "default",
  });
  await until(world, () => world.nodeBalancerOf("web")?.configs[0]?.check_timeout === 2, "fixed");
  await until(
    world,
    () => Object.keys(backendIds(world.nodeBalancerOf("web"))[80] ?? {}).length === 2,
    "node-2 added once valid",
  );
});

Deno.test("service keeps every backend when an API write fails, then converges keeping node ids", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  world.addNode("node-2", "192.168.140.12");
  await world.start();
  world.addService("web");
  await ensured(world, "web");
  const before = backendIds(world.nodeBalancerOf("web"))[80] ?? {};
  // Every backend write fails (reads still work: a NodeBalancer created in one call is read at its first change).
  const route = "/nodebalancers/{id}/configs/{id}/nodes*";
  const faults = ["POST", "PUT", "DELETE"].map((method) => world.linode.faults.error(503, { method, route }));
  world.linode.calls.reset();
  world.kube.store.delete("nodes", "node-1");
  world.addNode("node-3", "192.168.140.13");
  await until(
    world,
    () =>
      warnings(world, "web").some((m) => /\[503\]/.test(m)) &&
      world.events("UpdateLoadBalancerFailed", "web").length > 0,
    "a Warning with the reason, and UpdateLoadBalancerFailed (Events are written one after the other)",
  );
  const hosts = world.events("UpdateLoadBalancerFailed", "web").map((e) => e.message ?? "");
  assert.match(
    hosts[0] ?? "",
    /^Error updating load balancer with new hosts \[node-2( node-3)?\] \[node names limited, total number of nodes: [12]\], error: \[503\] /,
  );
  assert.deepEqual(
    backendIds(world.nodeBalancerOf("web"))[80],
    before,
    "nothing removed while adding failed",
  );
  for (const fault of faults) world.linode.faults.remove(fault);
  await until(world, () => {
    const now = backendIds(world.nodeBalancerOf("web"))[80] ?? {};
    return Object.keys(now).length === 2 && Object.keys(now).some((a) => a.startsWith("192.168.140.13:"));
  }, "converged");
  const after = backendIds(world.nodeBalancerOf("web"))[80] ?? {};
  const kept = Object.keys(before).find((a) => a.startsWith("192.168.140.12:")) ?? "";
  assert.equal(after[kept], before[kept], "node-2 kept its id");
});

Deno.test("service creates nothing while the NodeBalancer listing fails, then exactly one", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  const outage = world.linode.faults.outage(600_000, { method: "GET", route: "/nodebalancers" });
  await world.start();
  world.addService("web");
  await until(world, () => warnings(world, "web").length > 0, "a Warning");
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 0);
  world.linode.faults.remove(outage);
  await ensured(world, "web");
  assert.equal(world.nodeBalancers().length, 1);
});

Deno.test("service in a new process with the listing down creates nothing, then finds the Service's NodeBalancer by its tag", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("web");
  await ensured(world, "web");
  const [nb] = world.nodeBalancers();
  // A leadership term is a process (a lost Lease ends it): the next term starts with nothing listed.
  assert.equal(await world.stop(), "stopped");
  world.kube.store.patch("services", "web", { status: { loadBalancer: { ingress: null } } }, {
    type: "merge",
    namespace: "default",
    subresource: "status",
  });
  const outage = world.linode.faults.outage(600_000, { method: "GET", route: "/nodebalancers" });
  await world.start();
  await until(world, () => warnings(world, "web").length > 0, "a Warning: the NodeBalancers are unknown");
  await world.tick(60_000, 5_000);
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 1, "no second NodeBalancer while unknown");
  assert.equal(world.service("web")?.status?.loadBalancer?.ingress, undefined);
  world.linode.faults.remove(outage);
  await until(
    world,
    () => world.service("web")?.status?.loadBalancer?.ingress?.[0]?.ip === nb?.ipv4,
    "status restored from the ownership tag",
  );
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 1, "no second NodeBalancer");
  assert.deepEqual(world.nodeBalancers().map((n) => n.id), [nb?.id]);
});

Deno.test("service keeps the finalizer until the NodeBalancer is really deleted", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("web");
  await ensured(world, "web");
  const fault = world.linode.faults.error(503, { method: "DELETE", route: "/nodebalancers/{id}" });
  world.kube.store.delete("services", "web", "default");
  // Upstream's reason and words for a failed deletion of a Service with the finalizer, as the Go CCM's cluster
  // reports it (`DeleteLoadBalancerFailed` is upstream's for a Service deleted without one).
  const failed = () => world.events("SyncLoadBalancerFailed", "web").map((e) => e.message ?? "");
  const deleteFailed = /^Error syncing load balancer: failed to delete load balancer: \[503\] /;
  await until(world, () => failed().some((m) => deleteFailed.test(m)), "a SyncLoadBalancerFailed Warning");
  assert.ok(world.service("web")?.metadata?.deletionTimestamp, "still terminating");
  assert.equal(world.nodeBalancers().length, 1);
  world.linode.faults.remove(fault);
  await until(world, () => world.service("web") === undefined, "deleted");
  assert.deepEqual(world.nodeBalancers(), []);
});

Deno.test("service replaces a NodeBalancer deleted behind its back once the API says 404", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("web");
  await ensured(world, "web");
  const [gone] = world.nodeBalancers();
  world.linode.world.deleteNodeBalancer(gone?.id ?? 0);
  world.addNode("node-2", "192.168.140.12");
  await until(world, () => {
    const nb = world.nodeBalancerOf("web");
    return nb !== undefined && nb.id !== gone?.id && nb.configs[0]?.nodes.length === 2;
  }, "a new NodeBalancer in the status");
  assert.equal(world.nodeBalancers().length, 1);
});
