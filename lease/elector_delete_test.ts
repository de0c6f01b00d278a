/**
 * A deleted Lease frees nothing early: a standby that sees the deletion waits out the duration of the last
 * record it saw, and a leader whose renew finds the Lease gone steps down at once without re-creating it. On a
 * fake clock, so every bound is checked at the exact fake millisecond.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import {
  type Candidate,
  countingRandom,
  KEY,
  leaders,
  LEASE_MS,
  RENEW_DEADLINE_MS,
  RETRY_MS,
  startCluster,
  waitFor,
} from "./testdata/fixtures.ts";

const LEASE_ROUTE = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}";

/** Advances `clock` by `ms`, then waits until `settled()` holds. */
async function step(clock: FakeClock, ms: number, settled: () => boolean): Promise<void> {
  await clock.advance(ms);
  await waitFor(settled);
}

/** Writes (create or replace) `c` sent at or after fake time `fromMs`. */
function writesSince(c: Candidate, fromMs: number): string[] {
  return c.api.calls.filter((call) => call.op !== "get" && call.at >= fromMs).map((call) => call.op);
}

Deno.test("LeaderElector.run() with a deleted Lease: the leader steps down at its next renew, the standby waits out the lease", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock, random: () => 0 }).start();
  await waitFor(() => leader.fence.leading);
  const watch = cluster.watch(clock);
  await waitFor(() => watch.healthy);
  const jitter = countingRandom(0);
  const standby = cluster.candidate({ clock, changes: watch, random: jitter.random }).start();
  await waitFor(() => jitter.draws === 1);
  let deleted = false;
  let renewals = 0;
  watch.onChange((lease) => lease ? renewals++ : deleted = true);
  await step(clock, RETRY_MS, () => leader.api.settledWrites(2) && renewals === 1 && jitter.draws === 2);
  const lastRenewMs = clock.monotonic();

  cluster.kube.store.delete("leases", KEY.name, KEY.namespace);
  await waitFor(() => deleted);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(standby.fence.leading, false, "a deletion is not a release: nothing is taken at once");
  assert.equal(cluster.holder(), undefined);

  // The leader's next renew meets the deletion (409 on the UID precondition, then 404): it steps down at once.
  await step(clock, RETRY_MS, () => !leader.fence.leading && jitter.draws === 3);
  assert.equal(cluster.holder(), undefined, "the old leader must not re-create the Lease");
  assert.deepEqual(writesSince(leader, lastRenewMs + RETRY_MS), ["replace"]);
  assert.equal(await leader.outcome, "lost");
  assert.deepEqual(leader.events, ["started", "stopped"]);

  // Up to one millisecond before the last record seen (the renew at lastRenewMs) expires: still nobody leads.
  const polls = jitter.draws;
  await step(clock, lastRenewMs + LEASE_MS - 1 - clock.monotonic(), () => jitter.draws > polls);
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(leaders([leader, standby]), []);
  assert.equal(cluster.holder(), undefined);
  // At that millisecond the standby creates it.
  await step(clock, 1, () => standby.fence.leading);
  assert.equal(clock.monotonic(), lastRenewMs + LEASE_MS);
  assert.equal(cluster.holder(), standby.identity);
  assert.deepEqual(writesSince(standby, 0), ["create"]);
});

Deno.test("LeaderElector.run() steps down at once, fence first, when a renew is answered 404", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock, random: () => 0 }).start();
  await waitFor(() => leader.fence.leading);
  await step(clock, RETRY_MS, () => leader.api.settledWrites(2));
  cluster.kube.faults.add({ method: "PUT", route: LEASE_ROUTE, status: 404 });

  await step(clock, RETRY_MS, () => !leader.fence.leading);
  assert.equal(await leader.outcome, "lost");
  // One renew answered 404, then nothing: no read, no re-creation, no renew until the deadline.
  assert.deepEqual(leader.api.calls.slice(-1).map((c) => c.op), ["replace"]);
  assert.equal(leader.api.calls.length, 4, "read, create, one renew, the renew answered 404");
  assert.equal(cluster.holder(), leader.identity, "the fault left the stored Lease alone");
});

Deno.test("LeaderElector.run() with a Lease watch takes an unrenewed Lease the moment it expires", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock, random: () => 0 }).start();
  await waitFor(() => leader.fence.leading);
  const watch = cluster.watch(clock);
  await waitFor(() => watch.healthy);
  let renewals = 0;
  watch.onChange(() => renewals++);
  // The largest jitter: polling alone would find the expiry up to 2.2 retry periods late.
  const jitter = countingRandom(0.99);
  const standby = cluster.candidate({ clock, changes: watch, random: jitter.random }).start();
  await waitFor(() => jitter.draws === 1);
  await step(clock, RETRY_MS, () => leader.api.settledWrites(2) && renewals === 1);
  const lastRenewMs = clock.monotonic();

  // SIGKILL: the leader's writes stop for good, nothing is released.
  await leader.proxy?.close();
  await clock.advance(LEASE_MS - 1);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(standby.fence.leading, false, "took the Lease before it expired");
  await clock.advance(1);
  await waitFor(() => standby.fence.leading);
  assert.equal(clock.monotonic(), lastRenewMs + LEASE_MS);
  assert.equal(cluster.holder(), standby.identity);
});

Deno.test("LeaderElector.run() stopped while its acquire reads the Lease writes nothing and starts no term", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const candidate = cluster.candidate({ clock });
  const read = Promise.withResolvers<void>();
  const held = Promise.withResolvers<void>();
  candidate.api.gate = async () => {
    read.resolve();
    await held.promise;
  };
  candidate.start();
  await read.promise;
  const outcome = candidate.stop();
  held.resolve();
  assert.equal(await outcome, "released");
  assert.deepEqual(candidate.api.writes, []);
  assert.deepEqual(candidate.events, []);
  assert.equal(cluster.holder(), undefined);
});

Deno.test("LeaderElector.run() stopped while its acquiring write is in flight hands the Lease back and starts no term", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const candidate = cluster.candidate({ clock });
  // The create commits, then its answer is held back while the stop arrives.
  cluster.kube.faults.add({
    method: "POST",
    route: "/apis/coordination.k8s.io/v1/namespaces/*",
    latencyMs: 200,
  });
  candidate.start();
  await waitFor(() => candidate.api.writes.length === 1);
  const outcome = candidate.stop();
  assert.equal(await outcome, "released");
  assert.deepEqual(candidate.events, []);
  assert.equal(candidate.fence.leading, false);
  assert.equal(cluster.holder(), "", "the committed acquisition was released");
});

Deno.test("LeaderElector.run() stopped with a write in flight releases the Lease only once that write can no longer be running", async () => {
  await using cluster = await startCluster();
  const clock = new FakeClock();
  const leader = cluster.candidate({ clock, random: () => 0 }).start();
  await waitFor(() => leader.fence.leading);
  // A write sent 100 ms before the stop; the default write timeout is lease duration minus renew deadline.
  const settled = leader.fence.writeStarted(clock.monotonic());
  await clock.advance(100);
  const writeTimeoutMs = LEASE_MS - RENEW_DEADLINE_MS;
  const outcome = leader.stop();
  await waitFor(() => !leader.fence.leading && clock.pendingSleeps > 0);
  await clock.advance(writeTimeoutMs - 100 - 1);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(cluster.holder(), leader.identity, "released while its write could still land");
  await clock.advance(1);
  await waitFor(() => cluster.holder() === "");
  assert.equal(await outcome, "released");
  settled();
});
