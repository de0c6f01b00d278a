import assert from "node:assert/strict";
import { ownershipTag } from "../controllers/service/ownership.ts";
import { SERVICE_RESYNC_MS } from "../controllers/service/controller.ts";
import { LB_FINALIZER } from "../controllers/service/read.ts";
import { backendIds, type ServiceWorld, startServiceWorld, until } from "./service_fixture.ts";

const PRESERVE = "service.beta.kubernetes.io/linode-loadbalancer-preserve";

async function cluster(world: ServiceWorld, ...ips: string[]): Promise<void> {
  ips.forEach((ip, i) => world.addNode(`node-${i + 1}`, ip));
  await world.start();
}

async function ensured(world: ServiceWorld, name: string): Promise<void> {
  await until(
    world,
    () => (world.service(name)?.status?.loadBalancer?.ingress?.length ?? 0) > 0,
    `${name} to get an ingress`,
  );
}

Deno.test("service adds the finalizer, creates one NodeBalancer, reports it, and on deletion removes both", async () => {
  await using world = await startServiceWorld();
  await cluster(world, "192.168.140.11", "192.168.140.12");
  const created = world.addService("web", { ports: [{ port: 80 }, { port: 443 }] });
  await ensured(world, "web");
  const svc = world.service("web");
  assert.deepEqual(svc?.metadata?.finalizers, [LB_FINALIZER]);
  const nbs = world.nodeBalancers();
  assert.equal(nbs.length, 1);
  const nb = nbs[0];
  assert.ok(nb);
  assert.match(nb.label, /^ccm-/);
  assert.ok(nb.tags.includes(ownershipTag("kubernetes", created.metadata?.uid ?? "")), "ownership tag");
  assert.deepEqual(svc?.status?.loadBalancer?.ingress, [{ ip: nb.ipv4, hostname: nb.hostname }]);
  const ports = Object.fromEntries((svc?.spec?.ports ?? []).map((p) => [p.port, p.nodePort]));
  assert.deepEqual(
    nb.configs.map((c) => [c.port, c.nodes.map((n) => n.address).sort()]),
    [80, 443].map((p) => [p, [`192.168.140.11:${ports[p]}`, `192.168.140.12:${ports[p]}`]]),
  );
  assert.equal(world.events("EnsuringLoadBalancer", "web").length, 1);
  assert.equal(world.events("EnsuredLoadBalancer", "web").length, 1);

  world.kube.store.delete("services", "web", "default");
  await until(world, () => world.service("web") === undefined, "web to be deleted");
  assert.deepEqual(world.nodeBalancers(), []);
  assert.equal(world.events("DeletingLoadBalancer", "web").length, 1);
  assert.equal(world.events("DeletedLoadBalancer", "web").length, 1);
});

Deno.test("service on a type change away from LoadBalancer deletes the NodeBalancer, clears the status and drops the finalizer", async () => {
  await using world = await startServiceWorld();
  await cluster(world, "192.168.140.11");
  world.addService("web");
  await ensured(world, "web");
  world.kube.store.patch("services", "web", { spec: { type: "ClusterIP" } }, {
    type: "merge",
    namespace: "default",
  });
  await until(world, () => world.service("web")?.metadata?.finalizers === undefined, "finalizer dropped");
  assert.deepEqual(world.service("web")?.status?.loadBalancer?.ingress, undefined);
  assert.deepEqual(world.nodeBalancers(), []);
});

Deno.test("service keeps a preserved NodeBalancer when the Service goes", async () => {
  await using world = await startServiceWorld();
  await cluster(world, "192.168.140.11");
  world.addService("web", { annotations: { [PRESERVE]: "true" } });
  await ensured(world, "web");
  const before = world.nodeBalancers();
  world.kube.store.delete("services", "web", "default");
  await until(world, () => world.service("web") === undefined, "web to be deleted");
  assert.deepEqual(world.nodeBalancers().map((nb) => nb.id), before.map((nb) => nb.id));
  assert.equal(world.linode.calls.count("DELETE /v4/nodebalancers/{id}"), 0);
  assert.equal(world.events("PreservedLoadBalancer", "web").length, 1);
});

