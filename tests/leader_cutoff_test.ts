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
  const cutIndex = world.kube.calls.log.length;
  // A Node joins while the leader is cut off: only a leader that can reach the apiserver may initialise it.
  const lateId = world.addNode("joined-during-cut");
  // Reconnect the old leader once it has given up by its own clock (its renew deadline passed), which is
  // well before its Lease expires for B: a leader that had not given up would renew or initialise the Node
  // now. Triggered by A's log line, not by a timed sleep.
  await a.waitForLog(/^stopping the leader term \("?leadership lost/, 10_000);
  await proxy.restore();
  const restoredIndex = world.kube.calls.log.length;

  const exit = await a.exited(10_000);
  assert.equal(exit.code, 1, a.output);
  assert.ok(a.logs(/^leadership lost/).length === 1, a.output);
  assert.ok(a.logs(/^lost leadership/).length === 1 && a.logs(/^released leadership/).length === 0, a.output);
  // A renew whose bytes reached the emulator before the cut may still have committed; nothing after it.
  assert.deepEqual(lease.writes.filter((w) => w.holder === idA && w.callIndex - 1 >= cutIndex), []);

  assert.equal(await waitForLeader(ew, [b]), b);
  assertTakeoverAfterExpiry(ew, idA, identityOf(b) ?? "");
  const takeover = lease.writes.find((w) => w.holder === identityOf(b));
  assert.ok(takeover);
  // From the restore to B's acquisition nothing changed: A wrote nothing after giving up, B only polled.
  // (Only a test runner stalled for the 1.5 s between A's deadline and the expiry restores after B's
  // take-over; then this window is empty and the check above carries the claim.)
  const between = world.kube.calls.log.slice(restoredIndex, Math.max(restoredIndex, takeover.callIndex - 1));
  assert.deepEqual(between.filter((c) => isWrite(c.key)).map((c) => `${c.key} ${c.status}`), []);
  await waitForInitialised(ew, "joined-during-cut", lateId);

  b.kill("SIGTERM");
  assert.equal((await b.exited(5_000)).code, 0, b.output);
});
