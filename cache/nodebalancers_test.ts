import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { clientFor } from "../linode/testdata/test_support.ts";
import { Registry } from "../common/metrics.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { NodeBalancerCache } from "./nodebalancers.ts";

const LIST = "GET /v4/nodebalancers";

async function world() {
  const sim = await startLinodeSim();
  const { client } = clientFor(sim);
  for (const [label, region] of [["ccm-a", "us-east"], ["ccm-b", "us-east"], ["other", "eu-west"]]) {
    await client.nodeBalancers.create({ label, region, configs: [] });
  }
  sim.calls.reset();
  const clock = new FakeClock();
  const cache = new NodeBalancerCache(client.nodeBalancers, {
    clock,
    metrics: new Registry(),
    region: "us-east",
    ttlMs: 15_000,
  });
  return { sim, client, clock, cache };
}

Deno.test("NodeBalancerCache lists nothing until asked, then once per TTL for every concurrent reader", async () => {
  const { sim, clock, cache } = await world();
  await using _ = sim;
  assert.equal(sim.calls.total(), 0, "lazy: no call before the service controller asks");
  const [a, b, all] = await Promise.all([cache.byLabel("ccm-a"), cache.byLabel("ccm-b"), cache.list()]);
  assert.equal(a?.label, "ccm-a");
  assert.equal(b?.label, "ccm-b");
  assert.deepEqual(all.data.map((nb) => nb.label).sort(), ["ccm-a", "ccm-b"], "region filter");
  assert.equal(sim.calls.count(LIST), 1);
  clock.advance(10_000);
  assert.equal((await cache.byId(a?.id ?? 0))?.label, "ccm-a");
  assert.equal(sim.calls.count(LIST), 1, "within the TTL");
  clock.advance(6_000);
  await cache.list();
  assert.equal(sim.calls.count(LIST), 2, "after the TTL");
});

Deno.test("NodeBalancerCache.record() and forget() write through without a call", async () => {
  const { sim, client, cache } = await world();
  await using _ = sim;
  await cache.list();
  const created = await client.nodeBalancers.create({ label: "ccm-new", region: "us-east", configs: [] });
  cache.record(created);
  assert.equal((await cache.byLabel("ccm-new"))?.id, created.id);
  const a = await cache.byLabel("ccm-a");
  cache.forget(a?.id ?? 0);
  assert.equal(await cache.byLabel("ccm-a"), undefined);
  assert.equal(sim.calls.count(LIST), 1);
});

Deno.test("NodeBalancerCache.recordCreated() remembers what this process created across terms, until forgotten", async () => {
  const { sim, client, cache } = await world();
  await using _ = sim;
  const created = await client.nodeBalancers.create({ label: "ccm-new", region: "us-east", configs: [] });
  cache.recordCreated(created);
  const listed = (await cache.byLabel("ccm-a"))?.id ?? 0;
  assert.equal((await cache.byLabel("ccm-new"))?.id, created.id, "written through");
  assert.equal(cache.createdHere(created.id), true);
  assert.equal(cache.createdHere(listed), false, "listed, not created here");
  cache.expire();
  assert.equal(cache.createdHere(created.id), true, "a new term does not forget it");
  cache.forget(created.id);
  assert.equal(cache.createdHere(created.id), false, "deleted");
});

Deno.test("NodeBalancerCache keeps the last good list, marked stale, when a refresh fails", async () => {
  const { sim, clock, cache } = await world();
  await using _ = sim;
  await cache.list();
  sim.faults.outage(60_000, { route: "/nodebalancers" });
  clock.advance(20_000);
  const snap = await cache.list();
  assert.equal(snap.stale, true);
  assert.equal(snap.data.length, 2);
  assert.equal(cache.isFreshEnough(60_000), false);
});

