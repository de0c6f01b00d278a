/**
 * A standby that watches the Lease takes it the moment it is released, not at its next poll; with the watch
 * down it still polls. On a fake clock: "at once" means no fake time passes at all.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { ACQUIRE_JITTER_FACTOR } from "./elector.ts";
import {
  advanceUntil,
  countingRandom,
  LEASE_MS,
  RETRY_MS,
  startCluster,
  waitFor,
} from "./testdata/fixtures.ts";

Deno.test("LeaderElector.run() with a Lease watch takes a released Lease without waiting a retry period", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock }).start();
  await waitFor(() => leader.fence.leading);
  const watch = cluster.watch(clock);
  await waitFor(() => watch.healthy);
  const jitter = countingRandom();
  const standby = cluster.candidate({ clock, changes: watch, random: jitter.random }).start();
  await waitFor(() => jitter.draws === 1); // polled, found the Lease held, now sleeping for a retry

  assert.equal(await leader.stop(), "released");
  await waitFor(() => standby.fence.leading);
  assert.equal(clock.monotonic(), 0, "no fake time passed: the standby did not wait for its retry");
  assert.equal(jitter.draws, 1);
  assert.equal(cluster.holder(), standby.identity);
  // One poll before the release, one attempt (read, then write) after it.
  assert.deepEqual(standby.api.calls.map((c) => c.op), ["get", "get", "replace"]);
});

Deno.test("LeaderElector.run() falls back to polling every retry period while the Lease watch is down", async () => {
  await using cluster = await startCluster();
  // Every list of the Lease collection fails: the watch never gets going.
  cluster.kube.faults.add({
    method: "GET",
    route: "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases",
    status: 503,
  });
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock }).start();
  await waitFor(() => leader.fence.leading);
  const watch = cluster.watch(clock);
  const jitter = countingRandom();
  const standby = cluster.candidate({ clock, changes: watch, random: jitter.random }).start();
  await waitFor(() => jitter.draws === 1);

  assert.equal(await leader.stop(), "released");
  const waitedMs = await advanceUntil(clock, RETRY_MS, () => standby.fence.leading);
  assert.equal(watch.healthy, false);
  // Its next poll, one jittered retry period later, found the Lease free (long before it could expire).
  const retryMs = RETRY_MS * (1 + 0.5 * ACQUIRE_JITTER_FACTOR);
  assert.ok(waitedMs >= retryMs && waitedMs < LEASE_MS, `took over after ${waitedMs} ms`);
  assert.equal(jitter.draws, 1, "one retry sleep, then the take-over");
  assert.equal(cluster.holder(), standby.identity);
});
