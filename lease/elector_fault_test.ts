/**
 * The elector under faults, on a fake clock: every deadline is checked at the exact fake millisecond, so a
 * loaded machine cannot fail these tests and an off-by-one in the timing logic still does.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import type { CutMode } from "../sim/proxy.ts";
import { ACQUIRE_JITTER_FACTOR } from "./elector.ts";
import { LeaseLostError } from "../common/write_guard.ts";
import {
  advanceUntil,
  type Candidate,
  countingRandom,
  KEY,
  LEASE_MS,
  RENEW_DEADLINE_MS,
  RETRY_MS,
  startCluster,
  waitFor,
} from "./testdata/fixtures.ts";

function renewFailures(c: Candidate): number {
  return c.metrics.counter("ccm_leader_renew_failures_total", "").total();
}

/** Fake epoch ms at which the Lease as stored expires for the others: renewTime + leaseDurationSeconds. */
async function expiryOf(cluster: { rawLease(): Promise<Record<string, unknown>> }): Promise<number> {
  const spec = (await cluster.rawLease()).spec as { renewTime: string; leaseDurationSeconds: number };
  return Date.parse(spec.renewTime) + spec.leaseDurationSeconds * 1000;
}

/**
 * `c.outcome`, advancing the fake clock 1 ms at a time while real I/O settles: a loop that gave up still
 * passes through one clock sleep (of 0 ms or more) before it returns.
 */
async function outcomeOf(c: Candidate, clock: FakeClock): Promise<string> {
  let outcome: string | undefined;
  c.outcome.then((o) => outcome = o);
  await advanceUntil(clock, 1, () => outcome !== undefined, 50);
  return outcome ?? "";
}

/** Another writer touches the Lease (same holder): the leader's next optimistic update gets a 409. */
async function touchLease(cluster: Awaited<ReturnType<typeof startCluster>>): Promise<void> {
  const api = cluster.api();
  for (;;) {
    const current = await api.get(KEY);
    assert.ok(current);
    const touched = { ...current.record, renewTimeMs: (current.record.renewTimeMs ?? 0) + 1 };
    if (await api.replace(current, touched).then(() => true, () => false)) return;
  }
}

for (const mode of ["blackhole", "refuse"] as CutMode[]) {
  Deno.test(`LeaderElector.run() fences off at its renew deadline, before its Lease expires, when cut off (${mode})`, async () => {
    await using cluster = await startCluster();
    const clock = new FakeClock();
    const leader = cluster.candidate({ clock }).start();
    await waitFor(() => leader.fence.leading);
    const jitter = countingRandom(0);
    const standby = cluster.candidate({ clock, random: jitter.random }).start();
    await waitFor(() => jitter.draws === 1);
    await clock.advance(RETRY_MS);
    await waitFor(() => leader.api.settledWrites(2));
    const lastRenewMs = clock.monotonic();
    const expiresAt = await expiryOf(cluster);

    await leader.proxy?.cut({ mode });
    await clock.advance(RENEW_DEADLINE_MS - 1);
    assert.equal(leader.fence.leading, true, "fenced off before its renew deadline");
    await clock.advance(1);
    assert.equal(leader.fence.leading, false, "still leading at its renew deadline");
    assert.equal(clock.monotonic(), lastRenewMs + RENEW_DEADLINE_MS);
    assert.ok(clock.now() < expiresAt, "the fence must close before the Lease can expire for the others");
    assert.throws(() => leader.fence.assertLeading(), LeaseLostError);

    // run() resolves "lost" at its deadline even while a request hangs (per-request timeouts on the clock).
    assert.equal(await outcomeOf(leader, clock), "lost");
    assert.deepEqual(leader.events, ["started", "stopped"]);
    assert.ok(renewFailures(leader) >= 1);

    // No write after the fence went off, even once the path is back.
    await leader.proxy?.restore();
    const waitedMs = await advanceUntil(clock, RETRY_MS, () => standby.fence.leading);
    assert.ok(clock.monotonic() - lastRenewMs >= LEASE_MS, `took a live Lease after ${waitedMs} ms`);
    assert.deepEqual(leader.api.writes.filter((at) => at >= lastRenewMs + RENEW_DEADLINE_MS), []);
    assert.equal(cluster.holder(), standby.identity);
  });
}

/** Lets both candidates' reads return only once both have read: both then write from the same version. */
function lineUpReads(candidates: readonly Candidate[]): void {
  let waiting: (() => void)[] = [];
  for (const c of candidates) {
    c.api.gate = (op) => {
      if (op !== "get" || c.api.calls.filter((x) => x.op === "get").length > 1) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length === candidates.length) {
          for (const w of waiting) w();
          waiting = [];
        }
      });
    };
  }
}

const RACES: { name: string; existing: boolean; write: "create" | "replace" }[] = [
  { name: "create of a missing Lease (AlreadyExists)", existing: false, write: "create" },
  { name: "update of a released Lease (stale resourceVersion)", existing: true, write: "replace" },
];

