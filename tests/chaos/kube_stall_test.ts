/**
 * A Kubernetes API whose list bodies stall after the headers (an overloaded apiserver or a proxy that stops
 * mid-response) while the informers must list again: the CCM destroys nothing, stops within a bounded time
 * on SIGTERM even with a list hanging, and converges once lists are served in full again.
 */
import assert from "node:assert/strict";
import { SafetyMonitor } from "./safety.ts";
import { startChaosWorld } from "./world.ts";

Deno.test("runCcm() with stalled list bodies destroys nothing, stops on SIGTERM, and converges afterwards", async () => {
  await using w = await startChaosWorld({ nodes: 3, services: 1 });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  safety.baseline();
  // Every list stalls. The watches drop, a Node joins and the history is compacted before they come back, so
  // every informer's re-watch gets 410 Expired and it must list again.
  const lists = w.kube.calls.count("GET /api/v1/nodes");
  const stall = w.kube.faults.add({ method: "GET", route: "/api/v1/*", stallBody: true });
  w.kube.faults.dropWatches();
  w.addNode("late-1");
  w.kube.faults.expireWatchHistory();
  await w.tick(60_000, 5_000);
  assert.ok(w.kube.calls.count("GET /api/v1/nodes") > lists, "the Node informer listed again");

  // A stop with lists hanging ends on the stop signal (runToEnd allows 10 min of fake time, not real ones).
  assert.equal(await w.stop(), "stopped");
  safety.assertClean();
  stall();
  await w.start();
  await w.converge();
  safety.assertClean();
});
