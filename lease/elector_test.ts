import assert from "node:assert/strict";
import { FakeClock, systemClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { ACQUIRE_JITTER_FACTOR, LeaderElector, type LeaderElectorDeps } from "./elector.ts";
import { SwitchFence } from "../common/write_guard.ts";
import {
  advanceUntil,
  countingRandom,
  leaders,
  LEASE_MS,
  RETRY_MS,
  startCluster,
  waitFor,
} from "./testdata/fixtures.ts";

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const LEASE_LABELS = { lease: "kube-system/linode-cloud-controller-manager" };

function spec(lease: Record<string, unknown>): Record<string, unknown> {
  const value = lease.spec;
  assert.ok(typeof value === "object" && value !== null);
  return value as Record<string, unknown>;
}

/** Advances `clock` by `ms` and waits until `settled()` (every candidate done with what that step woke). */
async function step(clock: FakeClock, ms: number, settled: () => boolean): Promise<void> {
  await clock.advance(ms);
  await waitFor(settled);
}

Deno.test("LeaderElector.run() elects exactly one of three and hands over within one retry of a release", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const jitters = [countingRandom(), countingRandom(), countingRandom()];
  const candidates = jitters.map((j) => cluster.candidate({ clock, random: j.random }));
  for (const c of candidates) c.start();
  await waitFor(() => leaders(candidates).length === 1 && jitters.filter((j) => j.draws === 1).length === 2);
  const [first] = leaders(candidates);
  assert.ok(first);
  // Three renew periods: the same single leader, one renew each.
  for (let i = 1; i <= 3; i++) await step(clock, RETRY_MS, () => first.api.settledWrites(1 + i));
  assert.deepEqual(leaders(candidates), [first]);
  assert.deepEqual(first.events, ["started"]);
  assert.equal(first.metrics.gauge("ccm_leader_is_leader", "").get(LEASE_LABELS), 1);
  assert.equal(first.metrics.counter("ccm_leader_transitions_total", "").total(), 1);

  let lease = spec(await cluster.rawLease());
  assert.equal(lease.holderIdentity, first.identity);
  assert.equal(lease.leaseDurationSeconds, Math.ceil(LEASE_MS / 1000));
  assert.equal(lease.leaseTransitions, 0);
  assert.match(String(lease.acquireTime), MICRO_TIME);
  assert.match(String(lease.renewTime), MICRO_TIME);
  const firstAcquire = lease.acquireTime;

  // SIGTERM: the Lease is handed back; a standby takes it at its next poll, long before it could expire.
  assert.equal(await first.stop(), "released");
  assert.deepEqual(first.events, ["started", "stopped"]);
  assert.equal(first.fence.leading, false);
  assert.equal(cluster.holder(), "");
  const takeoverMs = await advanceUntil(clock, RETRY_MS / 2, () => leaders(candidates).length === 1);
  // A standby polls every 1.6 retry periods (jitter 0.5): its next poll finds the Lease free.
  const retryMs = RETRY_MS * (1 + 0.5 * ACQUIRE_JITTER_FACTOR);
  assert.ok(takeoverMs <= retryMs + RETRY_MS / 2, `took over ${takeoverMs} ms after the release`);
  const [second] = leaders(candidates);
  assert.ok(second && second !== first);

  lease = spec(await cluster.rawLease());
  assert.equal(lease.holderIdentity, second.identity);
  assert.equal(lease.leaseTransitions, 1);
  assert.notEqual(lease.acquireTime, firstAcquire);
  assert.equal(first.metrics.gauge("ccm_leader_is_leader", "").total(), 0);
  // Every replica reports the Lease's own count (what an alert on leader churn reads): the standby from its
  // next poll (a standby's watch, not started here, would see it at once).
  const standby = candidates.find((c) => c !== first && c !== second);
  const transitionsSeen = (c: typeof standby) =>
    c?.metrics.gauge("ccm_leader_lease_transitions", "").get(LEASE_LABELS);
  assert.equal(transitionsSeen(second), 1);
  await advanceUntil(clock, RETRY_MS / 2, () => transitionsSeen(standby) === 1);

  assert.equal(await second.stop(), "released");
  await advanceUntil(clock, RETRY_MS / 2, () => leaders(candidates).length === 1);
  assert.equal(spec(await cluster.rawLease()).leaseTransitions, 2);
  const [third] = leaders(candidates);
  assert.equal(transitionsSeen(third), 2);
});

