import assert from "node:assert/strict";
import { FakeClock } from "../../common/clock.ts";
import { componentLogger } from "../../common/log.ts";
import { Registry } from "../../common/metrics.ts";
import {
  type ControllerSpec,
  Fingerprints,
  InvalidInputError,
  type Outcome,
  RetryAfterError,
  runController,
  runResync,
  type RuntimeDeps,
  runWorkers,
} from "./runtime.ts";
import { type Applied, LIVE_SCOPE, newExecutors, ShadowRecorder, type Write } from "./shadow.ts";
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

/** A queue on a fake clock without jitter, whose retries wait a minute (far past every period below). */
function fixture() {
  const clock = new FakeClock();
  const queue = new WorkQueue<string>({ name: "test", clock, random: () => 0.5, baseDelayMs: 60_000 });
  return { clock, queue, stop: new AbortController() };
}

/** Takes every ready key (each marked done at once), sorted. */
async function drain(queue: WorkQueue<string>): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) {
    const key = await queue.get();
    assert.ok(key !== undefined);
    keys.push(key);
    queue.done(key);
  }
  return keys.sort();
}

Deno.test("runResync() enqueues every key once per period, read fresh at each pass", async () => {
  const { clock, queue, stop } = fixture();
  let keys = ["a", "b"];
  let reads = 0;
  const loop = runResync(queue, {
    clock,
    periodMs: 1_000,
    signal: stop.signal,
    keys: () => (reads++, keys),
  });
  await clock.advance(999);
  assert.equal(queue.len(), 0, "nothing before the first period");
  assert.equal(reads, 0);
  await clock.advance(1);
  assert.deepEqual(await drain(queue), ["a", "b"]);
  keys = ["b", "c"];
  await clock.advance(1_000);
  assert.deepEqual(await drain(queue), ["b", "c"]);
  assert.equal(reads, 2);
  stop.abort();
  await loop;
});

Deno.test("runResync() with keepBackoff leaves a key waiting for its retry, and adds it again once forgotten", async () => {
  const { clock, queue, stop } = fixture();
  queue.addRateLimited("failing");
  const loop = runResync(queue, {
    clock,
    periodMs: 100,
    signal: stop.signal,
    keys: () => ["failing", "fine"],
    keepBackoff: true,
  });
  await clock.advance(100);
  assert.deepEqual(await drain(queue), ["fine"], "the backoff of 'failing' is not cut short");
  queue.forget("failing");
  await clock.advance(100);
  assert.deepEqual(await drain(queue), ["failing", "fine"]);
  stop.abort();
  await loop;
});

Deno.test("runResync() without keepBackoff enqueues a key that waits for its retry", async () => {
  const { clock, queue, stop } = fixture();
  queue.addRateLimited("failing");
  const loop = runResync(queue, { clock, periodMs: 100, signal: stop.signal, keys: () => ["failing"] });
  await clock.advance(100);
  assert.deepEqual(await drain(queue), ["failing"]);
  stop.abort();
  await loop;
});

Deno.test("runResync() awaits async keys and ends quietly when aborted while waiting or reading", async () => {
  const { clock, queue, stop } = fixture();
  let release = () => {};
  const loop = runResync(queue, {
    clock,
    periodMs: 100,
    signal: stop.signal,
    keys: () => new Promise<string[]>((resolve) => release = () => resolve(["late"])),
  });
  await clock.advance(100);
  stop.abort();
  release();
  await loop;
  assert.equal(queue.len(), 0, "an aborted pass enqueues nothing");
  assert.equal(clock.pendingSleeps, 0);

  const idle = fixture();
  const parked = runResync(idle.queue, {
    clock: idle.clock,
    periodMs: 100,
    signal: idle.stop.signal,
    keys: () => [],
  });
  assert.equal(idle.clock.pendingSleeps, 1);
  idle.stop.abort();
  await parked;
  assert.equal(idle.clock.pendingSleeps, 0);
});

Deno.test("runResync() ends with the error of a key reader that fails for another reason", async () => {
  const { clock, queue, stop } = fixture();
  const loop = runResync(queue, {
    clock,
    periodMs: 100,
    signal: stop.signal,
    keys: () => Promise.reject(new Error("lister broke")),
  });
  await clock.advance(100);
  await assert.rejects(loop, /lister broke/);
});

