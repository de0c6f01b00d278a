/**
 * ApiCaller through the production client against the emulator: retries, backoff and Retry-After, what is
 * never repeated, timeouts, aborts and concurrency; the transient answers the real API gives (busy Linode,
 * 408, maintenance, proxies' HTML pages, bodies of the wrong shape), retried quietly where linodego retries,
 * counted, and never accepted as an object; the walk of pages; and the Go CCM's per-call metric.
 */
import assert from "node:assert/strict";
import type { ResourcePage } from "@linode/api-v4";
import { LeaseLostError, SwitchFence } from "../common/write_guard.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { collectPages, GO_CLIENT_METRIC, PagingError } from "./caller.ts";
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

function goCalls(metrics: ReturnType<typeof clientFor>["metrics"]) {
  return metrics.counter(GO_CLIENT_METRIC, "", ["method", "result"]);
}

Deno.test("ccm_linode_client_requests_total counts a paged listing once, as the Go CCM's ListInstances", async () => {
  await using sim = await startLinodeSim();
  sim.world.addInstances(1234);
  const { client, metrics } = clientFor(sim);
  await client.instances.list();
  assert.equal(sim.calls.count("GET /v4/linode/instances"), 3);
  assert.equal(goCalls(metrics).get({ method: "ListInstances", result: "ok" }), 1);
  assert.match(
    metrics.render(),
    /^ccm_linode_client_requests_total\{method="ListInstances",result="ok"\} 1$/m,
  );
  // This project's per-request metric stays beside it.
  assert.match(
    metrics.render(),
    /^ccm_linode_requests_total\{method="GET",route="\/linode\/instances",status="200"\} 3$/m,
  );
});

Deno.test("ccm_linode_client_requests_total counts a retried call once, and a failed one as error", async () => {
  await using sim = await startLinodeSim();
  const linode = sim.world.addInstance({ label: "n1" });
  sim.faults.rateLimit(1, { route: "/linode/instances/{id}", count: 1 });
  const { client, metrics } = clientFor(sim);
  await client.instances.get(linode.id);
  await assert.rejects(client.instances.get(linode.id + 1000));
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}"), 3);
  assert.equal(goCalls(metrics).get({ method: "GetInstance", result: "ok" }), 1);
  assert.equal(goCalls(metrics).get({ method: "GetInstance", result: "error" }), 1);
  assert.equal(goCalls(metrics).total(), 2);
});

/** Serves `total` numbered items in pages of `size`; `tweak` may alter a page before it is returned. */
function pager(total: number, size: number, tweak?: (p: ResourcePage<number>) => ResourcePage<number>) {
  const asked: number[] = [];
  const fetchPage = (page: number): Promise<ResourcePage<number>> => {
    asked.push(page);
    const data = Array.from({ length: total }, (_, i) => i).slice((page - 1) * size, page * size);
    const p = { data, page, pages: Math.max(1, Math.ceil(total / size)), results: total };
    return Promise.resolve(tweak ? tweak(p) : p);
  };
  return { asked, fetchPage };
}

Deno.test("collectPages() walks every page in order and stops at the last", async () => {
  const { asked, fetchPage } = pager(1234, 500);
  const items = await collectPages(fetchPage);
  assert.equal(items.length, 1234);
  assert.equal(items[1233], 1233);
  assert.deepEqual(asked, [1, 2, 3]);
});

Deno.test("collectPages() makes one call for an empty list", async () => {
  const { asked, fetchPage } = pager(0, 500);
  assert.deepEqual(await collectPages(fetchPage), []);
  assert.deepEqual(asked, [1]);
});

Deno.test("collectPages() follows a server that caps the page size", async () => {
  const { asked, fetchPage } = pager(250, 100);
  assert.equal((await collectPages(fetchPage)).length, 250);
  assert.deepEqual(asked, [1, 2, 3]);
});

const BROKEN: Array<{ name: string; tweak: (p: ResourcePage<number>) => ResourcePage<number> }> = [
  { name: "a short middle page", tweak: (p) => p.page === 2 ? { ...p, data: p.data.slice(1) } : p },
  { name: "a short last page", tweak: (p) => p.page === 3 ? { ...p, data: p.data.slice(1) } : p },
  { name: "pages changing mid-walk", tweak: (p) => p.page === 2 ? { ...p, pages: 2 } : p },
  { name: "results changing mid-walk", tweak: (p) => p.page === 3 ? { ...p, results: 1233 } : p },
  { name: "the wrong page number", tweak: (p) => p.page === 2 ? { ...p, page: 1 } : p },
  {
    name: "a body without data",
    tweak: (p) => p.page === 2 ? { ...p, data: "x" as unknown as number[] } : p,
  },
];
for (const c of BROKEN) {
  Deno.test(`collectPages() rejects ${c.name}`, async () => {
    const { fetchPage } = pager(1234, 500, c.tweak);
    await assert.rejects(collectPages(fetchPage), PagingError);
  });
}
