import assert from "node:assert/strict";
import { FakeClock } from "../../common/clock.ts";
import { Registry } from "../../common/metrics.ts";
import { WorkQueue, type WorkQueueOptions } from "./work_queue.ts";

/** A queue on a fake clock without jitter. */
function fixture(options: Partial<WorkQueueOptions> = {}) {
  const clock = new FakeClock();
  const queue = new WorkQueue<string>({ name: "test", clock, random: () => 0.5, ...options });
  return { clock, queue };
}

/** Takes every ready key (each marked done at once), in order. */
async function drain(queue: WorkQueue<string>): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) {
    const key = await queue.get();
    assert.ok(key !== undefined);
    keys.push(key);
    queue.done(key);
  }
  return keys;
}

Deno.test("WorkQueue.add() dedupes keys that are waiting and keeps order", async () => {
  const { queue } = fixture();
  for (const key of ["a", "b", "a", "c", "b"]) queue.add(key);
  assert.equal(queue.len(), 3);
  assert.deepEqual(await drain(queue), ["a", "b", "c"]);
});

Deno.test("WorkQueue.get() never hands out a running key; a key re-added while running runs after done()", async () => {
  const { queue } = fixture();
  queue.add("a");
  assert.equal(await queue.get(), "a");
  queue.add("a");
  queue.add("a");
  assert.equal(queue.len(), 0, "a running key is not handed out again");
  const stop = new AbortController();
  const waiting = queue.get(stop.signal);
  queue.done("a");
  assert.equal(await waiting, "a", "re-added once, after done()");
  queue.done("a");
  assert.equal(queue.len(), 0);
  stop.abort();
});

Deno.test("WorkQueue.done() without a re-add does not requeue", async () => {
  const { queue } = fixture();
  queue.add("a");
  queue.done(await queue.get() ?? "");
  queue.done("never-taken");
  assert.equal(queue.len(), 0);
});

Deno.test("WorkQueue.addAfter() releases keys in time order and the earliest delay wins", async () => {
  const { clock, queue } = fixture();
  queue.addAfter("a", 300);
  queue.addAfter("b", 100);
  queue.addAfter("c", 200);
  queue.addAfter("d", 500);
  queue.addAfter("d", 50); // earlier: wins
  queue.addAfter("b", 400); // later: ignored
  assert.equal(queue.len(), 0);
  const released: [number, string[]][] = [];
  for (const t of [50, 100, 200, 300, 400, 500]) {
    await clock.advance(t - clock.monotonic());
    released.push([t, await drain(queue)]);
  }
  assert.deepEqual(released, [[50, ["d"]], [100, ["b"]], [200, ["c"]], [300, ["a"]], [400, []], [500, []]]);
});

Deno.test("WorkQueue.addAfter() with no delay adds at once, and add() supersedes a pending delay", async () => {
  const { clock, queue } = fixture();
  queue.addAfter("a", 0);
  assert.equal(queue.len(), 1);
  queue.addAfter("b", 1000);
  queue.add("b");
  assert.deepEqual(await drain(queue), ["a", "b"]);
  await clock.advance(5000);
  assert.equal(queue.len(), 0, "the delayed add of b was dropped");
});

const BACKOFF_CASES = [
  { name: "defaults: 1 s doubling up to 5 min", options: {}, want: [1000, 2000, 4000, 8000, 16000] },
  {
    name: "capped at maxDelayMs",
    options: { baseDelayMs: 100, maxDelayMs: 500 },
    want: [100, 200, 400, 500, 500],
  },
  { name: "reaches 5 min", options: { baseDelayMs: 100_000 }, want: [100_000, 200_000, 300_000, 300_000] },
];

for (const c of BACKOFF_CASES) {
  Deno.test(`WorkQueue.addRateLimited() grows per key: ${c.name}`, () => {
    const { queue } = fixture(c.options);
    const delays = c.want.map(() => queue.addRateLimited("a"));
    assert.deepEqual(delays, c.want);
    assert.equal(queue.numRequeues("a"), c.want.length);
    assert.equal(queue.numRequeues("b"), 0, "backoff is per key");
    queue.forget("a");
    assert.equal(queue.numRequeues("a"), 0);
    assert.equal(queue.addRateLimited("a"), c.want[0], "forget() resets the backoff");
    queue.shutDown();
  });
}

Deno.test("WorkQueue.addRateLimited() spreads delays with jitter", () => {
  const low = fixture({ random: () => 0 }).queue;
  const high = fixture({ random: () => 1 }).queue;
  assert.equal(low.addRateLimited("a"), 900);
  assert.equal(high.addRateLimited("a"), 1100);
  low.shutDown();
  high.shutDown();
});

Deno.test("WorkQueue.addRateLimited() makes the key ready after the delay", async () => {
  const { clock, queue } = fixture();
  queue.addRateLimited("a");
  queue.addRateLimited("a"); // second failure: 2 s, but the pending 1 s add wins
  await clock.advance(999);
  assert.equal(queue.len(), 0);
  await clock.advance(1);
  assert.deepEqual(await drain(queue), ["a"]);
  await clock.advance(10_000);
  assert.equal(queue.len(), 0);
});