Deno.test("LeaderElector.run() takes over after the leader crashes, once the Lease expires and not before", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  // Jitter 0: the standby polls exactly every RETRY_MS, so the bounds below are exact.
  const jitter = countingRandom(0);
  const leader = cluster.candidate({ clock, random: () => 0 }).start();
  await waitFor(() => leader.fence.leading);
  const standby = cluster.candidate({ clock, random: jitter.random }).start();
  await waitFor(() => jitter.draws === 1);
  for (let i = 1; i <= 2; i++) {
    await step(clock, RETRY_MS, () => leader.api.settledWrites(1 + i) && jitter.draws === 1 + i);
  }
  const lastRenewMs = clock.monotonic();

  // A crash, as the cluster sees it: the leader's writes stop for good, nothing is released.
  await leader.proxy?.close();
  let leadersAtOnce = 0;
  while (!standby.fence.leading) {
    const polls = jitter.draws;
    await step(clock, RETRY_MS, () => standby.fence.leading || jitter.draws === polls + 1);
    leadersAtOnce = Math.max(leadersAtOnce, [leader, standby].filter((c) => c.fence.leading).length);
    assert.ok(clock.monotonic() - lastRenewMs <= LEASE_MS + 2 * RETRY_MS, "no take-over after expiry");
  }
  const takeoverMs = clock.monotonic() - lastRenewMs;
  // Never before the Lease could have expired; at most one poll to see the last renew and one to see expiry.
  assert.ok(takeoverMs >= LEASE_MS, `took over a live Lease ${takeoverMs} ms after the last renew`);
  assert.equal(leadersAtOnce, 1);
  assert.equal(leader.fence.leading, false, "the crashed leader fenced off at its renew deadline");
  assert.equal(cluster.holder(), standby.identity);
  assert.equal(await leader.outcome, "lost");
});

Deno.test("LeaderElector.run() resolves released without writing when aborted before leading", async () => {
  await using cluster = await startCluster();
  const holder = cluster.candidate().start();
  await waitFor(() => holder.fence.leading);
  const standby = cluster.candidate().start();
  await waitFor(() => standby.api.calls.length >= 2);
  assert.equal(await standby.stop(), "released");
  assert.deepEqual(standby.api.writes, []);
  assert.deepEqual(standby.events, []);
  assert.equal(holder.fence.leading, true);
});

const BAD_DURATIONS: {
  name: string;
  ms: Pick<LeaderElectorDeps, "leaseDurationMs" | "renewDeadlineMs" | "retryPeriodMs">;
}[] = [
  {
    name: "a renew deadline not below the lease duration",
    ms: { leaseDurationMs: 1000, renewDeadlineMs: 1000, retryPeriodMs: 100 },
  },
  {
    name: "a renew deadline within 1.2 retry periods",
    ms: { leaseDurationMs: 1000, renewDeadlineMs: 300, retryPeriodMs: 250 },
  },
  { name: "a zero retry period", ms: { leaseDurationMs: 1000, renewDeadlineMs: 500, retryPeriodMs: 0 } },
];

for (const c of BAD_DURATIONS) {
  Deno.test(`new LeaderElector() rejects ${c.name}`, () => {
    assert.throws(
      () =>
        new LeaderElector({
          api: {
            get: () => Promise.reject(),
            create: () => Promise.reject(),
            replace: () => Promise.reject(),
          },
          clock: systemClock,
          log: componentLogger("leader"),
          metrics: new Registry(),
          identity: "a_1",
          namespace: "kube-system",
          name: "x",
          fence: new SwitchFence(),
          ...c.ms,
        }),
      RangeError,
    );
  });
}
