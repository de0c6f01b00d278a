/** A leader term that fails ends the leadership: fence off, Lease released, outcome "failed". Fake clock. */
import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { advanceUntil, LEASE_MS, RETRY_MS, startCluster, waitFor } from "./testdata/fixtures.ts";

const TERM_ENDINGS: { name: string; run: () => Promise<void> }[] = [
  { name: "throws", run: () => Promise.reject(new RangeError("Invalid IPv4 CIDR fd00::/64")) },
  { name: "returns while still leading", run: () => Promise.resolve() },
];

for (const ending of TERM_ENDINGS) {
  Deno.test(`LeaderElector.run() releases the Lease and resolves failed when its term ${ending.name}`, async () => {
    await using cluster = await startCluster();
    const clock = new FakeClock();
    let started = 0;
    const leader = cluster.candidate({ clock }).start({
      onStartedLeading: async () => {
        started++;
        await ending.run();
      },
    });
    // No clock advance: the release follows the failure at once, not at the next renew.
    await waitFor(() => cluster.holder() === "");
    assert.equal(await leader.outcome, "failed");
    assert.equal(started, 1);
    assert.equal(leader.fence.leading, false);
    assert.equal(leader.metrics.gauge("ccm_leader_is_leader", "").total(), 0);
    // The failed leader wrote its acquisition and its release, and never renewed in between.
    assert.deepEqual(leader.api.calls.filter((c) => c.op !== "get").map((c) => c.op), ["create", "replace"]);
  });
}

Deno.test("LeaderElector.run() hands a failed leader's Lease to a standby without waiting for it to expire", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const failing = Promise.withResolvers<void>();
  const leader = cluster.candidate({ clock, random: () => 0 }).start({
    onStartedLeading: () => failing.promise,
  });
  await waitFor(() => leader.fence.leading);
  const standby = cluster.candidate({ clock, random: () => 0 }).start();
  await waitFor(() => standby.api.calls.length >= 1);
  failing.reject(new Error("controllers failed"));
  assert.equal(await leader.outcome, "failed");
  // The standby's next poll finds the Lease free: long before the failed leader's Lease could expire.
  const advancedMs = await advanceUntil(clock, RETRY_MS, () => standby.fence.leading);
  assert.ok(advancedMs < LEASE_MS, `took ${advancedMs} ms of fake time`);
  assert.equal(cluster.holder(), standby.identity);
});
