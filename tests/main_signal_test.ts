/**
 * `main.ts` as a process gets its stop signal twice, as under `deno task` (the signal to the process group,
 * then the task runner's forward) or Ctrl-C in a terminal: it counts once, the Lease is handed back, exit 0.
 * Its controller hangs in a Linode request meanwhile, so the process is still draining when the repeat comes
 * (an idle CCM may be gone before the test's second signal), and the hand-over must not wait for it.
 */
import assert from "node:assert/strict";
import { startDemoWorld } from "../sim/demo_world.ts";
import { FAST_LEASE_FLAGS, LeaseHistory, spawnCcm, waitFor } from "./process.ts";

/**
 * The steps of a stop, in the order they must be logged. The release and the drain run side by side once the
 * term stops; here the controller hangs, so the drain deadline (5 s) comes long after the release.
 */
const STEPS = [
  /^received "?SIG\w+"?: stopping/,
  /^stopping the leader term/,
  /^released leadership of lease/,
  /^controllers still busy/,
  /^stopped$/,
];

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.test(`main() counts a doubled ${signal} once, releases the Lease and exits 0`, async () => {
    await using world = await startDemoWorld({ nodes: 1, services: 0 });
    world.linode.faults.hang({ route: "/linode/instances" });
    using lease = new LeaseHistory(world.kube);
    await using ccm = spawnCcm(FAST_LEASE_FLAGS, {
      env: { ...world.env, LINODE_INSTANCE_CACHE_TTL: "1" },
      readDirs: [world.kubeconfigPath.replace(/\/[^/]+$/, "")],
    });
    const identity = String((await ccm.waitForLog(/^became leader/)).record.identity);
    assert.equal(lease.holder, identity);
    await waitFor(() => world.linode.faults.hungCount >= 1, { what: "the leader's controller hanging" });

    // The task runner's forward comes after the process got the signal itself (two signals sent back to back
    // may merge into one delivery).
    ccm.kill(signal);
    await ccm.waitForLog(/^received/);
    ccm.kill(signal);
    const exit = await ccm.exited();
    assert.equal(exit.code, 0, ccm.output);
    assert.equal(lease.holder, "", "the Lease is released");
    assert.equal(lease.changes().map((w) => w.holder).join(","), `${identity},`);
    const messages = ccm.lines.map((l) => l.message);
    const at = STEPS.map((step) => messages.findIndex((m) => step.test(m)));
    assert.ok(at.every((i) => i >= 0), `missing steps ${STEPS.filter((_, i) => at[i]! < 0)}:\n${ccm.output}`);
    assert.deepEqual([...at].sort((a, b) => a - b), at, `steps out of order:\n${messages.join("\n")}`);
    assert.equal(ccm.logs(/^received/).length, 2, "each delivery is logged");
    assert.equal(ccm.logs(/again within \d+ ms: counted once/).length, 1, ccm.output);
  });
}
