import assert from "node:assert/strict";
import { FakeClock } from "./clock.ts";

/** A signal that counts its abort listeners. */
function countingSignal(): { signal: AbortSignal; listeners: () => number; abort: () => void } {
  const controller = new AbortController();
  const signal = controller.signal;
  let n = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<AbortSignal["addEventListener"]>) => {
    n++;
    add(...args);
  };
  signal.removeEventListener = (...args: Parameters<AbortSignal["removeEventListener"]>) => {
    n--;
    remove(...args);
  };
  return { signal, listeners: () => n, abort: () => controller.abort() };
}

Deno.test("FakeClock.sleep() removes its abort listener when it wakes, so a long-lived signal holds nothing", async () => {
  const clock = new FakeClock();
  const { signal, listeners } = countingSignal();
  for (let i = 0; i < 100; i++) {
    const sleep = clock.sleep(10, signal);
    await clock.advance(10);
    await sleep;
  }
  assert.equal(listeners(), 0);
  assert.equal(clock.pendingSleeps, 0);
});

Deno.test("FakeClock.sleep() rejects with the signal's reason when aborted, and forgets the sleeper", async () => {
  const clock = new FakeClock();
  const { signal, abort } = countingSignal();
  const sleep = clock.sleep(1_000, signal);
  assert.equal(clock.pendingSleeps, 1);
  abort();
  await assert.rejects(sleep, (e: unknown) => e instanceof DOMException && e.name === "AbortError");
  assert.equal(clock.pendingSleeps, 0);
});