Deno.test("service makes no Linode call for unchanged Services, however often they resync", async () => {
  // The node controller's address refresh lists Linodes every 5 min: set apart, the whole CCM must be quiet.
  await using world = await startServiceWorld({ flags: ["--node-status-update-frequency=24h"] });
  await cluster(world, "192.168.140.11", "192.168.140.12");
  for (const name of ["a", "b", "c"]) world.addService(name);
  for (const name of ["a", "b", "c"]) await ensured(world, name);
  const reconciles = () =>
    world.metrics.counter("ccm_reconciles_total", "", ["controller", "result"]).get({
      controller: "service",
      result: "success",
    });
  world.linode.calls.reset();
  const from = reconciles();
  await world.tick(3 * SERVICE_RESYNC_MS, 10_000);
  assert.ok(reconciles() >= from + 9, `three more resyncs of each Service: ${reconciles() - from}`);
  assert.equal(world.linode.calls.total(), 0, JSON.stringify(world.linode.calls.log.slice(-5)));
});

Deno.test("service follows Node changes in place, keeping the node ids of backends that stay", async () => {
  await using world = await startServiceWorld();
  await cluster(world, "192.168.140.11", "192.168.140.12");
  world.addService("web");
  await ensured(world, "web");
  const before = backendIds(world.nodeBalancerOf("web"))[80] ?? {};
  world.addNode("node-3", "192.168.140.13");
  await until(
    world,
    () => Object.keys(backendIds(world.nodeBalancerOf("web"))[80] ?? {}).length === 3,
    "node-3 added",
  );
  const grown = backendIds(world.nodeBalancerOf("web"))[80] ?? {};
  for (const [address, id] of Object.entries(before)) {
    assert.equal(grown[address], id, `${address} kept its id`);
  }
  world.kube.store.delete("nodes", "node-1");
  await until(
    world,
    () => Object.keys(backendIds(world.nodeBalancerOf("web"))[80] ?? {}).length === 2,
    "node-1 removed",
  );
  const shrunk = backendIds(world.nodeBalancerOf("web"))[80] ?? {};
  for (const [address, id] of Object.entries(shrunk)) {
    assert.equal(grown[address], id, `${address} kept its id`);
  }
  assert.equal(world.nodeBalancers().length, 1);
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 1);
  const updates = () => world.events("UpdatedLoadBalancer", "web").reduce((n, e) => n + (e.count ?? 1), 0);
  await until(world, () => updates() >= 2, "an UpdatedLoadBalancer Event per Node change");
});

Deno.test("service restores a lost status from the ownership tag without a second NodeBalancer", async () => {
  await using world = await startServiceWorld();
  await cluster(world, "192.168.140.11");
  world.addService("web");
  await ensured(world, "web");
  const [nb] = world.nodeBalancers();
  world.kube.store.patch("services", "web", { status: { loadBalancer: { ingress: null } } }, {
    type: "merge",
    namespace: "default",
    subresource: "status",
  });
  await until(
    world,
    () => world.service("web")?.status?.loadBalancer?.ingress?.[0]?.ip === nb?.ipv4,
    "status restored",
  );
  assert.equal(world.nodeBalancers().length, 1);
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 1);
});

Deno.test("service reports hostname-only and IPv6 ingress as asked", async () => {
  await using world = await startServiceWorld();
  await cluster(world, "192.168.140.11");
  world.addService("named", {
    annotations: { "service.beta.kubernetes.io/linode-loadbalancer-hostname-only-ingress": "true" },
  });
  world.addService("dual", {
    annotations: { "service.beta.kubernetes.io/linode-loadbalancer-enable-ipv6-ingress": "true" },
  });
  await ensured(world, "named");
  await ensured(world, "dual");
  const named = world.nodeBalancerOf("named");
  assert.deepEqual(world.service("named")?.status?.loadBalancer?.ingress, [{ hostname: named?.hostname }]);
  const dual = world.nodeBalancerOf("dual");
  assert.deepEqual(world.service("dual")?.status?.loadBalancer?.ingress, [
    { ip: dual?.ipv4, hostname: dual?.hostname },
    { ip: dual?.ipv6, hostname: dual?.hostname },
  ]);
});