Deno.test("NodeBalancerCache.details lists configs and nodes once, then serves write-throughs without a call", async () => {
  const { sim, client, cache } = await world();
  await using _ = sim;
  const nb = await client.nodeBalancers.create({
    label: "ccm-detail",
    region: "us-east",
    configs: [{ port: 80, protocol: "tcp", nodes: [{ address: "192.168.140.1:30080", label: "node-1" }] }],
  });
  sim.calls.reset();
  const [first, second] = await Promise.all([cache.details.configs(nb.id), cache.details.configs(nb.id)]);
  assert.equal(first, second, "one load for concurrent readers");
  assert.equal(first.length, 1);
  assert.deepEqual(first[0]?.nodes.map((n) => n.address), ["192.168.140.1:30080"]);
  assert.equal(sim.calls.count("GET /v4/nodebalancers/{id}/configs"), 1);
  assert.equal(sim.calls.count("GET /v4/nodebalancers/{id}/configs/{id}/nodes"), 1);
  const config = first[0];
  assert.ok(config);
  cache.details.recordConfig(nb.id, { ...config, nodes: [] });
  assert.deepEqual((await cache.details.configs(nb.id))[0]?.nodes, []);
  cache.details.forgetConfig(nb.id, config.id);
  assert.deepEqual(await cache.details.configs(nb.id), []);
  assert.equal(sim.calls.total(), 2, "write-throughs read nothing");
  cache.forget(nb.id);
  assert.equal((await cache.details.configs(nb.id)).length, 1, "forgotten: read again");
  assert.equal(sim.calls.count("GET /v4/nodebalancers/{id}/configs"), 2);
});

Deno.test("NodeBalancerCache reads again the details of a NodeBalancer someone else changed, and only those", async () => {
  const simClock = new FakeClock();
  await using sim = await startLinodeSim({ clock: simClock });
  const { client } = clientFor(sim);
  const [a, b] = [
    await client.nodeBalancers.create({ label: "ccm-a", region: "us-east", configs: [] }),
    await client.nodeBalancers.create({ label: "ccm-b", region: "us-east", configs: [] }),
  ];
  const clock = new FakeClock();
  const cache = new NodeBalancerCache(client.nodeBalancers, {
    clock,
    metrics: new Registry(),
    ttlMs: 15_000,
  });
  await cache.list();
  await Promise.all([cache.details.configs(a.id), cache.details.configs(b.id)]);
  // This CCM's own write, recorded with the answer's time: not a change by someone else.
  cache.record(await client.nodeBalancers.update(b.id, { client_conn_throttle: 5 }));
  await simClock.advance(2_000);
  await client.nodeBalancers.update(a.id, { client_conn_throttle: 7 });
  sim.calls.reset();
  await clock.advance(16_000);
  await cache.list();
  await Promise.all([cache.details.configs(a.id), cache.details.configs(b.id)]);
  assert.equal(sim.calls.count("GET /v4/nodebalancers/{id}/configs"), 1, "only the one changed elsewhere");
  assert.equal(
    sim.calls.log.find((c) => c.key.endsWith("/configs"))?.path,
    `/v4/nodebalancers/${a.id}/configs`,
  );
});

Deno.test("NodeBalancerCache.expire() at a term's start: the listing and every NodeBalancer's details are read again", async () => {
  const { sim, client, cache } = await world();
  await using _ = sim;
  const a = await cache.byLabel("ccm-a");
  assert.ok(a);
  assert.deepEqual(await cache.details.configs(a.id), []);
  // Another leader adds a config while this process stands by; the details cache never expires on its own.
  await client.nodeBalancers.createConfig(a.id, {
    port: 80,
    protocol: "tcp",
    nodes: [{ label: "node-1", address: "192.168.200.10:30080" }],
  });
  assert.deepEqual(await cache.details.configs(a.id), [], "written through only: still the old view");
  const configsRoute = "GET /v4/nodebalancers/{id}/configs";
  const listsBefore = sim.calls.count(configsRoute);

  cache.expire();
  assert.equal(cache.isFreshEnough(60_000), false);
  assert.deepEqual((await cache.details.configs(a.id)).map((c) => c.port), [80]);
  assert.equal(sim.calls.count(configsRoute), listsBefore + 1);
  assert.equal((await cache.list()).stale, false);
  assert.equal(sim.calls.count(LIST), 2, "the listing was read again too");
});
