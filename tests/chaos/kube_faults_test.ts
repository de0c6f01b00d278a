/**
 * The Kubernetes API misbehaving while the cluster changes: watches dropped every few seconds, a compacted
 * history so every re-watch gets 410 Expired, a minute of refused connections, and a 409 Conflict on the first
 * try of every write. The informers recover (each watches again and holds what the store holds), the
 * controllers converge, and nothing is destroyed on the way.
 */
import assert from "node:assert/strict";
import { setNodeReady } from "../../sim/kubelet.ts";
import { SafetyMonitor } from "./safety.ts";
import { report, scaled } from "./scale.ts";
import { type ChaosWorld, startChaosWorld } from "./world.ts";

/** The informers the CCM runs: Secrets are read by name, never watched. */
const INFORMERS = ["nodes", "services"];

/** Asserts every informer is watching again and the Node informer holds exactly the store's Nodes. */
async function assertInformersRecovered(w: ChaosWorld): Promise<void> {
  await w.advanceUntil(() => w.kube.openWatches === INFORMERS.length, { what: "every watch", stepMs: 1_000 });
  const healthy = w.metrics.gauge("ccm_informer_healthy", "", ["resource"]);
  for (const resource of INFORMERS) {
    assert.equal(healthy.get({ resource }), 1, `${resource} informer healthy`);
  }
  const names = (list: readonly { metadata?: { name?: string } }[]) =>
    list.map((n) => n.metadata?.name).sort();
  assert.deepEqual(names(w.ccm.nodes.list()), names(w.nodes()), "the Node informer holds the store's Nodes");
}

/** One round of changes: a Node joins, another flaps NotReady and back, a Service comes or goes. */
function change(w: ChaosWorld, safety: SafetyMonitor, round: number): void {
  w.addNode(`joined-${round}`);
  const flapping = `node-${(round % 3) + 1}`;
  safety.release({ backendsOf: flapping });
  setNodeReady(w.kube, flapping, round % 2 === 1);
  if (round % 2 === 0) w.addService(`svc-${round}`, 9000 + round);
}

Deno.test("runCcm() with watches dropped every few seconds converges and its informers recover", async () => {
  await using w = await startChaosWorld({ nodes: 3 });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  safety.baseline();
  const rounds = scaled(6, 30);
  const watches = () => INFORMERS.reduce((n, r) => n + w.kube.calls.count(`WATCH /api/v1/${r}`), 0);
  const watchesBefore = watches();
  let dropped = 0;
  for (let round = 0; round < rounds; round++) {
    change(w, safety, round);
    for (let s = 0; s < 4; s++) {
      dropped += w.kube.faults.dropWatches({ reset: (round + s) % 2 === 0 });
      await w.tick(3_000);
    }
  }
  // A reset nobody saw (client-node under Deno) ends at the informer's silence watchdog, a clean end at once:
  // either way each informer watches again.
  assert.ok(dropped >= rounds, `${dropped} watches dropped`);
  for (let i = 1; i <= 3; i++) setNodeReady(w.kube, `node-${i}`, true);
  await w.converge();
  await assertInformersRecovered(w);
  assert.ok(
    watches() - watchesBefore >= dropped,
    `${watches() - watchesBefore} re-watches for ${dropped} drops`,
  );
  report("watch drops", { dropped, rewatches: watches() - watchesBefore });
  safety.assertClean();
});

Deno.test("runCcm() relists after 410 Expired on every re-watch and misses no deletion", async () => {
  await using w = await startChaosWorld({ nodes: 3, services: 2 });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  safety.baseline();
  const lists = () => w.kube.calls.count("LIST /api/v1/nodes") + w.kube.calls.count("GET /api/v1/nodes");
  const before = lists();
  const rounds = scaled(4, 20);
  for (let round = 0; round < rounds; round++) {
    w.kube.faults.dropWatches();
    change(w, safety, round);
    w.kube.faults.expireWatchHistory();
    await w.tick(3_000, 1_000);
  }
  // Deleted while no watch is open and the history is gone: only a relist can tell.
  const [web] = w.services();
  const webName = web?.metadata?.name ?? "";
  safety.release({ nodeBalancerId: w.nodeBalancerOf(web ?? {})?.id });
  w.kube.faults.dropWatches();
  w.kube.store.delete("services", webName, "default");
  w.kube.faults.expireWatchHistory();
  for (let i = 1; i <= 3; i++) setNodeReady(w.kube, `node-${i}`, true);
  await w.converge();
  await w.advanceUntil(() => w.kube.store.get("services", webName, "default") === undefined, {
    what: `${webName} cleaned up and gone`,
    stepMs: 5_000,
  });
  assert.ok(lists() >= before + rounds, `relisted after each 410 (${lists() - before} lists)`);
  report("410 on re-watch", { rounds, nodeLists: lists() - before });
  assert.ok(w.kube.calls.log.some((c) => c.key.startsWith("WATCH ") && c.status === 200));
  await assertInformersRecovered(w);
  safety.assertClean();
});

Deno.test("runCcm() through a minute of refused connections to the apiserver converges afterwards", async () => {
  await using w = await startChaosWorld({ nodes: 3 });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  safety.baseline();
  await w.kube.faults.refuseConnections(600_000);
  change(w, safety, 0);
  await w.tick(60_000, 5_000);
  const healthy = w.metrics.gauge("ccm_informer_healthy", "", ["resource"]);
  assert.equal(healthy.get({ resource: "nodes" }), 0, "the Node informer knows it is not watching");
  await w.kube.faults.acceptConnections();
  setNodeReady(w.kube, "node-1", true);
  await w.converge();
  await assertInformersRecovered(w);
  safety.assertClean();
});

Deno.test("runCcm() with a 409 on the first try of every write converges, each write retried", async () => {
  await using w = await startChaosWorld({ nodes: 3 });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  safety.baseline();
  const message = "Operation cannot be fulfilled: the object has been modified; please apply your changes " +
    "to the latest version and try again";
  for (const method of ["PATCH", "PUT", "POST", "DELETE"]) {
    w.kube.faults.add({ method, status: 409, alternate: true, message });
  }
  const from = w.kube.calls.log.length;
  for (let round = 0; round < scaled(3, 12); round++) {
    change(w, safety, round);
    await w.tick(10_000, 1_000);
  }
  for (let i = 1; i <= 3; i++) setNodeReady(w.kube, `node-${i}`, true);
  await w.converge();
  const writes = w.kube.calls.log.slice(from).filter((c) => !/^(GET|LIST|WATCH) /.test(c.key));
  const conflicted = new Set(writes.filter((c) => c.status === 409).map((c) => c.path));
  assert.ok(conflicted.size > 0, "writes met conflicts");
  // Events are best-effort, as with client-go's recorder, which drops an Event the server refuses.
  for (const path of [...conflicted].filter((p) => !p.includes("/events"))) {
    const last = writes.findLast((c) => c.path === path);
    assert.ok(last && last.status < 300, `the last write of ${path} succeeded (${last?.status})`);
  }
  const refused = writes.filter((c) => c.status === 409).length;
  report("409 first writes", { writes: writes.length, conflicts: refused, paths: conflicted.size });
  assert.ok(
    refused <= writes.length - refused + conflicted.size,
    `${refused} of ${writes.length}: a retry loop`,
  );
  safety.assertClean();
});
