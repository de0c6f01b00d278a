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
