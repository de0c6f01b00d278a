import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import type { DemoSnapshot } from "./snapshot.ts";
import { runStory, type Scene } from "./story.ts";

/** An empty snapshot taken at `nowMs`: the scenes below react to time only. */
function at(nowMs: number): DemoSnapshot {
  return {
    nowMs,
    startedAtMs: 0,
    kubeconfig: "",
    leader: { holder: undefined, acquiredAtMs: undefined, transitions: 0, replicas: [] },
    nodes: [],
    loadBalancers: { nodeBalancers: 0, services: 0, pending: [] },
    api: { total: 0, lastMinute: 0, top: [] },
    events: [],
    logs: [],
    story: [],
  };
}

/** A scene whose outcome shows `reactsAfterMs` after it acted (never when undefined). */
function scene(clock: FakeClock, atMs: number, name: string, reactsAfterMs?: number): Scene {
  let actedAt = 0;
  return {
    atMs,
    act: () => {
      actedAt = clock.now();
      return `act ${name}`;
    },
    outcomes: [
      (s) => reactsAfterMs !== undefined && s.nowMs - actedAt >= reactsAfterMs ? `seen ${name}` : undefined,
    ],
  };
}

async function play(scenes: (clock: FakeClock) => Scene[], advanceMs: number) {
  const clock = new FakeClock(0);
  const said: string[] = [];
  const stop = new AbortController();
  const done = runStory(
    scenes(clock),
    {
      clock,
      startedAtMs: 0,
      snapshot: () => at(clock.now()),
      say: (text) => said.push(`${clock.now()} ${text}`),
    },
    { pollMs: 100, observeTimeoutMs: 1_000, gapMs: 500 },
    stop.signal,
  );
  for (let t = 0; t < advanceMs; t += 100) await clock.advance(100);
  stop.abort();
  return { said, result: await done };
}

Deno.test("runStory() plays scenes at their times and reports each outcome once seen", async () => {
  const { said, result } = await play((c) => [scene(c, 1_000, "one", 0), scene(c, 2_000, "two", 300)], 5_000);
  assert.equal(result, true);
  assert.deepEqual(said, [
    "1000 act one",
    "1000   ✓ seen one (0.0 s later)",
    "2000 act two",
    "2300   ✓ seen two (0.3 s later)",
    "2300 story complete: the CCM keeps running",
  ]);
});

Deno.test("runStory() reports a missing reaction and waits the gap before the next scene", async () => {
  const { said, result } = await play((c) => [scene(c, 0, "never"), scene(c, 500, "late", 0)], 4_000);
  assert.equal(result, false);
  assert.deepEqual(said, [
    "0 act never",
    "1000   ✗ no reaction from the CCM within 1.0 s",
    "1500 act late",
    "1500   ✓ seen late (0.0 s later)",
    "1500 story complete: the CCM keeps running",
  ]);
});

Deno.test("runStory() stops quietly when aborted mid-story", async () => {
  const { said, result } = await play((c) => [scene(c, 10_000, "far", 0)], 1_000);
  assert.equal(result, false);
  assert.deepEqual(said, []);
});
