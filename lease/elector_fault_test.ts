import assert from "node:assert/strict";
import type { CutMode } from "../sim/proxy.ts";
import { LeaseLostError } from "./fence.ts";
import {
  type Candidate,
  countingClock,
  KEY,
  LEASE_MS,
  RENEW_DEADLINE_MS,
  RETRY_MS,
  sampleFences,
  startCluster,
  waitFor,
} from "./fixtures.ts";

function renewFailures(c: Candidate): number {
  return c.metrics.counter("ccm_leader_renew_failures_total", "").total();
}

for (const mode of ["blackhole", "refuse"] as CutMode[]) {
  Deno.test(`LeaderElector.run() fences off before its Lease expires when cut off (${mode})`, async () => {
    await using cluster = await startCluster();
    const leader = cluster.candidate().start();
    await waitFor(() => leader.fence.leading);
    const standby = cluster.candidate().start();
    using sampler = sampleFences([leader.fence, standby.fence]);
    await new Promise((r) => setTimeout(r, 3 * RETRY_MS));

    const cutAt = Date.now();
    await leader.proxy?.cut({ mode });
    await waitFor(() => !leader.fence.leading, 2 * RENEW_DEADLINE_MS);
    const offAt = Date.now();
    // The fence is off before the Lease the others see could expire: last renewTime + duration.
    const lease = await cluster.rawLease();
    const spec = lease.spec as { renewTime: string; leaseDurationSeconds: number; holderIdentity: string };
    assert.equal(spec.holderIdentity, leader.identity);
    const expiresAt = Date.parse(spec.renewTime) + spec.leaseDurationSeconds * 1000;
    assert.ok(offAt < expiresAt, `fence off at ${offAt}, Lease expires at ${expiresAt}`);
    assert.ok(offAt - cutAt <= RENEW_DEADLINE_MS + 50, `fence stayed on ${offAt - cutAt} ms after the cut`);

    // run() resolves "lost" promptly even while a request hangs (per-request timeouts).
    assert.equal(await leader.outcome, "lost");
    assert.ok(Date.now() - cutAt <= RENEW_DEADLINE_MS + RETRY_MS + 100);
    assert.deepEqual(leader.events, ["started", "stopped"]);
    assert.ok(renewFailures(leader) >= 1);

    // No write after the fence went off, even once the path is back.
    await leader.proxy?.restore();
    await waitFor(() => standby.fence.leading, 3 * LEASE_MS);
    const fenceOff = sampler.firstOffAfterLeading(leader.fence);
    assert.ok(fenceOff !== undefined);
    // fenceOff is the first 2 ms sample that saw the fence off (ms resolution): a write started in that same
    // millisecond began before the deadline; a later one would be a write after losing the lease.
    assert.deepEqual(leader.api.writes.filter((at) => at > fenceOff), []);
    const after = (await cluster.rawLease()).spec as { holderIdentity: string };
    assert.equal(after.holderIdentity, standby.identity);
    assert.equal(sampler.maxLeading(), 1);
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
  Deno.test(`LeaderElector.run() gets a 409 on a racing ${race.name}, re-reads and stands by`, async () => {
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
    const pair = [cluster.candidate(), cluster.candidate()];
    using sampler = sampleFences(pair.map((c) => c.fence));
    lineUpReads(pair);
    for (const c of pair) c.start();
    await waitFor(() => pair.some((c) => c.fence.leading));
    await new Promise((r) => setTimeout(r, 2 * RETRY_MS));

    const winner = pair.find((c) => c.fence.leading);
    const loser = pair.find((c) => !c.fence.leading);
    assert.ok(winner && loser);
    for (const c of pair) assert.equal(c.api.calls[1]?.op, race.write);
    assert.equal(loser.metrics.counter("ccm_leader_acquire_failures_total", "").total(), 1);
    // The loser re-read right after the 409 and now waits for the winner's Lease to expire.
    const [, conflicted, reread] = loser.api.calls;
    assert.equal(reread?.op, "get");
    assert.ok(reread.at - conflicted!.at < RETRY_MS / 2, "re-read waited for a retry");
    assert.equal(loser.elector.isLeader, false);
    const spec = (await cluster.rawLease()).spec as { holderIdentity: string; leaseTransitions: number };
    assert.equal(spec.holderIdentity, winner.identity);
    assert.equal(spec.leaseTransitions, race.existing ? 5 : 0);
    assert.equal(sampler.maxLeading(), 1);
  });
}

Deno.test("LeaderElector.run() sleeps once per retry, also when every attempt fails", async () => {
  await using cluster = await startCluster();
  const leaderClock = countingClock();
  const leader = cluster.candidate({ clock: leaderClock }).start();
  await waitFor(() => leader.fence.leading);
  const standbyClock = countingClock();
  const standby = cluster.candidate({ clock: standbyClock, random: () => 0.5 }).start();
  const cutClock = countingClock();
  const cut = cluster.candidate({ clock: cutClock, random: () => 0.5 });
  await cut.proxy?.cut({ mode: "refuse" });
  cut.start();

  await new Promise((r) => setTimeout(r, 8 * RETRY_MS));
  const jittered = RETRY_MS * (1 + 0.5 * 1.2);
  for (const [c, clock] of [[standby, standbyClock], [cut, cutClock]] as const) {
    const attempts = c.api.calls.filter((x) => x.op === "get").map((x) => x.at);
    assert.ok(attempts.length >= 4, `only ${attempts.length} attempts`);
    // Each gap between attempts is one jittered retry period, not two.
    for (let i = 1; i < attempts.length; i++) {
      const gap = attempts[i]! - attempts[i - 1]!;
      assert.ok(gap >= jittered - 2 && gap < jittered + 60, `gap ${gap} ms, want ${jittered}`);
    }
    const retrySleeps = clock.completedSleeps.filter((ms) => ms === jittered).length;
    assert.ok(retrySleeps >= attempts.length - 1 && retrySleeps <= attempts.length, `${retrySleeps} sleeps`);
  }
  assert.ok(cut.metrics.counter("ccm_leader_acquire_failures_total", "").total() >= 4);
  // The leader renews once per retry period, each after one sleep.
  const renews = leader.api.writes;
  assert.ok(renews.length >= 6);
  for (let i = 2; i < renews.length; i++) {
    const gap = renews[i]! - renews[i - 1]!;
    assert.ok(gap >= RETRY_MS - 2 && gap < RETRY_MS + 60, `renew gap ${gap} ms`);
  }
  assert.equal(leaderClock.completedSleeps.filter((ms) => ms === RETRY_MS).length, renews.length - 1);
});

Deno.test("LeaderElector.run() fence turns off at the renew deadline while the loop is stuck in a request", async () => {
  await using cluster = await startCluster();
  const leader = cluster.candidate().start();
  await waitFor(() => leader.fence.leading);
  await new Promise((r) => setTimeout(r, 2 * RETRY_MS));
  let renewedBefore = "";

  const stuckAt = Date.now();
  leader.api.stick();
  try {
    await waitFor(() => !leader.fence.leading, 2 * RENEW_DEADLINE_MS);
    assert.ok(Date.now() - stuckAt <= RENEW_DEADLINE_MS + 20, `fence off after ${Date.now() - stuckAt} ms`);
    assert.throws(() => leader.fence.assertLeading(), LeaseLostError);
    renewedBefore = ((await cluster.rawLease()).spec as { renewTime: string }).renewTime;
    // The loop is still inside the request: the fence did not wait for it.
    const pending = await Promise.race([
      leader.outcome,
      new Promise((r) => setTimeout(() => r("pending"), 50)),
    ]);
    assert.equal(pending, "pending");
  } finally {
    leader.api.unstick();
  }
  assert.equal(await leader.outcome, "lost");
  // The stuck renew went on with its timed-out signal: nothing reached the apiserver.
  assert.equal(((await cluster.rawLease()).spec as { renewTime: string }).renewTime, renewedBefore);
});

Deno.test("LeaderElector.run() keeps leading through a 409 on renew by re-reading the Lease", async () => {
  await using cluster = await startCluster();
  const leader = cluster.candidate().start();
  await waitFor(() => leader.fence.leading);
  // Another writer touches the Lease (same holder): the leader's next optimistic update conflicts.
  const api = cluster.api();
  for (;;) {
    const current = await api.get(KEY);
    assert.ok(current);
    const touched = { ...current.record, renewTimeMs: (current.record.renewTimeMs ?? 0) + 1 };
    const done = await api.replace(current, touched).then(() => true, () => false);
    if (done) break;
  }
  const mark = leader.api.calls.length;
  await new Promise((r) => setTimeout(r, 3 * RETRY_MS));
  // A leader only reads after a conflict: 409 on the optimistic update, re-read, update.
  const ops = leader.api.calls.slice(Math.max(0, mark - 1)).map((c) => c.op).join(",");
  assert.match(ops, /replace,get,replace/);
  assert.equal(leader.fence.leading, true);
  assert.equal(renewFailures(leader), 0);
  assert.equal(
    ((await cluster.rawLease()).spec as { holderIdentity: string }).holderIdentity,
    leader.identity,
  );
});

Deno.test("LeaderElector.run() does not write after a 409 on renew when the re-read ends past the renew deadline", async () => {
  await using cluster = await startCluster();
  const leader = cluster.candidate().start();
  await waitFor(() => leader.fence.leading);
  // From now on, the leader's reads return only once its fence has gone off (its renew deadline passed).
  leader.api.gate = async (op) => {
    if (op === "get") await waitFor(() => !leader.fence.leading, 2 * RENEW_DEADLINE_MS);
  };
  // Another writer touches the Lease: the leader's next optimistic update is a 409, then a (slow) re-read.
  const api = cluster.api();
  for (;;) {
    const current = await api.get(KEY);
    assert.ok(current);
    const touched = { ...current.record, renewTimeMs: (current.record.renewTimeMs ?? 0) + 1 };
    if (await api.replace(current, touched).then(() => true, () => false)) break;
  }
  const mark = leader.api.calls.length;
  assert.equal(await leader.outcome, "lost");
  const after = leader.api.calls.slice(mark).map((c) => c.op);
  assert.deepEqual(after.filter((op) => op !== "get").length, 1, `only the 409'd renew was sent: ${after}`);
});
