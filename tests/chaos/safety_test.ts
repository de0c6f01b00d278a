/** The chaos suite's own checks can fail: destructive changes nobody released are caught as they happen. */
import assert from "node:assert/strict";
import { setNodeReady } from "../../sim/kubelet.ts";
import { attemptsWithin } from "./bounds.ts";
import { SafetyMonitor } from "./safety.ts";
import { startChaosWorld } from "./world.ts";

Deno.test("SafetyMonitor records Node deletions, lost ranges and deleted NodeBalancers that were not released", async () => {
  await using w = await startChaosWorld({ nodes: 3, services: 1 });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  safety.baseline();
  // Legitimate for the CCM, but not released: each must show up as a violation.
  w.linode.world.deleteInstance(w.linodeIdOf("node-3"));
  setNodeReady(w.kube, "node-3", false);
  w.kube.store.delete("nodes", "node-2");
  const [service] = w.services();
  w.kube.store.delete("services", service?.metadata?.name ?? "", "default");
  await w.tick(60_000, 5_000);
  const seen = safety.violations.join("\n");
  assert.match(seen, /Node node-3 deleted/);
  assert.match(seen, /lost ranges 10\.192\.1\.0\/24/, "node-2's route removed");
  assert.match(seen, /NodeBalancer \d+ deleted/);
  assert.throws(() => safety.assertClean(), /Safety violated/);
});

const ATTEMPTS = [
  { windowMs: 0, backoff: { baseMs: 1000, maxMs: 60_000, jitter: 0 }, want: 1 },
  { windowMs: 999, backoff: { baseMs: 1000, maxMs: 60_000, jitter: 0 }, want: 1 },
  { windowMs: 1000, backoff: { baseMs: 1000, maxMs: 60_000, jitter: 0 }, want: 2 },
  { windowMs: 3000, backoff: { baseMs: 1000, maxMs: 60_000, jitter: 0 }, want: 3 },
  { windowMs: 900, backoff: { baseMs: 1000, maxMs: 60_000 }, want: 2 },
  { windowMs: 5000, backoff: { baseMs: 1000, maxMs: 2000, jitter: 0 }, want: 4 },
];

for (const c of ATTEMPTS) {
  Deno.test(`attemptsWithin() ${c.windowMs} ms with ${JSON.stringify(c.backoff)} is ${c.want}`, () => {
    assert.equal(attemptsWithin(c.windowMs, c.backoff), c.want);
  });
}
