import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { parseRateLimitHeaders, rateLimitBucket, RateLimiter } from "./rate_limit.ts";
import { clientFor } from "./testdata/test_support.ts";

function limiter(clock = new FakeClock()) {
  const metrics = new Registry();
  const rl = new RateLimiter({ clock, metrics, log: componentLogger("linode"), reserveFraction: 0.1 });
  return { rl, clock, metrics };
}

/** Starts `n` acquisitions; returns how many have been admitted so far, as a live count. */
function admitMany(rl: RateLimiter, n: number): { admitted: () => number; all: Promise<void[]> } {
  let admitted = 0;
  const all = Promise.all(Array.from({ length: n }, () => rl.acquire("default").then(() => void admitted++)));
  return { admitted: () => admitted, all };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

Deno.test("parseRateLimitHeaders() reads epoch-second and relative resets, and skips bad values", () => {
  const now = Date.UTC(2026, 0, 1);
  const h = (m: Record<string, string>) => (name: string) => m[name];
  assert.deepEqual(
    parseRateLimitHeaders(
      h({
        "x-ratelimit-limit": "400",
        "x-ratelimit-remaining": "12",
        "x-ratelimit-reset": `${now / 1000 + 30}`,
      }),
      now,
    ),
    { limit: 400, remaining: 12, resetAtMs: now + 30_000 },
  );
  assert.deepEqual(parseRateLimitHeaders(h({ "x-ratelimit-reset": "5" }), now), { resetAtMs: now + 5_000 });
  assert.deepEqual(parseRateLimitHeaders(h({ "x-ratelimit-remaining": "lots" }), now), {});
});

Deno.test("rateLimitBucket() keeps each route's budget apart", () => {
  assert.equal(rateLimitBucket("GET", "/nodebalancers"), "GET /nodebalancers");
  assert.notEqual(rateLimitBucket("GET", "/nodebalancers"), rateLimitBucket("POST", "/nodebalancers"));
});

Deno.test("RateLimiter.acquire() keeps a burst within the reported budget and waits for the window reset", async () => {
  const { rl, clock, metrics } = limiter();
  rl.observe("default", { limit: 20, remaining: 7, resetAtMs: clock.now() + 10_000 });
  // Reserve is 2 (10 % of 20): 5 of the 7 left may go now, the rest wait for the new window.
  const burst = admitMany(rl, 12);
  await settle();
  assert.equal(burst.admitted(), 5);
  assert.equal(rl.remaining("default"), 2);
  assert.equal(metrics.gauge("ccm_linode_ratelimit_remaining", "", ["bucket"]).get({ bucket: "default" }), 2);
  await clock.advance(10_000);
  await burst.all;
  assert.equal(burst.admitted(), 12);
  assert.equal(rl.remaining("default"), 20 - 7, "the new window is counted from the full limit");
});

Deno.test("RateLimiter.pause() holds every request until the Retry-After has passed", async () => {
  const { rl, clock } = limiter();
  rl.pause(3_000);
  const held = admitMany(rl, 3);
  await settle();
  assert.equal(held.admitted(), 0);
  await clock.advance(2_999);
  assert.equal(held.admitted(), 0);
  await clock.advance(1);
  await held.all;
  assert.equal(held.admitted(), 3);
});

Deno.test("LinodeClient: one request's 429 holds a concurrent request of another route", async () => {
  await using sim = await startLinodeSim();
  const linode = sim.world.addInstance({ label: "n1" });
  sim.faults.rateLimit(7, { route: "/linode/instances/{id}", count: 1 });
  const { client, clock } = clientFor(sim, { concurrency: 1 });
  // Sequenced by the single concurrency slot: the GET gets the 429, then the list waits out the same pause.
  const [one, all] = await Promise.all([client.instances.get(linode.id), client.instances.list()]);
  assert.equal(one.label, "n1");
  assert.equal(all.length, 1);
  assert.deepEqual(clock.sleeps, [7_000, 7_000], "the retry and the other request both waited");
});

/** Polls `condition` on real time (HTTP round trips), up to 5 s. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), "condition not reached");
}

Deno.test("LinodeClient keeps a burst under the emulator's rate limit instead of meeting 429s", async () => {
  const clock = new FakeClock();
  const limits = [{ name: "command", limit: 10, windowMs: 60_000 }];
  await using sim = await startLinodeSim({ clock, rateLimits: limits });
  const linode = sim.world.addInstance({ label: "n1" });
  const { client, metrics } = clientFor(sim, { clock, concurrency: 4 });
  let done = 0;
  const burst = Promise.all(
    Array.from({ length: 25 }, () => client.instances.get(linode.id).then(() => done++)),
  );
  // Every slot parked on the limiter: the first window is spent, less the reserve.
  await until(() => clock.pendingSleeps === 4);
  assert.ok(done <= 10 && done >= 5, `${done} in the first window`);
  while (done < 25) {
    await clock.advance(60_000);
    await until(() => done === 25 || clock.pendingSleeps === 4);
  }
  await burst;
  assert.equal(sim.calls.log.filter((c) => c.status === 429).length, 0, "no 429");
  const remaining = metrics.gauge("ccm_linode_ratelimit_remaining", "", ["bucket"]);
  assert.ok(remaining.get({ bucket: "GET /linode/instances/{id}" }) !== undefined, "the budget is a gauge");
});

Deno.test("RateLimiter.acquire() waiting for its window also waits out a 429 pause that began meanwhile", async () => {
  const { rl, clock } = limiter();
  rl.observe("default", { limit: 20, remaining: 2, resetAtMs: clock.now() + 3_000 });
  let admitted = false;
  const waiting = rl.acquire("default").then(() => void (admitted = true));
  await settle();
  assert.equal(admitted, false, "the window is down to its reserve");
  await clock.advance(1_000);
  rl.pause(7_000); // another request's 429: nothing goes until 8 s
  await clock.advance(2_000);
  await settle();
  assert.equal(admitted, false, "the window reset, but the pause still runs");
  await clock.advance(5_000);
  await waiting;
  assert.equal(admitted, true);
});
