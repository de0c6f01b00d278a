import assert from "node:assert/strict";
import { startLinodeSim } from "../sim/linode/server.ts";
import { isRetryable, LinodeApiError } from "./errors.ts";
import { clientFor } from "./testdata/test_support.ts";

const INSTANCE = "GET /v4/linode/instances/{id}";

Deno.test("getInstance() waits the Retry-After of a 429, then succeeds", async () => {
  await using sim = await startLinodeSim();
  const linode = sim.world.addInstance({ label: "n1" });
  sim.faults.rateLimit(7, { route: "/linode/instances/{id}", count: 1 });
  const { client, clock, metrics } = clientFor(sim);
  assert.equal((await client.instances.get(linode.id)).label, "n1");
  assert.deepEqual(clock.sleeps, [7000]);
  assert.equal(sim.calls.count(INSTANCE), 2);
  const requests = metrics.counter("ccm_linode_requests_total", "", ["method", "route", "status"]);
  assert.equal(requests.get({ method: "GET", route: "/linode/instances/{id}", status: "429" }), 1);
  assert.equal(requests.get({ method: "GET", route: "/linode/instances/{id}", status: "200" }), 1);
  assert.equal(metrics.counter("ccm_linode_retries_total", "", ["method", "route"]).total(), 1);
  assert.match(
    metrics.render(),
    /ccm_linode_request_duration_seconds_count\{method="GET",route="\/linode\/instances\/\{id\}"\} 2/,
  );
});

Deno.test("getInstance() hands a Retry-After beyond the in-process cap back to the caller", async () => {
  await using sim = await startLinodeSim();
  sim.faults.rateLimit(120, { route: "/linode/instances/{id}" });
  const { client, clock } = clientFor(sim, { maxRetrySleepMs: 30_000 });
  await assert.rejects(client.instances.get(1), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.kind, "rate_limited");
    assert.equal(e.retryAfterMs, 120_000);
    return true;
  });
  assert.deepEqual(clock.sleeps, []);
  assert.equal(sim.calls.count(INSTANCE), 1);
});

Deno.test("listInstances() retries 5xx with exponential backoff, then succeeds", async () => {
  await using sim = await startLinodeSim();
  sim.world.addInstances(3);
  sim.faults.error(502, { route: "/linode/instances", count: 2 });
  const { client, clock } = clientFor(sim, { retry: { baseMs: 100, maxMs: 1000 } });
  assert.equal((await client.instances.list()).length, 3);
  assert.deepEqual(clock.sleeps, [100, 200]);
  assert.equal(sim.calls.count("GET /v4/linode/instances"), 3);
  assert.equal(client.callCounts()["GET /linode/instances"], 3);
});

Deno.test("getInstance() gives up after maxRetries with a retryable error", async () => {
  await using sim = await startLinodeSim();
  sim.faults.error(503, { route: "/linode/instances/{id}" });
  const { client, clock } = clientFor(sim, { maxRetries: 2 });
  await assert.rejects(client.instances.get(5), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.status, 503);
    assert.equal(e.kind, "server");
    assert.match(e.message, /^Cannot get linode 5: HTTP 503/);
    assert.ok(isRetryable(e));
    return true;
  });
  assert.equal(sim.calls.count(INSTANCE), 3);
  assert.equal(clock.sleeps.length, 2);
});

Deno.test("getInstance() times out a hung request and retries it", async () => {
  await using sim = await startLinodeSim();
  sim.faults.hang({ route: "/linode/instances/{id}" });
  const { client, clock } = clientFor(sim, { timeoutMs: 50, maxRetries: 1 });
  await assert.rejects(client.instances.get(3), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.kind, "timeout");
    assert.equal(e.status, 0);
    assert.equal(e.message, "Cannot get linode 3: timed out");
    return true;
  });
  assert.equal(sim.calls.count(INSTANCE), 2);
  assert.equal(clock.sleeps.length, 1);
});

Deno.test("createNodeBalancer() is not repeated after a 500 (the API may have acted)", async () => {
  await using sim = await startLinodeSim();
  sim.faults.error(500, { method: "POST", route: "/nodebalancers", count: 1 });
  const { client, clock } = clientFor(sim);
  const body = { label: "ccm-x", region: "us-east", configs: [] };
  await assert.rejects(
    client.nodeBalancers.create(body),
    (e: unknown) => e instanceof LinodeApiError && e.status === 500,
  );
  assert.equal(sim.calls.count("POST /v4/nodebalancers"), 1);
  assert.deepEqual(clock.sleeps, []);
});

Deno.test("createNodeBalancer() is repeated after a 429 (nothing happened)", async () => {
  await using sim = await startLinodeSim();
  sim.faults.rateLimit(1, { method: "POST", route: "/nodebalancers", count: 1 });
  const { client, clock } = clientFor(sim);
  const nb = await client.nodeBalancers.create({ label: "ccm-y", region: "us-east", configs: [] });
  assert.equal(nb.label, "ccm-y");
  assert.equal(sim.calls.count("POST /v4/nodebalancers"), 2);
  assert.equal(sim.world.nodeBalancers().length, 1);
  assert.deepEqual(clock.sleeps, [1000]);
});

Deno.test("getInstance() reports a network error when nothing listens", async () => {
  const sim = await startLinodeSim();
  const target = { url: sim.url, token: sim.token };
  await sim.close();
  const { client } = clientFor(target, { maxRetries: 1 });
  await assert.rejects(client.instances.get(1), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.kind, "network");
    assert.equal(e.status, 0);
    return true;
  });
});

Deno.test("getInstance() stops at once when the caller aborts", async () => {
  await using sim = await startLinodeSim();
  sim.faults.hang({ route: "/linode/instances/{id}" });
  const { client } = clientFor(sim, { timeoutMs: 10_000 });
  const ctl = new AbortController();
  const call = client.instances.get(1, { signal: ctl.signal });
  setTimeout(() => ctl.abort(new Error("shutting down")), 20);
  await assert.rejects(call, /shutting down/);
  assert.equal(sim.calls.count(INSTANCE), 1);
});

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

Deno.test("LinodeClient() keeps at most `concurrency` requests in flight", async () => {
  await using sim = await startLinodeSim();
  sim.world.addInstance({ label: "n1" });
  const hang = sim.faults.hang({ route: "/linode/instances/{id}" });
  const { client } = clientFor(sim, { concurrency: 2 });
  const calls = [1, 2, 3, 4, 5].map((id) => client.instances.get(id).catch((e) => e));
  await waitFor(() => sim.faults.hungCount === 2);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(sim.calls.total(), 2, "the other three wait for a slot");
  sim.faults.remove(hang);
  await Promise.all(calls);
  assert.equal(sim.calls.total(), 5);
});

Deno.test("deleteNodeBalancer() counts a 404 after an ambiguous failure as done", async () => {
  await using sim = await startLinodeSim();
  const { client, clock } = clientFor(sim);
  const nb = await client.nodeBalancers.create({ label: "ccm-gone", region: "us-east", configs: [] });
  sim.faults.error(502, { method: "DELETE", route: "/nodebalancers/{id}", count: 1 });
  // As if the first DELETE had acted before the gateway failed.
  clock.onSleep = () => sim.world.deleteNodeBalancer(nb.id);
  await client.nodeBalancers.delete(nb.id);
  assert.equal(sim.calls.count("DELETE /v4/nodebalancers/{id}"), 2);
  await assert.rejects(
    client.nodeBalancers.delete(nb.id),
    (e: unknown) => e instanceof LinodeApiError && e.status === 404,
  );
});
