import assert from "node:assert/strict";
import { getLinode, getLinodes, getVPCs, updateConfigInterface } from "@linode/api-v4";
import { FakeClock } from "../../common/clock.ts";
import { startLinodeSim } from "./server.ts";
import { withRequestContext } from "../../linode/transport.ts";
import { failure, oneSubnetVpc, settled, waitFor, withSim } from "./testdata/test_client.ts";

Deno.test("faults.error() answers 500/502/503/504 for a count, then recovers", async () => {
  await using sim = await startLinodeSim();
  const a = sim.world.addInstance();
  for (const status of [500, 502, 503, 504] as const) {
    sim.faults.error(status, { route: "/linode/instances/{id}", count: 1 });
    const failed = await failure(withSim(sim, () => getLinode(a.id)));
    assert.equal(failed.status, status);
    assert.equal(typeof failed.errors[0]?.reason, "string");
  }
  assert.equal((await withSim(sim, () => getLinode(a.id))).id, a.id);
  assert.deepEqual(sim.faults.list(), []);
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}"), 5, "faulted requests are counted");
  assert.deepEqual(sim.calls.log.map((c) => [c.status, c.fault]), [
    [500, "error"],
    [502, "error"],
    [503, "error"],
    [504, "error"],
    [200, undefined],
  ]);
});

Deno.test("faults.error() with a probability uses the sim's random source", async () => {
  const draws = [0.9, 0.1, 0.6, 0.2];
  await using sim = await startLinodeSim({ random: () => draws.shift() ?? 1 });
  sim.faults.error(503, { probability: 0.5 });
  const outcomes: number[] = [];
  for (let i = 0; i < 4; i++) {
    outcomes.push(
      await withSim(sim, () => getVPCs()).then(
        () => 200,
        async (e) => (await failure(Promise.reject(e))).status,
      ),
    );
  }
  assert.deepEqual(outcomes, [200, 503, 200, 503]);
});

Deno.test("faults.rateLimit() answers 429 with Retry-After", async () => {
  await using sim = await startLinodeSim();
  sim.faults.rateLimit(7, { method: "GET", route: "/linode/instances" });
  const limited = await failure(withSim(sim, () => getLinodes()));
  assert.deepEqual(limited, { status: 429, errors: [{ reason: "Too Many Requests" }], retryAfter: "7" });
  assert.equal((await withSim(sim, () => getVPCs())).results, 0, "other routes are unaffected");
});

Deno.test("faults match by method and route template, with or without the version prefix", async () => {
  await using sim = await startLinodeSim();
  const a = sim.world.addInstance({ vpc: oneSubnetVpc(sim) });
  const cfg = sim.world.instances.get(a.id)?.config;
  const iface = cfg?.interfaces?.find((i) => i.purpose === "vpc");
  assert.ok(cfg && iface);
  sim.faults.error(500, { method: "PUT", route: "/v4/linode/instances/{id}/configs/{id}/interfaces/{id}" });
  sim.faults.error(502, { route: "/vpcs*" });
  assert.equal((await withSim(sim, () => getLinode(a.id))).id, a.id);
  const put = await failure(
    withSim(sim, () => updateConfigInterface(a.id, cfg.id, iface.id, { ip_ranges: ["10.9.0.0/24"] })),
  );
  assert.equal(put.status, 500);
  assert.equal((await failure(withSim(sim, () => getVPCs()))).status, 502, "a bare route matches /v4");
  const beta = await fetch(`${sim.origin}/v4beta/vpcs`, {
    headers: { authorization: `Bearer ${sim.token}` },
  });
  await beta.body?.cancel();
  assert.equal(beta.status, 502, "a bare route matches /v4beta too");
  assert.deepEqual(sim.world.ipRanges(a.id), [], "a faulted write changes nothing");
});

Deno.test("faults.latency() delays answers on the sim's clock", async () => {
  const clock = new FakeClock();
  await using sim = await startLinodeSim({ clock });
  sim.faults.latency(5000, { route: "/linode/instances" });
  const call = withSim(sim, () => getLinodes());
  const done = settled(call);
  await waitFor(() => clock.pendingSleeps === 1);
  await clock.advance(4999);
  assert.equal(done(), false);
  await clock.advance(1);
  assert.equal((await call).results, 0);
});

Deno.test("faults.outage() fails every request for its window, then lifts", async () => {
  const clock = new FakeClock();
  await using sim = await startLinodeSim({ clock });
  sim.faults.outage(60_000);
  assert.equal((await failure(withSim(sim, () => getLinodes()))).status, 503);
  assert.equal((await failure(withSim(sim, () => getVPCs()))).status, 503);
  await clock.advance(60_000);
  assert.equal((await withSim(sim, () => getLinodes())).results, 0);
  assert.deepEqual(sim.faults.list(), []);
});

