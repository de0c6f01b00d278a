/**
 * A stop hands the Lease over at once even while a controller is busy: here the cloud-node controller hangs in
 * a Linode request that never answers. Through `runCcm`, on a fake clock: the order of the steps is asserted,
 * never their timing.
 */
import assert from "node:assert/strict";
import { type CcmOutcome, runCcm, type RunningCcm } from "../ccm.ts";
import { FakeClock } from "../common/clock.ts";
import { captureLogs } from "../common/log.ts";
import { parseConfig } from "../config/config.ts";
import { DEFAULT_DRAIN_MS } from "../lease/term.ts";
import { Registry } from "../common/metrics.ts";
import { startDemoWorld } from "../sim/demo_world.ts";
import { freePort, waitFor } from "./process.ts";

/** `/readyz?verbose` of a running CCM: status and body. */
async function readyz(ccm: RunningCcm): Promise<[number, string]> {
  assert.ok(ccm.server);
  using client = Deno.createHttpClient({ caCerts: [ccm.server.certPem] });
  const res = await fetch(`${ccm.server.url}/readyz?verbose`, { client });
  return [res.status, await res.text()];
}

const LEASE = ["leases", "cloud-controller-manager", "kube-system"] as const;

Deno.test("runCcm() releases the Lease on stop while a controller hangs in a Linode request, then drains within its deadline", async () => {
  await using world = await startDemoWorld({ nodes: 1, services: 0 });
  const logs = await captureLogs("info");
  const parsed = parseConfig(["--bind-address=127.0.0.1", `--secure-port=${freePort()}`], world.env);
  if (parsed.kind !== "run") throw new Error(parsed.kind);
  const hang = world.linode.faults.hang({ route: "/linode/instances" });
  const clock = new FakeClock();
  const stop = new AbortController();
  const started = Promise.withResolvers<RunningCcm>();
  let outcome: CcmOutcome | undefined;
  const run = runCcm(parsed.config, {
    clock,
    metrics: new Registry(),
    hostname: "busy",
    onStarted: (ccm) => started.resolve(ccm),
  }, stop.signal).then((o) => outcome = o);
  try {
    const ccm = await started.promise;
    const holder = () =>
      (world.kube.store.get(...LEASE) as { spec?: { holderIdentity?: string } } | undefined)
        ?.spec?.holderIdentity;
    await waitFor(() => holder() === ccm.identity && world.linode.faults.hungCount >= 1, {
      what: "the leader's controller hanging in GET /linode/instances",
    });

    stop.abort(new DOMException("received SIGTERM", "AbortError"));
    await waitFor(() => holder() === "", { what: "the Lease released", timeoutMs: 5_000 });
    // The apiserver holds the release before the elector reads its answer and logs it: wait for the log line
    // too, so the drain deadline below cannot be logged first.
    await waitFor(() => logs.lines.some((l) => /^released leadership/.test(String(JSON.parse(l).message))), {
      what: "the release logged",
    });
    assert.ok(world.linode.faults.hungCount >= 1, "released only once the controller let go");
    assert.equal(ccm.fence.leading, false);
    assert.equal(outcome, undefined, "runCcm() waits for the controllers until the drain deadline");
    const [status, body] = await readyz(ccm);
    assert.equal(status, 500);
    assert.match(body, /^\[-\]leadership failed: shutting down$/m);

    await clock.advance(DEFAULT_DRAIN_MS);
    await waitFor(() => outcome !== undefined, { what: "runCcm() to end at the drain deadline" });
    assert.equal(outcome, "stopped");
    assert.ok(world.linode.faults.hungCount >= 1, "the controller is still hung");
    const messages = logs.lines.map((l) => String(JSON.parse(l).message));
    const steps = [/^stopping the leader term/, /^released leadership/, /^controllers still busy/].map((re) =>
      messages.findIndex((m) => re.test(m))
    );
    assert.ok(steps.every((i) => i >= 0), messages.join("\n"));
    assert.deepEqual([...steps].sort((a, b) => a - b), steps, messages.join("\n"));
  } finally {
    stop.abort();
    await clock.advance(DEFAULT_DRAIN_MS);
    await run;
    // Let the abandoned request end, so the controller finishes before the emulators close.
    world.linode.faults.remove(hang);
    await waitFor(() => logs.text().includes("after the stop"), { what: "the late controller to finish" });
  }
});
