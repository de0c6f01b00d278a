import assert from "node:assert/strict";
import { FakeClock } from "../../common/clock.ts";
import { componentLogger } from "../../common/log.ts";
import { Registry } from "../../common/metrics.ts";
import { InvalidInputError, type Outcome, RetryAfterError, runWorkers } from "./run_queue.ts";
import { WorkQueue } from "./work_queue.ts";

const log = componentLogger("test");

/** Lets pending promise chains and 0 ms timers run until `done()` holds (or gives up). */
async function waitFor(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 0));
  assert.ok(done(), `timed out waiting for ${what}`);
}

/** Lets everything pending run, for assertions that something did not happen. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => resolve = r);
  return { promise, resolve };
}

/** Shaped like `linode/errors.ts`'s `LinodeApiError`, without importing it. */
class FakeApiError extends Error {
  constructor(readonly status: number, readonly retryAfterMs?: number) {
    super(`HTTP ${status}`);
  }
}

const OUTCOMES: { name: string; error: unknown; outcome: Outcome | null; retryAtMs: number | null }[] = [
  { name: "success forgets the key", error: null, outcome: null, retryAtMs: null },
  { name: "an error backs off from 1 s", error: new Error("boom"), outcome: "rate-limited", retryAtMs: 1000 },
  {
    name: "RetryAfterError waits as asked",
    error: new RetryAfterError("Linode asked to wait", 5000),
    outcome: "retry-after",
    retryAtMs: 5000,
  },
  {
    name: "an error with numeric retryAfterMs waits as asked",
    error: new FakeApiError(429, 2000),
    outcome: "retry-after",
    retryAtMs: 2000,
  },
  {
    name: "an error without retryAfterMs backs off",
    error: new FakeApiError(503),
    outcome: "rate-limited",
    retryAtMs: 1000,
  },
  {
    name: "InvalidInputError is not retried",
    error: new InvalidInputError("bad annotation"),
    outcome: "permanent",
    retryAtMs: null,
  },
  {
    name: "an error marked permanent is not retried",
    error: Object.assign(new Error("bad port"), { permanent: true }),
    outcome: "permanent",
    retryAtMs: null,
  },
  { name: "a thrown non-Error backs off", error: "text", outcome: "rate-limited", retryAtMs: 1000 },
];

for (const c of OUTCOMES) {
  Deno.test(`runWorkers() maps outcomes to the queue: ${c.name}`, async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue<string>({ name: "test", clock, random: () => 0.5 });
    const runs: number[] = [];
    const outcomes: Outcome[] = [];
    const stop = new AbortController();
    const running = runWorkers(queue, {
      concurrency: 2,
      signal: stop.signal,
      log,
      handle: (key) => {
        assert.equal(key, "svc/a");
        runs.push(clock.monotonic());
        return runs.length === 1 && c.error !== null ? Promise.reject(c.error) : Promise.resolve();
      },
      onError: (_key, _error, outcome) => void outcomes.push(outcome),
    });
    try {
      queue.add("svc/a");
      await waitFor(() => runs.length === 1, "the first run");
      await settle();
      assert.deepEqual(outcomes, c.outcome ? [c.outcome] : []);
      if (c.retryAtMs === null) {
        assert.equal(queue.numRequeues("svc/a"), 0);
        await clock.advance(600_000);
        await settle();
        assert.deepEqual(runs, [0], "not run again");
      } else {
        await clock.advance(c.retryAtMs - 1);
        await settle();
        assert.equal(runs.length, 1, "not before the delay");
        await clock.advance(1);
        await waitFor(() => runs.length === 2, "the retry");
        assert.deepEqual(runs, [0, c.retryAtMs]);
        await settle();
        assert.equal(queue.numRequeues("svc/a"), 0, "the successful retry forgets the backoff");
      }
    } finally {
      stop.abort();
      await running;
    }
  });
}