Deno.test("faults.hang() holds requests until the client gives up; close() still ends cleanly", async () => {
  await using sim = await startLinodeSim();
  sim.faults.hang({ route: "/linode/instances" });
  const abort = new AbortController();
  const call = withSim(sim, () => getLinodes(), { signal: abort.signal });
  await waitFor(() => sim.faults.hungCount === 1);
  abort.abort();
  await assert.rejects(call);
  const second = failure(withSim(sim, () => getLinodes()));
  await waitFor(() => sim.faults.hungCount === 2);
  await sim.close();
  assert.equal(sim.faults.hungCount, 0);
  assert.equal((await second).status, 503, "the hung request is answered when the sim closes");
  assert.equal(sim.calls.count("GET /v4/linode/instances"), 2);
});

Deno.test("faults.remove() releases a hung request, which then succeeds", async () => {
  await using sim = await startLinodeSim();
  const id = sim.faults.hang();
  const call = withSim(sim, () => getVPCs());
  await waitFor(() => sim.faults.hungCount === 1);
  assert.equal(sim.faults.remove(id), true);
  assert.equal((await call).results, 0);
});

Deno.test("faults.truncatePage() returns fewer items than page_size with a wrong pages", async () => {
  await using sim = await startLinodeSim();
  sim.world.addInstances(60);
  sim.faults.truncatePage({ route: "/linode/instances", count: 1 }, 10);
  const short = await withSim(sim, () => getLinodes({ page: 1, page_size: 25 }));
  assert.deepEqual([short.data.length, short.page, short.pages, short.results], [10, 1, 1, 60]);
  const whole = await withSim(sim, () => getLinodes({ page: 1, page_size: 25 }));
  assert.deepEqual([whole.data.length, whole.pages], [25, 3]);
});

Deno.test("faults.slowPages() delays later pages more", async () => {
  const clock = new FakeClock();
  await using sim = await startLinodeSim({ clock });
  sim.world.addInstances(60);
  sim.faults.slowPages(100, { route: "/linode/instances" });
  const call = withSim(sim, () => getLinodes({ page: 3, page_size: 25 }));
  const done = settled(call);
  await waitFor(() => clock.pendingSleeps === 1);
  await clock.advance(299);
  assert.equal(done(), false);
  await clock.advance(1);
  assert.equal((await call).data.length, 10);
});

Deno.test("faults.add() rejects malformed rules", async () => {
  await using sim = await startLinodeSim();
  assert.throws(() => sim.faults.add({ kind: "error", status: 501 as 500 }), RangeError);
  assert.throws(() => sim.faults.error(500, { probability: 2 }), RangeError);
  assert.throws(() => sim.faults.hang({ count: 0 }), RangeError);
  assert.throws(() => sim.faults.latency(-1), RangeError);
  assert.deepEqual(sim.faults.list(), []);
});

Deno.test("faults with a page fail only that page of a listing", async () => {
  await using sim = await startLinodeSim();
  sim.world.addInstances(60);
  sim.faults.error(503, { route: "/linode/instances", page: 2 });
  assert.equal((await withSim(sim, () => getLinodes({ page: 1, page_size: 25 }))).data.length, 25);
  assert.equal((await failure(withSim(sim, () => getLinodes({ page: 2, page_size: 25 })))).status, 503);
  assert.equal((await withSim(sim, () => getLinodes({ page: 3, page_size: 25 }))).data.length, 10);
  assert.throws(() => sim.faults.error(503, { page: 0 }), RangeError);
});

Deno.test("calls record each request's User-Agent, answer time and Retry-After, and tell subscribers as answered", async () => {
  await using sim = await startLinodeSim();
  const seen: string[] = [];
  const off = sim.calls.subscribe((c) => seen.push(`${c.key} ${c.status} ${c.userAgent}`));
  sim.faults.rateLimit(9, { count: 1 });
  const ctx = { baseUrl: sim.url, token: sim.token, signal: new AbortController().signal, sent: false };
  const agent = { ...ctx, userAgent: "replica-a (id-1)" };
  assert.equal((await failure(withRequestContext(agent, () => getVPCs()))).status, 429);
  await withRequestContext(agent, () => getVPCs());
  off();
  await withSim(sim, () => getVPCs());
  assert.deepEqual(seen, ["GET /v4/vpcs 429 replica-a (id-1)", "GET /v4/vpcs 200 replica-a (id-1)"]);
  const [limited, ok] = sim.calls.log;
  assert.equal(limited?.retryAfterSec, 9);
  assert.ok(
    limited?.answeredAt !== undefined && ok?.answeredAt !== undefined && limited.answeredAt <= ok.answeredAt,
  );
});
