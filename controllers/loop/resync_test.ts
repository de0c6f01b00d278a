import assert from "node:assert/strict";
import { FakeClock } from "../../common/clock.ts";
import { runResync } from "./resync.ts";
import { WorkQueue } from "./work_queue.ts";

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