Deno.test("runWorkers() backs off further on each consecutive failure", async () => {
  const clock = new FakeClock();
  const queue = new WorkQueue<string>({ name: "test", clock, random: () => 0.5 });
  const runs: number[] = [];
  const stop = new AbortController();
  const running = runWorkers(queue, {
    concurrency: 1,
    signal: stop.signal,
    log,
    handle: () => {
      runs.push(clock.monotonic());
      return Promise.reject(new Error("still failing"));
    },
  });
  queue.add("n1");
  for (const at of [1000, 3000, 7000, 15000]) {
    await waitFor(() => clock.pendingSleeps === 1, "the retry timer");
    await clock.advance(at - clock.monotonic());
  }
  await waitFor(() => runs.length === 5, "five runs");
  assert.deepEqual(runs, [0, 1000, 3000, 7000, 15000]);
  assert.equal(queue.numRequeues("n1"), 5);
  stop.abort();
  await running;
  queue.shutDown();
});

Deno.test("runWorkers() never runs one key on two workers at once", async () => {
  const queue = new WorkQueue<string>({ name: "test" });
  const running = new Map<string, number>();
  let maxPerKey = 0;
  let maxTotal = 0;
  const runs: string[] = [];
  const gates: (() => void)[] = [];
  const stop = new AbortController();
  const workers = runWorkers(queue, {
    concurrency: 4,
    signal: stop.signal,
    log,
    handle: async (key) => {
      running.set(key, (running.get(key) ?? 0) + 1);
      maxPerKey = Math.max(maxPerKey, running.get(key) ?? 0);
      maxTotal = Math.max(maxTotal, [...running.values()].reduce((a, b) => a + b, 0));
      runs.push(key);
      const gate = deferred();
      gates.push(gate.resolve);
      await gate.promise;
      running.set(key, (running.get(key) ?? 1) - 1);
    },
  });
  queue.add("a");
  queue.add("b");
  await waitFor(() => gates.length === 2, "a and b running");
  for (let i = 0; i < 3; i++) queue.add("a");
  await settle();
  assert.deepEqual(runs, ["a", "b"], "a is not taken again while it runs");
  gates.shift()?.();
  await waitFor(() => runs.length === 3, "a again after it finished");
  gates.splice(0).forEach((open) => open());
  await settle();
  stop.abort();
  await workers;
  assert.deepEqual(runs, ["a", "b", "a"], "three adds while running coalesce into one run");
  assert.equal(maxPerKey, 1);
  assert.equal(maxTotal, 2);
});

Deno.test("runWorkers() returns after abort once running handlers finish", async () => {
  const queue = new WorkQueue<string>({ name: "test" });
  const gate = deferred();
  let finished = false;
  const stop = new AbortController();
  let returned = false;
  const workers = runWorkers(queue, {
    concurrency: 2,
    signal: stop.signal,
    log,
    handle: async () => {
      await gate.promise;
      finished = true;
    },
  }).then(() => returned = true);
  queue.add("a");
  await waitFor(() => queue.len() === 0, "a taken");
  stop.abort();
  await settle();
  assert.equal(returned, false, "waits for the running handler");
  gate.resolve();
  await workers;
  assert.equal(finished, true);
  queue.add("b");
  assert.equal(queue.len(), 1, "the queue is left usable and no worker takes keys any more");
});

Deno.test("runWorkers() requeues a key whose handler was aborted, for the next run", async () => {
  const queue = new WorkQueue<string>({ name: "test" });
  const stop = new AbortController();
  const errors: Outcome[] = [];
  const workers = runWorkers(queue, {
    concurrency: 1,
    signal: stop.signal,
    log,
    handle: (_key, signal) =>
      new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    onError: (_key, _error, outcome) => void errors.push(outcome),
  });
  queue.add("a");
  await waitFor(() => queue.len() === 0, "a taken");
  stop.abort();
  await workers;
  assert.equal(queue.len(), 1, "a waits for the next run");
  assert.equal(queue.numRequeues("a"), 0, "an abort is not a failure");
  assert.deepEqual(errors, []);
});

