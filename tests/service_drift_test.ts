/** Changes made by others to a NodeBalancer that no write of ours reveals are found within the drift period. */
import assert from "node:assert/strict";
import { DEFAULT_NB_DRIFT_MS } from "../cache/nodebalancer_details.ts";
import { SERVICE_RESYNC_MS } from "../controllers/service/controller.ts";
import { deleteNode } from "../sim/linode/nb_configs.ts";
import { startServiceWorld, until } from "./service_fixture.ts";

Deno.test("service: a NodeBalancer node removed by hand is put back within the drift period plus one resync", async () => {
  // The node controller's address refresh is set apart, so only the service controller reads.
  await using world = await startServiceWorld({ flags: ["--node-status-update-frequency=24h"] });
  world.addNode("node-1", "192.168.140.11");
  world.addNode("node-2", "192.168.140.12");
  await world.start();
  world.addService("web");
  await until(world, () => (world.service("web")?.status?.loadBalancer?.ingress?.length ?? 0) > 0, "web");
  const nb = world.nodeBalancers()[0];
  const config = nb?.configs[0];
  const gone = config?.nodes.find((n) => n.address.startsWith("192.168.140.12:"));
  assert.ok(nb && config && gone);
  // By hand, as a person in Cloud Manager would.
  deleteNode(world.linode.world.nodeBalancerStore.require(nb.id), config.id, gone.id);
  const nodes = () => world.nodeBalancers()[0]?.configs[0]?.nodes.map((n) => n.address).sort() ?? [];
  assert.deepEqual(nodes(), ["192.168.140.11:" + gone.address.split(":")[1]]);
  world.linode.calls.reset();
  const boundMs = DEFAULT_NB_DRIFT_MS + SERVICE_RESYNC_MS;
  const tookMs = await world.advanceUntil(() => nodes().length === 2, {
    what: "the node put back",
    stepMs: 60_000,
    timeoutMs: 120_000,
  });
  assert.ok(tookMs <= boundMs, `put back ${tookMs} ms after the change (bound ${boundMs} ms)`);
  assert.equal(
    world.linode.calls.count("POST /v4/nodebalancers/{id}/configs/{id}/nodes"),
    1,
    "one node added",
  );
  // Until the details expire, an unchanged Service costs nothing: only the re-read and the repair.
  assert.ok(world.linode.calls.total() <= 6, JSON.stringify(world.linode.calls.log.map((c) => c.key)));
});

Deno.test("service: a new LoadBalancer Service costs one Linode call, the create; a later Node change reads it once, then writes", async () => {
  await using world = await startServiceWorld({ flags: ["--node-status-update-frequency=24h"] });
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("first");
  await until(world, () => (world.service("first")?.status?.loadBalancer?.ingress?.length ?? 0) > 0, "first");
  world.linode.calls.reset();
  world.addService("web", { ports: [{ port: 80 }, { port: 443 }] });
  await until(world, () => (world.service("web")?.status?.loadBalancer?.ingress?.length ?? 0) > 0, "web");
  const keys = () => world.linode.calls.log.map((c) => c.key);
  // Nothing read before (the term's listing found no NodeBalancer of it) or after (the create answered it).
  assert.deepEqual(keys(), ["POST /v4/nodebalancers"], "create to status");
  // The status write and the resyncs sync it again: its plan is the one it was created from, nothing to read.
  await world.tick(3 * SERVICE_RESYNC_MS, 10_000);
  assert.deepEqual(keys(), ["POST /v4/nodebalancers"], "and after three resyncs");
  const web = world.nodeBalancers().find((nb) => nb.configs.length === 2);
  assert.equal(web?.configs.every((c) => c.nodes.length === 1), true, "configs and nodes made by the create");
  // A new Node changes the plan: the NodeBalancer is read once (configs, their nodes, firewalls), then written.
  world.linode.calls.reset();
  world.addNode("node-2", "192.168.140.12");
  const webNodes = () =>
    world.nodeBalancers().find((nb) => nb.id === web?.id)?.configs.map((c) => c.nodes.length);
  await until(world, () => webNodes()?.join() === "2,2", "node-2 in web");
  assert.equal(
    world.linode.calls.count("GET /v4/nodebalancers/{id}/configs"),
    2,
    "one read per NodeBalancer",
  );
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers/{id}/configs/{id}/nodes"), 3);
});
