/**
 * Hand-overs under faults, two replicas in this process on the fake clock (`election.ts`): the Lease deleted
 * under a leader, and a hand-over while the leader's Linode writes are slow. Each asserts that nothing is
 * destroyed, that no replica's write falls outside its own term (`WriteLedger`), and that the new leader
 * converges.
 */
import assert from "node:assert/strict";
import { leadersOf, type Replica, startReplica, stopAll, tickWatching } from "./election.ts";
import { identityOf, WriteLedger } from "./ledger.ts";
import { SafetyMonitor } from "./safety.ts";
import { startChaosWorld } from "./world.ts";

const LEASE = { namespace: "kube-system", name: "cloud-controller-manager" };

/** The replica `a` leading and converged, `b` campaigning; both returned. */
async function leaderAndStandby(w: Awaited<ReturnType<typeof startChaosWorld>>): Promise<[Replica, Replica]> {
  const a = await startReplica(w, "replica-a");
  await w.advanceUntil(() => a.leading(), { what: "replica-a to lead", stepMs: 1_000 });
  const b = await startReplica(w, "replica-b");
  await w.converge();
  // A few renews seen by the standby's watch.
  await w.tick(6_000, 1_000);
  assert.deepEqual(leadersOf([a, b]), [a]);
  return [a, b];
}

Deno.test("runCcm() ×2 with the Lease deleted: never two leaders, no write outside its term, converges", async () => {
  await using w = await startChaosWorld({ nodes: 2, services: 1 });
  using safety = new SafetyMonitor(w);
  using ledger = new WriteLedger(w.linode, w.kube);
  const [a, b] = await leaderAndStandby(w);
  try {
    safety.baseline();
    w.kube.store.delete("leases", LEASE.name, LEASE.namespace);
    // The leader's next renew meets the deletion and steps down; the standby waits out the lease (15 s).
    const most = await tickWatching(w, [a, b], 30_000, 500);
    assert.equal(most, 1, "two leaders at once");
    assert.equal(await a.run, "lost");
    assert.deepEqual(leadersOf([a, b]), [b]);
    w.addNode("after-delete");
    await w.converge();
    safety.assertClean();
    assert.deepEqual(ledger.interleavings(), []);
    assert.ok(ledger.by(b.ccm.identity).some((w) => w.api === "linode"), "the new leader wrote to Linode");
  } finally {
    await stopAll(w, [a, b]);
  }
});

Deno.test("runCcm() ×2 handing over while the leader's Linode writes are slow: none lands in the next term", async () => {
  await using w = await startChaosWorld({ nodes: 2, services: 1 });
  using safety = new SafetyMonitor(w);
  using ledger = new WriteLedger(w.linode, w.kube);
  const [a, b] = await leaderAndStandby(w);
  try {
    safety.baseline();
    const idA = a.ccm.identity;
    // Every Linode write of the leader takes 3 s (below the 5 s write attempt: lease 15 s − renew deadline 10 s).
    for (const method of ["POST", "PUT", "DELETE"]) w.linode.faults.latency(3_000, { method, agent: idA });
    w.addNode("slow-1");
    const pendingWrite = () =>
      w.linode.calls.log.some((c) => c.status === 0 && c.method !== "GET" && identityOf(c.userAgent) === idA);
    await w.waitFor(pendingWrite, { what: "a slow write of the leader in flight" });

    a.stop(); // SIGTERM while it is in flight
    const most = await tickWatching(w, [a, b], 20_000, 500);
    assert.equal(most, 1, "two leaders at once");
    assert.equal(await a.run, "stopped");
    assert.deepEqual(leadersOf([a, b]), [b]);
    await w.converge();
    safety.assertClean();
    assert.deepEqual(ledger.interleavings(), []);
  } finally {
    w.linode.faults.clear();
    await stopAll(w, [a, b]);
  }
});
