/**
 * A leader cut off from the apiserver (a TCP proxy between it and the emulator blackholes every byte)
 * stops leading at its renew deadline, before its Lease can expire for the others, and exits 1.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startProxy } from "../sim/proxy.ts";
import {
  assertTakeoverAfterExpiry,
  identityOf,
  MARGIN_MS,
  startElectionWorld,
  waitForCampaigning,
  waitForInitialised,
  waitForLeader,
} from "./leader_fixture.ts";

/** A lease long enough that the gap between renew deadline and expiry is wide on a busy machine. */
const TIMING = { leaseDurationMs: 3000, renewDeadlineMs: 1500, retryPeriodMs: 250 };

/** Kube emulator requests that change something (everything but reads and watches). */
function isWrite(key: string): boolean {
  return !/^(GET|LIST|WATCH) /.test(key);
}

Deno.test("main() leader cut off from the apiserver stops at its renew deadline, exits 1, and is replaced", async () => {
  await using ew = await startElectionWorld({ timing: TIMING });
  const { world, lease } = ew;
  await using proxy = startProxy({ port: Number(new URL(world.kube.url).port) });
  const viaProxy = join(world.kubeconfigPath, "..", "kubeconfig-via-proxy");
  await Deno.writeTextFile(
    viaProxy,
    world.kube.kubeconfig().replace(world.kube.url, `https://127.0.0.1:${proxy.port}`),
    { mode: 0o600 },
  );
  await using a = ew.spawn("a", { kubeconfig: viaProxy });
  assert.equal(await waitForLeader(ew, [a]), a);
  await using b = ew.spawn("b");
  await waitForCampaigning(ew, [b]);
  const idA = identityOf(a) ?? "";

  await proxy.cut({ mode: "blackhole" });
  const cutAt = Date.now();
  // A Node joins while the leader is cut off: only a leader that can reach the apiserver may initialise it.
  const lateId = world.addNode("joined-during-cut");
  // Reconnect the old leader after its renew deadline but well before its Lease expires: a leader that had
  // not given up would renew or initialise the Node now, before the standby may take over. (A renew whose
  // bytes passed just before the cut may still commit; its answer is lost, so A's deadline is earlier.)
  const renewAtCut = lease.lastBy(idA);
  assert.ok(renewAtCut);
  const restoreAt = renewAtCut.atMs + TIMING.renewDeadlineMs + 200;
  await new Promise((r) => setTimeout(r, Math.max(0, restoreAt - Date.now())));
  await proxy.restore();
  const restoredAt = Date.now();
  const restoredIndex = world.kube.calls.log.length;

  const exit = await a.exited(10_000);
  assert.equal(exit.code, 1, a.output);
  const lastRenew = lease.lastBy(idA);
  assert.ok(lastRenew && lastRenew.atMs <= cutAt + MARGIN_MS);
  const lost = a.logs(/^leadership lost/)[0];
  assert.ok(lost, a.output);
  const lostAfterMs = lost.atMs - lastRenew.atMs;
  assert.ok(
    lostAfterMs <= TIMING.renewDeadlineMs + MARGIN_MS,
    `gave up ${lostAfterMs} ms after its last renew`,
  );
  assert.ok(exit.atMs - lastRenew.atMs < TIMING.leaseDurationMs, "still running when its Lease expired");
  assert.ok(a.logs(/^lost leadership/).length === 1 && a.logs(/^released leadership/).length === 0, a.output);

  assert.equal(await waitForLeader(ew, [b]), b);
  assertTakeoverAfterExpiry(ew, idA, identityOf(b) ?? "");
  const takeover = lease.writes.find((w) => w.holder === identityOf(b));
  assert.ok(takeover && takeover.atMs > restoredAt, "B took over only after the restore");
  assert.equal(lease.writes.filter((w) => w.holder === idA && w.atMs >= restoredAt).length, 0, "A renewed");
  // From the restore to B's acquisition nothing changed: A wrote nothing after its deadline, B only polled.
  const between = world.kube.calls.log.slice(restoredIndex, takeover.callIndex - 1);
  assert.ok(between.some((c) => c.key.includes("/leases/")), "B polled the Lease meanwhile");
  assert.deepEqual(between.filter((c) => isWrite(c.key)).map((c) => `${c.key} ${c.status}`), []);
  await waitForInitialised(ew, "joined-during-cut", lateId);

  b.kill("SIGTERM");
  assert.equal((await b.exited(5_000)).code, 0, b.output);
});
