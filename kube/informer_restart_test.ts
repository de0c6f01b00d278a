import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { RestartPolicy } from "./informer_restart.ts";

function policy(clock: FakeClock, metrics = new Registry()): RestartPolicy {
  return new RestartPolicy({
    resource: "nodes",
    log: componentLogger("informer-restart-test"),
    metrics,
    clock,
    backoff: { baseMs: 100, maxMs: 1000, jitter: 0 },
    minWatchMs: 1000,
  });
}

Deno.test("RestartPolicy.waitAfterFailure() counts, backs off and doubles the delay", async () => {
  const clock = new FakeClock();
  const metrics = new Registry();
  const p = policy(clock, metrics);
  assert.match(metrics.render(), /^ccm_informer_restarts_total\{resource="nodes"\} 0$/m, "shown from 0");
  const signal = new AbortController().signal;
  const first = p.waitAfterFailure(new Error("refused"), signal);
  await clock.advance(99);
  assert.equal(clock.pendingSleeps, 1);
  await clock.advance(1);
  assert.equal(await first, true);
  const second = p.waitAfterFailure(new Error("refused"), signal);
  await clock.advance(199);
  assert.equal(clock.pendingSleeps, 1);
  await clock.advance(1);
  assert.equal(await second, true);
  assert.equal(p.failures, 2);
  assert.equal(metrics.counter("ccm_informer_restarts_total", "").get({ resource: "nodes" }), 2);
});

Deno.test("RestartPolicy.waitAfterFailure() returns false when aborted while sleeping", async () => {
  const clock = new FakeClock();
  const p = policy(clock);
  const ac = new AbortController();
  const waiting = p.waitAfterFailure("boom", ac.signal);
  ac.abort();
  assert.equal(await waiting, false);
});

Deno.test("RestartPolicy.waitAfterClose() resets after a watch that saw events or lived long enough", async () => {
  const clock = new FakeClock();
  const p = policy(clock);
  const signal = new AbortController().signal;
  const failed = p.waitAfterFailure("boom", signal);
  await clock.advance(100);
  await failed;
  assert.equal(p.failures, 1);
  await p.waitAfterClose({ events: 1, startedAt: clock.monotonic() }, signal);
  assert.equal(p.failures, 0);
  const failedAgain = p.waitAfterFailure("boom", signal);
  await clock.advance(100);
  await failedAgain;
  await clock.advance(1000);
  await p.waitAfterClose({ events: 0, startedAt: clock.monotonic() - 1000 }, signal);
  assert.equal(p.failures, 0);
});

Deno.test("RestartPolicy.waitAfterClose() backs off when watches close at once without events", async () => {
  const clock = new FakeClock();
  const p = policy(clock);
  const signal = new AbortController().signal;
  const waiting = p.waitAfterClose({ events: 0, startedAt: clock.monotonic() }, signal);
  assert.equal(clock.pendingSleeps, 1);
  await clock.advance(100);
  await waiting;
  assert.equal(p.failures, 1);
});
