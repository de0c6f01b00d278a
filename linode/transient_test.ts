/**
 * The transient answers the real API gives (busy Linode, 408, maintenance, proxies' HTML pages, bodies of the
 * wrong shape) against the emulator's fault kinds, through the production client: retried quietly where
 * linodego retries, counted, and never accepted as an object.
 */
import assert from "node:assert/strict";
import { LeaseLostError, SwitchFence } from "../common/write_guard.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { isRetryable, LinodeApiError } from "./errors.ts";
import { clientFor } from "./testdata/test_support.ts";

const CREATE_NB = "POST /v4/nodebalancers";
const GET_NB = "GET /v4/nodebalancers/{id}";

function retries(metrics: { counter(n: string, h: string, l: string[]): { total(): number } }): number {
  return metrics.counter("ccm_linode_retries_total", "", ["method", "route"]).total();
}

const REFUSALS = [
  { name: "400 Linode busy.", fault: { kind: "busy" } },
  { name: "408", fault: { kind: "requestTimeout" } },
  { name: "a proxy's 400 HTML page", fault: { kind: "htmlError", status: 400 } },
] as const;

for (const { name, fault } of REFUSALS) {
  Deno.test(`createNodeBalancer() retries a POST answered ${name} (refused before acting), then succeeds`, async () => {
    await using sim = await startLinodeSim();
    sim.faults.transient(fault, { route: "/nodebalancers", method: "POST", count: 2 });
    const { client, clock, metrics } = clientFor(sim, { retry: { baseMs: 100, maxMs: 1000 } });
    const nb = await client.nodeBalancers.create({ label: "ccm-busy", region: "us-east", configs: [] });
    assert.equal(nb.label, "ccm-busy");
    assert.equal(sim.calls.count(CREATE_NB), 3);
    assert.deepEqual(clock.sleeps, [100, 200]);
    assert.equal(retries(metrics), 2);
    assert.equal(sim.world.nodeBalancers().length, 1);
  });
}

Deno.test("getNodeBalancer() does not retry a 503 with X-Maintenance-Mode (as linodego) and says it is transient", async () => {
  await using sim = await startLinodeSim();
  const nb = sim.world.addNodeBalancer({ label: "ccm-m", region: "us-east" });
  sim.faults.transient({ kind: "maintenance" }, { route: "/nodebalancers/{id}" });
  const { client, clock } = clientFor(sim);
  await assert.rejects(client.nodeBalancers.get(nb.id), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.status, 503);
    assert.equal(e.transient, "maintenance");
    assert.ok(isRetryable(e), "the caller's back-off retries it later");
    return true;
  });
  assert.equal(sim.calls.count(GET_NB), 1);
  assert.deepEqual(clock.sleeps, []);
});

Deno.test("getNodeBalancer() retries a proxy's 502 HTML page", async () => {
  await using sim = await startLinodeSim();
  const nb = sim.world.addNodeBalancer({ label: "ccm-h", region: "us-east" });
  sim.faults.transient({ kind: "htmlError", status: 502 }, { route: "/nodebalancers/{id}", count: 1 });
  const { client } = clientFor(sim);
  assert.equal((await client.nodeBalancers.get(nb.id)).id, nb.id);
  assert.equal(sim.calls.count(GET_NB), 2);
});

Deno.test("getNodeBalancer() never accepts a 200 HTML page as the NodeBalancer: it retries, then gives up retryably", async () => {
  await using sim = await startLinodeSim();
  const nb = sim.world.addNodeBalancer({ label: "ccm-html", region: "us-east" });
  sim.faults.transient({ kind: "htmlOk" }, { route: "/nodebalancers/{id}", count: 1 });
  const { client } = clientFor(sim, { maxRetries: 2 });
  assert.equal((await client.nodeBalancers.get(nb.id)).label, "ccm-html");
  assert.equal(sim.calls.count(GET_NB), 2);

  sim.faults.transient({ kind: "htmlOk" }, { route: "/nodebalancers/{id}" });
  await assert.rejects(client.nodeBalancers.get(nb.id), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.transient, "bad_body");
    assert.ok(isRetryable(e));
    assert.match(
      e.message,
      /^Cannot get nodebalancer \d+: inconsistent response \(the body is not a NodeBalancer/,
    );
    return true;
  });
  assert.equal(sim.calls.count(GET_NB), 5);
});

