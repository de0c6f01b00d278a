import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../server/metrics.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { parseRateLimitHeaders, rateLimitBucket, RateLimiter } from "./rate_limit.ts";
import { clientFor } from "./test_support.ts";

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

Deno.test("rateLimitBucket() puts collection GETs apart from everything else", () => {
  assert.equal(rateLimitBucket("GET", "/nodebalancers"), "list");
  assert.equal(rateLimitBucket("GET", "/nodebalancers/{id}/configs"), "list");
  assert.equal(rateLimitBucket("GET", "/nodebalancers/{id}"), "default");
  assert.equal(rateLimitBucket("POST", "/nodebalancers"), "default");
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