// ---------------------------------------------------------------------------------------------------------
// runController(): a declared controller on the runtime.

/** A runtime on a fake clock, with a shadow record (`dryRun`) and its executors. */
function runtime(dryRun = false) {
  const clock = new FakeClock();
  const metrics = new Registry();
  const shadow = new ShadowRecorder({ dryRun, log, metrics, clock });
  const deps: RuntimeDeps = { clock, metrics, log, shadow, executors: newExecutors(metrics) };
  const skipped = () =>
    metrics.counter("ccm_passes_skipped_total", "", ["controller"]).get({ controller: "t" });
  const writes = (result: string) =>
    metrics.counter("ccm_writes_total", "", ["api", "controller", "action", "result"]).get({
      api: "linode",
      controller: "t",
      action: "poke",
      result,
    });
  return { clock, metrics, shadow, deps, skipped, writes };
}

/** A controller over keys `a` and `b` whose inputs are `inputs[key]`, settled as `settle` says. */
function spec(o: {
  inputs: Record<string, string>;
  settle?: boolean;
  passes: string[];
  requeueAfterMs?: number;
  sources?: { fire?: (key: string) => void; unsubscribed?: boolean };
  loops?: ControllerSpec<undefined>["loops"];
  write?: Write<string>;
  applied?: Applied<string>[];
}): ControllerSpec<undefined> {
  return {
    name: "t",
    workers: 1,
    memory: () => undefined,
    sources: (ctx) => {
      if (o.sources) o.sources.fire = (key) => ctx.enqueue(key);
      return [() => o.sources && (o.sources.unsubscribed = true)];
    },
    initialKeys: () => ["a", "b"],
    resync: { periodMs: 1_000, keys: () => ["a", "b"] },
    inputs: (key) => o.inputs[key],
    reconcile: async (key, ctx) => {
      o.passes.push(key);
      if (o.write) o.applied?.push(await ctx.apply(o.write));
      return { settled: o.settle ?? true, requeueAfterMs: key === "a" ? o.requeueAfterMs : undefined };
    },
    loops: o.loops,
  };
}

Deno.test("runController() skips a resync over a key's settled inputs, counts it, and runs it once they change", async () => {
  const { clock, deps, skipped } = runtime();
  const passes: string[] = [];
  const inputs = { a: "1", b: "1" };
  const stop = new AbortController();
  const running = runController(spec({ inputs, passes }), deps, stop.signal);
  await waitFor(() => passes.length === 2, "the initial passes");
  await clock.advance(1_000);
  await settle();
  assert.deepEqual(passes, ["a", "b"], "both settled over the same inputs: none run");
  assert.equal(skipped(), 2);
  inputs.b = "2";
  await clock.advance(1_000);
  await waitFor(() => passes.length === 3, "b again");
  assert.deepEqual(passes, ["a", "b", "b"]);
  assert.equal(skipped(), 3);
  stop.abort();
  await running;
});

Deno.test("runController() never skips an event, nor a key whose last pass did not settle", async () => {
  const { clock, deps, skipped } = runtime();
  const passes: string[] = [];
  const sources: { fire?: (key: string) => void; unsubscribed?: boolean } = {};
  const stop = new AbortController();
  const running = runController(
    spec({ inputs: { a: "1", b: "1" }, settle: false, passes, sources }),
    deps,
    stop.signal,
  );
  await waitFor(() => passes.length === 2, "the initial passes");
  await clock.advance(1_000);
  await waitFor(() => passes.length === 4, "the resync runs unsettled keys");
  assert.equal(skipped(), 0);
  sources.fire?.("a");
  await waitFor(() => passes.length === 5, "the event");
  stop.abort();
  await running;
  assert.equal(sources.unsubscribed, true, "sources are unsubscribed when the term ends");
});

