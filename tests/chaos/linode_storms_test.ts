/**
 * Linode API storms while the cluster changes: 429s with `Retry-After` (a tight rate limit plus random 429s),
 * 5xx bursts, and requests that hang until the client's timeout. Nothing is destroyed meanwhile, `Retry-After`
 * is honoured to the millisecond of the shared fake clock, and everything converges once the storm passes.
 */
import assert from "node:assert/strict";
import type { CallRecord } from "../../sim/linode/calls.ts";
import { GENEROUS_RATE_LIMITS } from "../../sim/mod.ts";
import { setNodeReady } from "../../sim/kubelet.ts";
import { SafetyMonitor } from "./safety.ts";
import { newSeed, report, scaled, withSeed } from "./scale.ts";
import { type ChaosWorld, startChaosWorld } from "./world.ts";

/** Changes that need Linode writes: two Nodes join, a Service is added; one Node flaps NotReady (its backends stay, as upstream). */
async function churn(w: ChaosWorld, safety: SafetyMonitor, stepMs: number): Promise<void> {
  w.addNode("joined-1");
  await w.tick(stepMs);
  setNodeReady(w.kube, "node-1", false);
  safety.release({ backendsOf: "node-1" });
  w.addService("storm", 8443);
  await w.tick(stepMs);
  w.addNode("joined-2");
  await w.tick(stepMs);
  setNodeReady(w.kube, "node-1", true);
}

/**
 * Requests the emulator received while a `Retry-After` it sent was running: after a 429 answered at fake time
 * t with `Retry-After: r`, nothing may arrive in (t, t + r s). Requests arriving at t itself were already sent.
 */
function ignoredRetryAfter(log: readonly CallRecord[]): string[] {
  const out: string[] = [];
  for (const limited of log.filter((c) => c.status === 429 && c.retryAfterSec !== undefined)) {
    const until = limited.atMs + (limited.retryAfterSec ?? 0) * 1000;
    const early = log.filter((c) => c.atMs > limited.atMs && c.atMs < until);
    if (early.length > 0) {
      out.push(`${early.length} requests within Retry-After of the 429 at ${limited.atMs}`);
    }
  }
  return out;
}

Deno.test("runCcm() in a 429 storm honours every Retry-After, destroys nothing, and converges", async () => {
  const seed = newSeed();
  await withSeed(seed, async (random) => {
    await using w = await startChaosWorld({ nodes: scaled(3, 10), random });
    using safety = new SafetyMonitor(w);
    await w.start();
    await w.converge();
    safety.baseline();
    const log: CallRecord[] = [];
    const off = w.linode.calls.subscribe((c) => log.push({ ...c }));
    // A budget the churn exceeds, and random 429s on top: Retry-After from the window and a fixed 7 s.
    w.linode.rateLimits.configure([{ name: "storm", limit: 4, windowMs: 10_000, per: "all" }]);
    w.linode.faults.rateLimit(7, { probability: 0.3 });
    await churn(w, safety, 2_000);
    await w.tick(scaled(120_000, 600_000), 1_000);
    off();
    const limited = log.filter((c) => c.status === 429).length;
    assert.ok(limited > 0, "the storm refused requests");
    report("429 storm", { seed, requests: log.length, refused429: limited });
    assert.deepEqual(ignoredRetryAfter(log), []);
    w.linode.faults.clear();
    w.linode.rateLimits.configure(GENEROUS_RATE_LIMITS);
    await w.converge();
    safety.assertClean();
  });
});

Deno.test("runCcm() through 5xx bursts destroys nothing and converges", async () => {
  const seed = newSeed();
  await withSeed(seed, async (random) => {
    await using w = await startChaosWorld({ nodes: scaled(3, 10), random });
    using safety = new SafetyMonitor(w);
    await w.start();
    await w.converge();
    safety.baseline();
    const bursts = scaled(3, 10);
    for (let b = 0; b < bursts; b++) {
      const status = ([500, 502, 503, 504] as const)[Math.floor(random() * 4)] ?? 503;
      const id = w.linode.faults.error(status, { probability: 0.4 + random() * 0.6 });
      if (b === 0) await churn(w, safety, 1_000);
      await w.tick(20_000, 2_000);
      w.linode.faults.remove(id);
      await w.tick(10_000, 2_000);
    }
    const failed = w.linode.calls.log.filter((c) => c.fault === "error").length;
    assert.ok(failed > 0, "the bursts failed requests");
    report("5xx bursts", { seed, requests: w.linode.calls.total(), failed });
    await w.converge();
    safety.assertClean();
  });
});

Deno.test("runCcm() with Linode requests hanging until its timeout destroys nothing and converges", async () => {
  // LINODE_REQUEST_TIMEOUT_SECONDS is real time (a hung socket is not on any clock): the shortest allowed.
  await using w = await startChaosWorld({ nodes: 3, env: { LINODE_REQUEST_TIMEOUT_SECONDS: "1" } });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  safety.baseline();
  const hangs = [
    w.linode.faults.hang({ method: "GET", probability: 0.5 }),
    w.linode.faults.hang({ method: "PUT" }),
    w.linode.faults.hang({ method: "POST", route: "/nodebalancers/*" }),
  ];
  await churn(w, safety, 2_000);
  await w.tick(scaled(20_000, 60_000), 5_000);
  const held = w.linode.calls.log.filter((c) => c.status === 0).length;
  assert.ok(held > 0, "requests were held");
  report("hung requests", { requests: w.linode.calls.total(), held });
  // The client's timeout is real time (a hung socket is on no clock): wait for it, bounded.
  await w.waitFor(() => /^ccm_linode_requests_total\{.*status="timeout"\}/m.test(w.metrics.render()), {
    what: "the client to give up on a hung request",
  });
  for (const id of hangs) w.linode.faults.remove(id);
  await w.converge();
  safety.assertClean();
});
