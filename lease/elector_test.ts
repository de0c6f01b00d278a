import assert from "node:assert/strict";
import { systemClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../server/metrics.ts";
import { LeaderElector, type LeaderElectorDeps } from "./elector.ts";
import { SwitchFence } from "./fence.ts";
import { type Candidate, LEASE_MS, RETRY_MS, sampleFences, startCluster, waitFor } from "./fixtures.ts";

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

function leaders(candidates: readonly Candidate[]): Candidate[] {
  return candidates.filter((c) => c.fence.leading);
}

function spec(lease: Record<string, unknown>): Record<string, unknown> {
  const value = lease.spec;
  assert.ok(typeof value === "object" && value !== null);
  return value as Record<string, unknown>;
}

Deno.test("LeaderElector.run() elects exactly one of three and hands over at once on release", async () => {
  await using cluster = await startCluster();
  const candidates = [cluster.candidate(), cluster.candidate(), cluster.candidate()];
  using sampler = sampleFences(candidates.map((c) => c.fence));
  for (const c of candidates) c.start();

  await waitFor(() => leaders(candidates).length === 1);
  const [first] = leaders(candidates);
  assert.ok(first);
  await new Promise((r) => setTimeout(r, 3 * RETRY_MS));
  assert.deepEqual(leaders(candidates), [first]);
  assert.deepEqual(first.events, ["started"]);
  assert.equal(
    first.metrics.gauge("ccm_leader_is_leader", "").get({
      lease: "kube-system/linode-cloud-controller-manager",
    }),
    1,
  );
  assert.equal(first.metrics.counter("ccm_leader_transitions_total", "").total(), 1);

  let lease = spec(await cluster.rawLease());
  assert.equal(lease.holderIdentity, first.identity);
  assert.equal(lease.leaseDurationSeconds, Math.ceil(LEASE_MS / 1000));
  assert.equal(lease.leaseTransitions, 0);
  assert.match(String(lease.acquireTime), MICRO_TIME);
  assert.match(String(lease.renewTime), MICRO_TIME);
  const firstAcquire = lease.acquireTime;

  // SIGTERM: controllers stop first, then the Lease is handed back, then a standby takes it at once.
  const releasedAt = performance.now();
  assert.equal(await first.stop(), "released");
  assert.deepEqual(first.events, ["started", "stopped"]);
  assert.equal(first.fence.leading, false);
  await waitFor(() => leaders(candidates).length === 1, 2000);
  const takeoverMs = performance.now() - releasedAt;
  // A released Lease is free: no waiting for it to expire (at most one jittered retry).
  assert.ok(takeoverMs < LEASE_MS / 2 + RETRY_MS, `takeover took ${takeoverMs} ms`);
  const [second] = leaders(candidates);
  assert.ok(second && second !== first);

  lease = spec(await cluster.rawLease());
  assert.equal(lease.holderIdentity, second.identity);
  assert.equal(lease.leaseTransitions, 1);
  assert.notEqual(lease.acquireTime, firstAcquire);
  assert.equal(first.metrics.gauge("ccm_leader_is_leader", "").total(), 0);

  assert.equal(await second.stop(), "released");
  await waitFor(() => leaders(candidates).length === 1, 2000);
  assert.equal(spec(await cluster.rawLease()).leaseTransitions, 2);
  assert.equal(sampler.maxLeading(), 1);
});

Deno.test("LeaderElector.run() takes over after the leader crashes, once the Lease expires", async () => {
  await using cluster = await startCluster();
  // Fixed jitter (0): each candidate retries exactly every RETRY_MS, so the bound below is exact.
  const candidates = [cluster.candidate({ random: () => 0 }), cluster.candidate({ random: () => 0 })];
  using sampler = sampleFences(candidates.map((c) => c.fence));
  for (const c of candidates) c.start();
  await waitFor(() => leaders(candidates).length === 1);
  await new Promise((r) => setTimeout(r, 2 * RETRY_MS));
  const [leader] = leaders(candidates);
  const standby = candidates.find((c) => c !== leader);
  assert.ok(leader && standby);

  // A crash, as the cluster sees it: the leader's writes stop for good, nothing is released.
  const crashedAt = performance.now();
  await leader.proxy?.close();
  await waitFor(() => standby.fence.leading, 3 * LEASE_MS);
  const takeoverMs = performance.now() - crashedAt;

  // Never before the Lease could have expired: the last renew was at most one retry before the crash.
  assert.ok(takeoverMs >= LEASE_MS - RETRY_MS - 50, `took over early, after ${takeoverMs} ms`);
  // Expiry counts from when the standby saw the last renew (≤ 1 retry late), then ≤ 1 retry to notice.
  assert.ok(takeoverMs <= LEASE_MS + 2 * RETRY_MS + 150, `takeover took ${takeoverMs} ms`);
  assert.equal(sampler.maxLeading(), 1);
  assert.equal(spec(await cluster.rawLease()).holderIdentity, standby.identity);
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