for (const race of RACES) {
  Deno.test(`LeaderElector.run() gets a 409 on a racing ${race.name}, re-reads at once and stands by`, async () => {
    await using cluster = await startCluster();
    if (race.existing) {
      const now = Date.now();
      await cluster.api().create(KEY, {
        holderIdentity: "",
        leaseDurationSec: 1,
        acquireTimeMs: now,
        renewTimeMs: now,
        leaseTransitions: 4,
      });
    }
    const clock = new FakeClock();
    const jitters = [countingRandom(), countingRandom()];
    const pair = jitters.map((j) => cluster.candidate({ clock, random: j.random }));
    lineUpReads(pair);
    for (const c of pair) c.start();
    // The loser drew its jitter: it got the 409, re-read, and is now sleeping for a retry.
    await waitFor(() => pair.some((c) => c.fence.leading) && jitters.some((j) => j.draws === 1));

    const winner = pair.find((c) => c.fence.leading);
    const loser = pair.find((c) => !c.fence.leading);
    assert.ok(winner && loser);
    for (const c of pair) assert.equal(c.api.calls[1]?.op, race.write);
    assert.equal(loser.metrics.counter("ccm_leader_acquire_failures_total", "").total(), 1);
    // The re-read came right after the 409, before any sleep: no fake time passed at all.
    assert.deepEqual(loser.api.calls.map((c) => [c.op, c.at]), [["get", 0], [race.write, 0], ["get", 0]]);
    assert.equal(loser.elector.isLeader, false);
    const spec = (await cluster.rawLease()).spec as { holderIdentity: string; leaseTransitions: number };
    assert.equal(spec.holderIdentity, winner.identity);
    assert.equal(spec.leaseTransitions, race.existing ? 5 : 0);
  });
}

Deno.test("LeaderElector.run() sleeps once per retry, also when every attempt fails", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock }).start();
  await waitFor(() => leader.fence.leading);
  const standbyJitter = countingRandom();
  const standby = cluster.candidate({ clock, random: standbyJitter.random }).start();
  const cutJitter = countingRandom();
  const cut = cluster.candidate({ clock, random: cutJitter.random });
  await cut.proxy?.cut({ mode: "refuse" });
  cut.start();
  await waitFor(() => standbyJitter.draws === 1 && cutJitter.draws === 1);

  // Step by exactly one jittered retry period: each step must bring exactly one more attempt each.
  const jitteredMs = RETRY_MS * (1 + 0.5 * ACQUIRE_JITTER_FACTOR);
  for (let i = 2; i <= 5; i++) {
    await clock.advance(jitteredMs);
    await waitFor(() => standbyJitter.draws === i && cutJitter.draws === i);
  }
  const gets = (c: Candidate) => c.api.calls.filter((x) => x.op === "get").map((x) => x.at);
  const expected = [0, 1, 2, 3, 4].map((n) => n * jitteredMs);
  assert.deepEqual(gets(standby), expected);
  assert.deepEqual(gets(cut), expected);
  assert.equal(cut.metrics.counter("ccm_leader_acquire_failures_total", "").total(), 5);
});

Deno.test("LeaderElector.run() renews once per retry period, each after one sleep", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock }).start();
  await waitFor(() => leader.api.settledWrites(1));
  for (let i = 2; i <= 6; i++) {
    await clock.advance(RETRY_MS);
    await waitFor(() => leader.api.settledWrites(i));
  }
  assert.deepEqual(leader.api.writes, [0, 1, 2, 3, 4, 5].map((n) => n * RETRY_MS));
  assert.equal(leader.fence.leading, true);
});

Deno.test("LeaderElector.run() fence turns off at the renew deadline while the loop is stuck in a request", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock }).start();
  await waitFor(() => leader.api.settledWrites(1));
  let settled = false;
  leader.outcome.then(() => settled = true);
  const renewedBefore = ((await cluster.rawLease()).spec as { renewTime: string }).renewTime;

  leader.api.stick();
  try {
    await clock.advance(RENEW_DEADLINE_MS - 1);
    assert.equal(leader.fence.leading, true);
    await clock.advance(1);
    assert.equal(leader.fence.leading, false, "the fence waited for the stuck request");
    assert.throws(() => leader.fence.assertLeading(), LeaseLostError);
    // The loop is still inside the request, deaf to its timeout: only the fence moved.
    await clock.advance(RETRY_MS);
    assert.equal(settled, false);
  } finally {
    leader.api.unstick();
  }
  assert.equal(await outcomeOf(leader, clock), "lost");
  // The stuck renew went on with its timed-out signal: nothing reached the apiserver.
  assert.equal(((await cluster.rawLease()).spec as { renewTime: string }).renewTime, renewedBefore);
});

Deno.test("LeaderElector.run() keeps leading through a 409 on renew by re-reading the Lease", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock }).start();
  await waitFor(() => leader.api.settledWrites(1));
  await touchLease(cluster);
  await clock.advance(RETRY_MS);
  // A leader only reads after a conflict: 409 on the optimistic update, re-read, update; all at once.
  await waitFor(() => leader.api.settledWrites(3));
  assert.deepEqual(leader.api.calls.slice(2).map((c) => [c.op, c.at]), [
    ["replace", RETRY_MS],
    ["get", RETRY_MS],
    ["replace", RETRY_MS],
  ]);
  assert.equal(leader.fence.leading, true);
  assert.equal(renewFailures(leader), 0);
  assert.equal(cluster.holder(), leader.identity);
});

Deno.test("LeaderElector.run() does not write after a 409 on renew when the re-read ends past the renew deadline", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock }).start();
  await waitFor(() => leader.api.settledWrites(1));
  // From now on, the leader's reads return only once its fence has gone off (its renew deadline passed).
  const reading = Promise.withResolvers<void>();
  leader.api.gate = async (op) => {
    if (op !== "get") return;
    reading.resolve();
    await waitFor(() => !leader.fence.leading);
  };
  await touchLease(cluster);
  const mark = leader.api.calls.length;
  await clock.advance(RETRY_MS);
  await reading.promise; // the 409'd renew is re-reading now
  await clock.advance(RENEW_DEADLINE_MS - RETRY_MS);
  assert.equal(leader.fence.leading, false);
  assert.equal(await outcomeOf(leader, clock), "lost");
  const after = leader.api.calls.slice(mark).map((c) => c.op);
  assert.deepEqual(after.filter((op) => op !== "get").length, 1, `only the 409'd renew was sent: ${after}`);
});
