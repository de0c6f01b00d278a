/** `runLeadership()`: a failed term ends the run and turns `/readyz` not ready first; both election modes. */
import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { ALWAYS_LEADING, type Fence, SwitchFence } from "../common/write_guard.ts";
import {
  LEASE_MS,
  RecordingLeaseApi,
  RENEW_DEADLINE_MS,
  RETRY_MS,
  startCluster,
  waitFor,
} from "./testdata/fixtures.ts";
import { LeadershipReadiness, runLeadership } from "./leadership.ts";
import { newIdentity } from "./lease.ts";
import { DEFAULT_DRAIN_MS } from "./term.ts";

const CONFIG = {
  enabled: true,
  leaseDurationMs: LEASE_MS,
  renewDeadlineMs: RENEW_DEADLINE_MS,
  retryPeriodMs: RETRY_MS,
  namespace: "kube-system",
  name: "linode-cloud-controller-manager",
};

function depsFor(api: RecordingLeaseApi, fence: Fence) {
  return {
    api,
    fence,
    clock: new FakeClock(),
    log: componentLogger("lease"),
    metrics: new Registry(),
    identity: newIdentity("node-a"),
    readiness: new LeadershipReadiness(),
  };
}

Deno.test("runLeadership() turns not ready before it releases the Lease of a failed term, then resolves failed", async () => {
  await using cluster = await startCluster();
  const api = new RecordingLeaseApi(cluster.api());
  const deps = depsFor(api, new SwitchFence());
  const fail = Promise.withResolvers<void>();
  let started = false;
  const run = runLeadership(CONFIG, deps, () => {
    started = true;
    return fail.promise;
  }, new AbortController().signal);
  await waitFor(() => started);
  assert.equal(cluster.holder(), deps.identity);
  assert.equal(deps.readiness.check(), true);

  api.stick();
  fail.reject(new RangeError("Invalid IPv4 CIDR fd00::/64"));
  await waitFor(() => deps.readiness.check() !== true);
  assert.equal(deps.readiness.check(), "the leader term failed: Invalid IPv4 CIDR fd00::/64");
  assert.equal(deps.fence.leading, false);
  assert.equal(cluster.holder(), deps.identity, "released before /readyz said so");
  api.unstick();
  assert.equal(await run, "failed");
  assert.equal(cluster.holder(), "");
});

Deno.test("runLeadership() with --leader-elect=false resolves failed when the controllers throw, and touches no Lease", async () => {
  await using cluster = await startCluster();
  const api = new RecordingLeaseApi(cluster.api());
  const deps = depsFor(api, ALWAYS_LEADING);
  const run = runLeadership(
    { ...CONFIG, enabled: false },
    deps,
    () => Promise.reject(new Error("cannot start")),
    new AbortController().signal,
  );
  assert.equal(await run, "failed");
  assert.equal(deps.readiness.check(), "the leader term failed: cannot start");
  assert.deepEqual(api.calls, []);
});

Deno.test("runLeadership() with --leader-elect=false stops on its signal, waiting at most the drain deadline", async () => {
  await using cluster = await startCluster();
  const deps = depsFor(new RecordingLeaseApi(cluster.api()), ALWAYS_LEADING);
  const stop = new AbortController();
  const never = Promise.withResolvers<void>();
  let told = false;
  const run = runLeadership({ ...CONFIG, enabled: false }, deps, async (term) => {
    term.addEventListener("abort", () => told = true);
    await never.promise; // a controller stuck in a request that ignores its signal
  }, stop.signal);
  stop.abort(new DOMException("received SIGTERM", "AbortError"));
  await waitFor(() => told && deps.clock.pendingSleeps === 1);
  assert.equal(deps.readiness.check(), "shutting down");
  await deps.clock.advance(DEFAULT_DRAIN_MS);
  assert.equal(await run, "stopped");
  never.resolve();
});
