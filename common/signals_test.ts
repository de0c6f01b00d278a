import assert from "node:assert/strict";
import { FakeClock } from "./clock.ts";
import { captureLogs, componentLogger } from "./log.ts";
import { REPEAT_WINDOW_MS, stopOnSignals, type StopSignal } from "./signals.ts";

/** A process whose signals the test sends, recording exits. */
function fakeProcess() {
  const handlers = new Map<StopSignal, Set<() => void>>();
  const exits: number[] = [];
  return {
    exits,
    send(name: StopSignal) {
      for (const h of handlers.get(name) ?? []) h();
    },
    listening: () => [...handlers.values()].reduce((n, set) => n + set.size, 0),
    listen(name: StopSignal, handler: () => void) {
      const set = handlers.get(name) ?? new Set();
      handlers.set(name, set);
      set.add(handler);
      return () => set.delete(handler);
    },
    exit: (code: number) => void exits.push(code),
  };
}

for (
  const [first, second] of [["SIGTERM", "SIGTERM"], ["SIGINT", "SIGINT"], ["SIGINT", "SIGTERM"]] as const
) {
  Deno.test(`stopOnSignals() counts ${first} then ${second} within the window once`, async () => {
    const logs = await captureLogs("info");
    const clock = new FakeClock();
    const proc = fakeProcess();
    using stop = stopOnSignals({ ...proc, clock, log: componentLogger("main") });
    assert.equal(stop.signal.aborted, false);
    proc.send(first);
    assert.equal(stop.signal.aborted, true);
    assert.equal((stop.signal.reason as Error).message, `received ${first}`);
    await clock.advance(REPEAT_WINDOW_MS - 1);
    proc.send(second);
    assert.deepEqual(proc.exits, [], "a doubled signal must not cut the hand-over short");
    assert.match(logs.text(), /again within 2000 ms: counted once/);
  });
}

Deno.test("stopOnSignals() exits at once on a repeat after the window, with 128 + the signal number", async () => {
  const clock = new FakeClock();
  const proc = fakeProcess();
  using _stop = stopOnSignals({ ...proc, clock, log: componentLogger("main") });
  proc.send("SIGINT");
  await clock.advance(REPEAT_WINDOW_MS);
  proc.send("SIGINT");
  assert.deepEqual(proc.exits, [130]);
  proc.send("SIGTERM");
  assert.deepEqual(proc.exits, [130, 143]);
});

Deno.test("stopOnSignals() removes its listeners when disposed", () => {
  const proc = fakeProcess();
  {
    using _stop = stopOnSignals({ ...proc, clock: new FakeClock(), log: componentLogger("main") });
    assert.equal(proc.listening(), 2);
  }
  assert.equal(proc.listening(), 0);
});