Deno.test("listNodeBalancers() refuses a page whose items have the wrong shape", async () => {
  await using sim = await startLinodeSim();
  sim.world.addNodeBalancer({ label: "ccm-l", region: "us-east" });
  const page = { data: [{ label: "no id" }], page: 1, pages: 1, results: 1 };
  sim.faults.transient({ kind: "wrongBody", body: page }, { route: "/nodebalancers", method: "GET" });
  const { client } = clientFor(sim, { maxRetries: 1 });
  await assert.rejects(client.nodeBalancers.list(), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.transient, "bad_body");
    assert.match(e.message, /an item is not a NodeBalancer \(id is not a number\)/);
    return true;
  });
  assert.equal(sim.calls.count("GET /v4/nodebalancers"), 2);
});

Deno.test("a write in flight is aborted the moment the fence's leadership term ends", async () => {
  await using sim = await startLinodeSim();
  const nb = sim.world.addNodeBalancer({ label: "ccm-w", region: "us-east" });
  sim.faults.hang({ route: "/nodebalancers/{id}", method: "PUT" });
  const fence = new SwitchFence(true);
  const { client } = clientFor(sim, { fence, timeoutMs: 60_000 });
  const update = client.nodeBalancers.update(nb.id, { label: "ccm-w2" });
  const outcome = update.then(() => "written", (e) => e);
  while (sim.faults.hungCount === 0) await new Promise((r) => setTimeout(r, 5));
  fence.set(false);
  assert.ok((await outcome) instanceof LeaseLostError);
  assert.equal(sim.calls.count("PUT /v4/nodebalancers/{id}"), 1, "not retried either");
  sim.faults.clear();
});

Deno.test("a write attempt times out after writeTimeoutMs, however long the request timeout", async () => {
  await using sim = await startLinodeSim();
  const nb = sim.world.addNodeBalancer({ label: "ccm-t", region: "us-east" });
  sim.faults.hang({ route: "/nodebalancers/{id}", method: "PUT" });
  const { client } = clientFor(sim, { timeoutMs: 60_000, writeTimeoutMs: 50, maxRetries: 0 });
  await assert.rejects(client.nodeBalancers.update(nb.id, { label: "ccm-t2" }), (e: unknown) => {
    assert.ok(e instanceof LinodeApiError);
    assert.equal(e.kind, "timeout");
    return true;
  });
  sim.faults.clear();
});

Deno.test("LinodeClient.withSignal() aborts the calls made through it, and only those", async () => {
  await using sim = await startLinodeSim();
  const nb = sim.world.addNodeBalancer({ label: "ccm-s", region: "us-east" });
  sim.faults.hang({ route: "/nodebalancers/{id}", method: "GET" });
  const { client } = clientFor(sim, { timeoutMs: 60_000 });
  const term = new AbortController();
  const inTerm = client.withSignal(term.signal).nodeBalancers.get(nb.id).then(() => "answered", (e) => e);
  while (sim.faults.hungCount === 0) await new Promise((r) => setTimeout(r, 5));
  term.abort(new DOMException("leader term stopped", "AbortError"));
  const outcome = await inTerm;
  assert.ok(outcome instanceof DOMException && outcome.message === "leader term stopped", String(outcome));
  sim.faults.clear();
  assert.equal((await client.nodeBalancers.get(nb.id)).id, nb.id, "the unbound client still works");
  assert.equal(client.callCounts()["GET /nodebalancers/{id}"], 2, "counts are shared");
});