Deno.test("WorkQueue.add() with minIntervalMs coalesces adds into one run per interval", async () => {
  const { clock, queue } = fixture({ minIntervalMs: 10_000 });
  queue.add("routes");
  assert.deepEqual(await drain(queue), ["routes"], "the first run is immediate");
  for (let i = 0; i < 5; i++) {
    await clock.advance(1000);
    queue.add("routes");
  }
  assert.equal(queue.len(), 0, "held back within the interval");
  await clock.advance(4999);
  assert.equal(queue.len(), 0);
  await clock.advance(1);
  assert.deepEqual(await drain(queue), ["routes"], "five adds, one run at the end of the interval");
  queue.add("other");
  assert.deepEqual(await drain(queue), ["other"], "the interval is per key");
  await clock.advance(10_000);
  assert.equal(queue.len(), 0);
  queue.add("routes");
  assert.deepEqual(await drain(queue), ["routes"], "an add after the interval runs at once");
  queue.shutDown();
});

Deno.test("WorkQueue.done() with minIntervalMs holds a re-add during a run until the interval since its start", async () => {
  const { clock, queue } = fixture({ minIntervalMs: 10_000 });
  queue.add("routes");
  assert.equal(await queue.get(), "routes");
  await clock.advance(3000);
  queue.add("routes");
  queue.done("routes");
  assert.equal(queue.len(), 0);
  await clock.advance(6999);
  assert.equal(queue.len(), 0);
  await clock.advance(1);
  assert.deepEqual(await drain(queue), ["routes"]);
  queue.shutDown();
});

Deno.test("WorkQueue with a minIntervalMs function asks it at each add: the interval follows what it says", async () => {
  let intervalMs = 1000;
  const { clock, queue } = fixture({ minIntervalMs: () => intervalMs });
  queue.add("routes");
  assert.deepEqual(await drain(queue), ["routes"]);
  intervalMs = 4000;
  await clock.advance(1000);
  queue.add("routes");
  assert.equal(queue.len(), 0, "held: 4 s now, 1 s since the last start");
  await clock.advance(2999);
  assert.equal(queue.len(), 0);
  await clock.advance(1);
  assert.deepEqual(await drain(queue), ["routes"], "run 4 s after the last start");
  intervalMs = 0;
  queue.add("routes");
  assert.deepEqual(await drain(queue), ["routes"], "no interval: at once");
  queue.shutDown();
});

Deno.test("WorkQueue.shutDown() wakes waiting get() calls and refuses new keys", async () => {
  const { clock, queue } = fixture();
  const waiters = [queue.get(), queue.get()];
  queue.addAfter("late", 100);
  queue.shutDown();
  assert.deepEqual(await Promise.all(waiters), [undefined, undefined]);
  queue.add("a");
  queue.addRateLimited("b");
  await clock.advance(10_000);
  assert.equal(queue.len(), 0);
  assert.equal(clock.pendingSleeps, 0, "no timer left behind");
  assert.equal(queue.shuttingDown, true);
});

Deno.test("WorkQueue.shutDown() still hands out keys already queued", async () => {
  const { queue } = fixture();
  queue.add("a");
  queue.shutDown();
  assert.equal(await queue.get(), "a");
  queue.done("a");
  assert.equal(await queue.get(), undefined);
});

Deno.test("WorkQueue.get() resolves to undefined when its signal aborts", async () => {
  const { queue } = fixture();
  const stop = new AbortController();
  const waiting = queue.get(stop.signal);
  stop.abort();
  assert.equal(await waiting, undefined);
  assert.equal(await queue.get(stop.signal), undefined, "already aborted");
  queue.add("a");
  assert.equal(await queue.get(), "a", "the queue still works for others");
});

Deno.test("WorkQueue.shutDownWithDrain() waits for running and queued keys", async () => {
  const { queue } = fixture();
  queue.add("a");
  queue.add("b");
  const a = await queue.get();
  let drained = false;
  const draining = queue.shutDownWithDrain().then(() => drained = true);
  await Promise.resolve();
  assert.equal(drained, false);
  queue.done(a ?? "");
  const b = await queue.get();
  assert.equal(b, "b");
  await Promise.resolve();
  assert.equal(drained, false, "b is still running");
  queue.done("b");
  await draining;
  assert.equal(drained, true);
});

Deno.test("WorkQueue() metrics count depth, adds, retries and work duration", async () => {
  const metrics = new Registry();
  const { clock, queue } = fixture({ metrics, name: "service" });
  const labels = { name: "service" };
  const depth = () => metrics.gauge("ccm_workqueue_depth", "", ["name"]).get(labels);
  for (const key of ["a", "b", "c", "a"]) queue.add(key);
  assert.equal(depth(), 3);
  assert.equal(
    metrics.counter("ccm_workqueue_adds_total", "", ["name"]).get(labels),
    3,
    "dedupes are not adds",
  );
  const key = await queue.get();
  assert.equal(depth(), 2);
  await clock.advance(1500);
  queue.done(key ?? "");
  queue.addRateLimited("a");
  assert.equal(metrics.counter("ccm_workqueue_retries_total", "", ["name"]).get(labels), 1);
  const text = metrics.render();
  assert.match(text, /^ccm_workqueue_work_duration_seconds_sum\{name="service"\} 1\.5$/m);
  assert.match(text, /^ccm_workqueue_work_duration_seconds_count\{name="service"\} 1$/m);
  assert.match(text, /^ccm_workqueue_depth\{name="service"\} 2$/m);
  queue.shutDown();
});

Deno.test("WorkQueue.addAfter() runs on the system clock and shutDown() clears its timer", async () => {
  const queue = new WorkQueue<string>({ name: "test" });
  const stop = new AbortController();
  const started = performance.now();
  queue.addAfter("soon", 5);
  queue.addAfter("never", 60_000);
  assert.equal(await queue.get(stop.signal), "soon");
  assert.ok(performance.now() - started >= 4);
  queue.done("soon");
  queue.shutDown(); // the sanitizer fails the test if the 60 s timer were left behind
});