Deno.test("runController() runs a key again after the requeueAfterMs its pass asked for", async () => {
  const { clock, deps } = runtime();
  const passes: string[] = [];
  const stop = new AbortController();
  const running = runController(
    { ...spec({ inputs: {}, passes, requeueAfterMs: 300 }), resync: undefined },
    deps,
    stop.signal,
  );
  await waitFor(() => passes.length === 2, "the initial passes");
  await clock.advance(299);
  await settle();
  assert.equal(passes.length, 2);
  await clock.advance(1);
  await waitFor(() => passes.length === 3, "a again");
  assert.equal(passes[2], "a");
  stop.abort();
  await running;
});

Deno.test("runController() runs side loops at start when asked and every period, through failures", async () => {
  const { clock, deps } = runtime();
  const runs: number[] = [];
  const stop = new AbortController();
  const loops = [{
    name: "probe",
    periodMs: 500,
    atStart: () => true,
    run: () => {
      runs.push(clock.monotonic());
      return runs.length === 2 ? Promise.reject(new Error("flaky")) : Promise.resolve();
    },
  }];
  const running = runController(
    { ...spec({ inputs: {}, passes: [], loops }), resync: undefined },
    deps,
    stop.signal,
  );
  await waitFor(() => runs.length === 1, "the run at start");
  for (const at of [500, 1_000]) {
    await clock.advance(500);
    await waitFor(() => runs.length === at / 500 + 1, `the run at ${at}`);
  }
  assert.deepEqual(runs, [0, 500, 1_000], "the failed run at 500 did not stop the loop");
  stop.abort();
  await running;
});

Deno.test("runController() hands writes to the executor: held in dry run (nothing sent), else sent, recorded, counted", async () => {
  for (const dryRun of [true, false]) {
    const { deps, writes, shadow } = runtime(dryRun);
    const sent: string[] = [];
    const recorded: string[] = [];
    const write: Write<string> = {
      api: "linode",
      action: { action: "poke", object: "thing" },
      send: () => {
        sent.push("poke");
        return Promise.resolve("answer");
      },
      record: (answer) => void recorded.push(answer),
    };
    const applied: Applied<string>[] = [];
    const stop = new AbortController();
    const running = runController(
      { ...spec({ inputs: {}, passes: [], write, applied }), resync: undefined },
      deps,
      stop.signal,
    );
    await waitFor(() => applied.length === 2, "both keys' writes");
    stop.abort();
    await running;
    if (dryRun) {
      assert.deepEqual(applied, [{ sent: false }, { sent: false }]);
      assert.deepEqual([sent, recorded, writes("held"), writes("sent")], [[], [], 2, 0]);
      assert.deepEqual(shadow.pending().map((a) => [a.controller, a.action]), [["t", "poke"], ["t", "poke"]]);
    } else {
      assert.deepEqual(applied, [{ sent: true, answer: "answer" }, { sent: true, answer: "answer" }]);
      assert.deepEqual([sent.length, recorded, writes("held"), writes("sent")], [
        2,
        ["answer", "answer"],
        0,
        2,
      ]);
      assert.equal(shadow.carriedOut().length, 2);
    }
  }
});

Deno.test("Executor.apply() counts a failed write and records nothing", async () => {
  const metrics = new Registry();
  const executor = newExecutors(metrics).kubernetes;
  let recorded = false;
  await assert.rejects(
    executor.apply("t", LIVE_SCOPE, {
      api: "kubernetes",
      action: { action: "patch", object: "n1" },
      send: () => Promise.reject(new Error("409")),
      record: () => void (recorded = true),
    }),
    /409/,
  );
  assert.equal(recorded, false);
  const count = metrics.counter("ccm_writes_total", "", ["api", "controller", "action", "result"]);
  assert.equal(count.get({ api: "kubernetes", controller: "t", action: "patch", result: "failed" }), 1);
});

Deno.test("Fingerprints moves its version only when what a pass reads changes", () => {
  const f = new Fingerprints();
  f.see("a", "Ready");
  const v = f.version;
  f.see("a", "Ready");
  assert.equal(f.version, v, "the same fingerprint changes nothing");
  f.see("a", "NotReady");
  assert.ok(f.version > v);
  const w = f.version;
  f.see("a", undefined);
  assert.ok(f.version > w, "a deletion is a change");
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
