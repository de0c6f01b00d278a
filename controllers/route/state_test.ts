import assert from "node:assert/strict";
import { RouteState } from "./state.ts";

const NO_JITTER = { baseMs: 1_000, maxMs: 8_000, jitter: 0 };

Deno.test("RouteState backs off one interface per failed list, and retries a changed list at once", () => {
  const s = new RouteState({ writeRetry: NO_JITTER });
  assert.equal(s.failed("1/5", ["a"], 0), 1_000);
  assert.equal(s.isBackingOff("1/5", ["a"], 999), true);
  assert.equal(s.isBackingOff("1/5", ["a", "b"], 999), false, "a different plan is tried at once");
  assert.equal(s.isBackingOff("1/5", ["a"], 1_000), false);
  assert.equal(s.failed("1/5", ["a"], 1_000), 2_000);
  assert.equal(s.failed("1/5", ["a"], 3_000), 4_000);
  assert.equal(s.nextRetryInMs(3_000), 4_000);
  s.succeeded("1/5");
  assert.equal(s.nextRetryInMs(3_000), undefined);
});

Deno.test("RouteState pauses every write after a 429: Retry-After, else a growing backoff reset by a success", () => {
  const s = new RouteState({ rateLimitPause: NO_JITTER });
  assert.equal(s.pause(0, 30_000), 30_000);
  assert.equal(s.pausedForMs(10_000), 20_000);
  assert.equal(s.pause(40_000, undefined), 2_000, "the second pause without Retry-After");
  assert.equal(s.pause(50_000, undefined), 4_000);
  s.succeeded("1/5");
  assert.equal(s.pause(60_000, undefined), 1_000);
  assert.equal(s.nextRetryInMs(60_500), 500);
});

Deno.test("RouteState forgets backoffs of interfaces no longer planned and reports once per key", () => {
  const s = new RouteState({ writeRetry: NO_JITTER });
  s.failed("1/5", ["a"], 0);
  s.failed("2/6", ["b"], 0);
  s.keepFailures(new Set(["2/6"]));
  assert.equal(s.isBackingOff("1/5", ["a"], 1), false);
  assert.equal(s.isBackingOff("2/6", ["b"], 1), true);
  assert.equal(s.firstReport("once:n1:no-interface"), true);
  assert.equal(s.firstReport("once:n1:no-interface"), false);
  s.forgetReports("once:n1:");
  assert.equal(s.firstReport("once:n1:no-interface"), true);
});
