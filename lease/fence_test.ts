import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { LeaseLostError, SwitchFence } from "./fence.ts";

Deno.test("SwitchFence.leadUntil() turns the fence off at the monotonic deadline", async () => {
  const clock = new FakeClock();
  const fence = new SwitchFence();
  assert.equal(fence.leading, false);
  fence.leadUntil(100, clock);
  assert.equal(fence.leading, true);
  await clock.advance(99);
  fence.assertLeading();
  await clock.advance(1);
  assert.equal(fence.leading, false);
  assert.throws(() => fence.assertLeading(), LeaseLostError);
  // Only a new renewal reopens it.
  fence.leadUntil(300, clock);
  assert.equal(fence.leading, true);
});

Deno.test("SwitchFence.set() switches without a deadline", async () => {
  const clock = new FakeClock();
  const fence = new SwitchFence();
  fence.leadUntil(10, clock);
  fence.set(false);
  assert.equal(fence.leading, false);
  fence.set(true);
  await clock.advance(1000);
  assert.equal(fence.leading, true);
});

Deno.test("SwitchFence.termSignal aborts when leadership ends, at its deadline too, and is new for each term", async () => {
  const clock = new FakeClock();
  const fence = new SwitchFence();
  assert.equal(fence.termSignal.aborted, true, "no term before leading");
  fence.leadUntil(100, clock);
  const first = fence.termSignal;
  assert.equal(first.aborted, false);
  fence.leadUntil(200, clock);
  assert.equal(fence.termSignal, first, "a renewal keeps the term");
  await clock.advance(200);
  // A passed deadline is noticed when the fence is next asked (the elector switches it off at the deadline).
  assert.equal(fence.leading, false);
  assert.equal(first.aborted, true, "the deadline passed");
  assert.ok(first.reason instanceof LeaseLostError);
  fence.set(true);
  const second = fence.termSignal;
  assert.notEqual(second, first);
  fence.set(false);
  assert.equal(second.aborted, true);
});

Deno.test("SwitchFence.writeStarted() counts writes in flight and remembers the latest start", () => {
  const fence = new SwitchFence(true);
  const a = fence.writeStarted(10);
  const b = fence.writeStarted(30);
  assert.equal(fence.writesInFlight, 2);
  assert.equal(fence.lastWriteStartMs, 30);
  a();
  a();
  assert.equal(fence.writesInFlight, 1, "settling twice counts once");
  b();
  assert.equal(fence.writesInFlight, 0);
});
