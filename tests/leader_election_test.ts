/** Leader election between real CCM processes: one leader at a time, takeover after SIGKILL and SIGTERM. */
import assert from "node:assert/strict";
import {
  assertControllersRun,
  assertOneLeaderAtATime,
  assertTakeoverAfterExpiry,
  assertTakeoverAfterRelease,
  identityOf,
  startElectionWorld,
  waitForCampaigning,
  waitForLeader,
} from "./leader_fixture.ts";
import type { CcmProcess } from "./process.ts";

Deno.test("main() with two replicas: the standby takes over after the leader is killed, once its Lease expires", async () => {
  await using ew = await startElectionWorld();
  await using a = ew.spawn("a");
  assert.equal(await waitForLeader(ew, [a]), a);
  await using b = ew.spawn("b");
  await waitForCampaigning(ew, [b]);
  assert.equal(identityOf(b), undefined, "b leads while a holds the Lease");
  const idA = identityOf(a) ?? "";

  const killedAt = a.kill("SIGKILL");
  assert.equal(await waitForLeader(ew, [b]), b);
  assertTakeoverAfterExpiry(ew, idA, identityOf(b) ?? "");
  assert.equal((await a.exited()).signal, "SIGKILL");
  assertOneLeaderAtATime([a, b], (p) => (p === a ? killedAt : Infinity));
  await assertControllersRun(ew, "late-node");

  b.kill("SIGTERM");
  assert.equal((await b.exited(5_000)).code, 0, b.output);
  assert.deepEqual(ew.lease.changes().map((w) => w.holder), [idA, identityOf(b), ""]);
});

Deno.test("main() with three replicas: exactly one standby wins after a kill, and a SIGTERM hands over at once", async () => {
  await using ew = await startElectionWorld();
  await using a = ew.spawn("a");
  await using b = ew.spawn("b");
  await using c = ew.spawn("c");
  const all = [a, b, c];
  const first = await waitForLeader(ew, all);
  const standbys = all.filter((p) => p !== first);
  await waitForCampaigning(ew, standbys);
  assert.deepEqual(standbys.map(identityOf), [undefined, undefined]);

  const ends = new Map<CcmProcess, number>([[first, first.kill("SIGKILL")]]);
  const second = await waitForLeader(ew, standbys);
  const last = standbys.find((p) => p !== second);
  assert.ok(last);
  assertTakeoverAfterExpiry(ew, identityOf(first) ?? "", identityOf(second) ?? "");
  await assertControllersRun(ew, "node-after-kill");

  const termAt = second.kill("SIGTERM");
  assert.equal(await waitForLeader(ew, [last]), last);
  assertTakeoverAfterRelease(ew, identityOf(second) ?? "", last);
  assert.equal((await second.exited(5_000)).code, 0, second.output);
  const released = ew.lease.writes.find((w) => w.holder === "" && w.atMs >= termAt);
  assert.ok(released, "the terminated leader released the Lease");
  ends.set(second, released.atMs);
  await assertControllersRun(ew, "node-after-handover");

  last.kill("SIGTERM");
  assert.equal((await last.exited(5_000)).code, 0, last.output);
  ends.set(last, Infinity);
  const terms = assertOneLeaderAtATime(all, (p) => ends.get(p) ?? Infinity);
  assert.deepEqual(terms.map((t) => t.proc.name), [first, second, last].map((p) => p.name));
  const holders = ew.lease.changes().map((w) => w.holder);
  assert.deepEqual(holders, [identityOf(first), identityOf(second), "", identityOf(last), ""]);
});