Deno.test("runWorkers() keeps working when onError throws", async () => {
  const queue = new WorkQueue<string>({ name: "test", baseDelayMs: 60_000 });
  const stop = new AbortController();
  const handled: string[] = [];
  const workers = runWorkers(queue, {
    concurrency: 1,
    signal: stop.signal,
    log,
    handle: (key) => {
      handled.push(key);
      return key === "bad" ? Promise.reject(new InvalidInputError("bad")) : Promise.resolve();
    },
    onError: () => {
      throw new Error("event sink down");
    },
  });
  queue.add("bad");
  queue.add("good");
  await waitFor(() => handled.length === 2, "both keys");
  stop.abort();
  await workers;
  assert.deepEqual(handled, ["bad", "good"]);
  queue.shutDown();
});

Deno.test("runWorkers() records ccm_reconciles_total by result and the reconcile duration per queue", async () => {
  const clock = new FakeClock();
  const metrics = new Registry();
  const queue = new WorkQueue<string>({ name: "cloud-node", clock });
  const stop = new AbortController();
  const seen: string[] = [];
  const running = runWorkers(queue, {
    concurrency: 1,
    signal: stop.signal,
    log,
    metrics,
    clock,
    handle: (key) => {
      seen.push(key);
      clock.advance(250);
      if (key === "bad") return Promise.reject(new InvalidInputError("bad providerID"));
      if (key === "busy") return Promise.reject(new RetryAfterError("wait", 100));
      return Promise.resolve();
    },
  });
  for (const key of ["ok-1", "ok-2", "bad", "busy"]) queue.add(key);
  await waitFor(() => seen.length === 4, "four reconciles");
  stop.abort();
  await running;
  const total = metrics.counter("ccm_reconciles_total", "", ["controller", "result"]);
  assert.equal(total.get({ controller: "cloud-node", result: "success" }), 2);
  assert.equal(total.get({ controller: "cloud-node", result: "permanent" }), 1);
  assert.equal(total.get({ controller: "cloud-node", result: "retry-after" }), 1);
  const text = metrics.render();
  assert.match(text, /^ccm_reconcile_duration_seconds_count\{controller="cloud-node"\} 4$/m);
  assert.match(text, /^ccm_reconcile_duration_seconds_sum\{controller="cloud-node"\} 1$/m);
});

Deno.test("runWorkers() keeps a failing key's streak start in ccm_reconcile_failing_since_timestamp_seconds until it succeeds", async () => {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const metrics = new Registry();
  const queue = new WorkQueue<string>({ name: "service", clock, random: () => 0.5 });
  const stop = new AbortController();
  const runs: string[] = [];
  let failures = 2;
  const running = runWorkers(queue, {
    concurrency: 1,
    signal: stop.signal,
    log,
    metrics,
    clock,
    handle: (key) => {
      runs.push(key);
      if (key === "default/waiting") {
        return Promise.reject(Object.assign(new RetryAfterError("cache", 10), { quiet: true }));
      }
      return failures-- > 0 ? Promise.reject(new Error("HTTP 503")) : Promise.resolve();
    },
  });
  const since = () =>
    metrics.gauge("ccm_reconcile_failing_since_timestamp_seconds", "", ["controller", "key"]);
  const series = () =>
    metrics.render().split("\n").filter((l) => l.startsWith("ccm_reconcile_failing_since"));
  try {
    queue.add("default/web");
    await waitFor(() => runs.length === 1, "the first failure");
    await settle();
    const start = Date.parse("2026-01-01T00:00:00Z") / 1000;
    assert.equal(since().get({ controller: "service", key: "default/web" }), start);
    await clock.advance(1000);
    await waitFor(() => runs.length === 2, "the second failure");
    await settle();
    assert.equal(
      since().get({ controller: "service", key: "default/web" }),
      start,
      "the streak keeps its start",
    );
    await clock.advance(2000);
    await waitFor(() => runs.length === 3, "the success");
    await settle();
    assert.deepEqual(series(), [], "a success removes the series");
    queue.add("default/waiting");
    await waitFor(() => runs.length === 4, "a quiet wait");
    await settle();
    assert.deepEqual(series(), [], "a quiet wait for the cache is no failure");
  } finally {
    stop.abort();
    await running;
    queue.shutDown();
  }
});
