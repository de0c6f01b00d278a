import assert from "node:assert/strict";
import { ADD, DELETE, ERROR, makeInformer, UPDATE, type V1Node } from "@kubernetes/client-node";
import { FakeClock } from "../../common/clock.ts";
import { type KubeSim, startKubeSim } from "./server.ts";
import { clientsFor, node, rejectsWith, waitFor } from "./testdata/test_support.ts";

/** A started node informer that records callbacks by kind. */
async function nodeInformer(kube: KubeSim) {
  const { kc, core } = clientsFor(kube);
  const informer = makeInformer<V1Node>(kc, "/api/v1/nodes", () => core.listNode());
  const events: string[] = [];
  const errors: unknown[] = [];
  informer.on(ADD, (n) => events.push(`add ${n.metadata?.name}`));
  informer.on(UPDATE, (n) => events.push(`update ${n.metadata?.name}`));
  informer.on(DELETE, (n) => events.push(`delete ${n.metadata?.name}`));
  informer.on(ERROR, (e) => errors.push(e));
  await informer.start();
  return { informer, events, errors };
}

Deno.test("makeInformer() lists, watches, and resumes from its resourceVersion after dropped watches", async () => {
  await using kube = await startKubeSim();
  kube.store.create("nodes", node({ name: "a" }));
  const { informer, events, errors } = await nodeInformer(kube);
  await waitFor(() => kube.openWatches === 1);
  kube.store.patch("nodes", "a", { metadata: { labels: { x: "1" } } }, { type: "merge" });
  await waitFor(() => events.length === 2);
  assert.equal(kube.faults.dropWatches(), 1);
  kube.store.create("nodes", node({ name: "b" }));
  await waitFor(() => events.length === 3 && kube.openWatches === 1, { what: "reconnect" });
  kube.store.delete("nodes", "a");
  await waitFor(() => events.length === 4);
  assert.deepEqual(events, ["add a", "update a", "add b", "delete a"]);
  assert.deepEqual(informer.list().map((n) => n.metadata?.name), ["b"]);
  assert.equal(kube.calls.count("GET /api/v1/nodes"), 1, "resumed without relisting");
  assert.equal(kube.calls.count("WATCH /api/v1/nodes"), 2);
  assert.deepEqual(errors, []);
  await informer.stop();
});

Deno.test("makeInformer() relists after a 410 when its resourceVersion was compacted away", async () => {
  const clock = new FakeClock();
  await using kube = await startKubeSim({ clock, watchHistoryMs: 1000 });
  kube.store.create("nodes", node({ name: "a" }));
  const { informer, events } = await nodeInformer(kube);
  await waitFor(() => kube.openWatches === 1);
  // Only other resources change while time passes: the node watch's resourceVersion falls out of history.
  await clock.advance(2000);
  kube.store.create("secrets", { metadata: { name: "s", namespace: "default" } });
  kube.store.delete("nodes", "a");
  kube.store.create("nodes", node({ name: "b" }), {});
  await waitFor(() => events.length === 3);
  for (const name of ["s2", "s3"]) {
    await clock.advance(2000);
    kube.store.create("secrets", { metadata: { name, namespace: "default" } });
  }
  kube.faults.dropWatches();
  await waitFor(() => kube.calls.count("GET /api/v1/nodes") === 2 && kube.openWatches === 1, {
    what: "relist",
  });
  assert.deepEqual(informer.list().map((n) => n.metadata?.name), ["b"]);
  assert.ok(kube.calls.log.some((c) => c.key === "WATCH /api/v1/nodes" && c.status === 200));
  await informer.stop();
});

Deno.test("faults.refuseConnections() really refuses TCP connections on the same port, then recovers", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const { informer, errors } = await nodeInformer(kube);
  await waitFor(() => kube.openWatches === 1);
  const url = kube.url;
  // Long enough that a loaded machine cannot reopen it behind the assertions; acceptConnections ends it.
  await kube.faults.refuseConnections(600_000);
  const port = Number(new URL(url).port);
  await assertRefused(port);
  await assert.rejects(core.listNode());
  await waitFor(() => errors.length > 0, { what: "informer error after refusal" });
  await kube.faults.acceptConnections();
  await kube.faults.whenListening();
  assert.equal(kube.url, url);
  assert.equal((await core.listNode()).items.length, 0);
  await informer.stop();
});

Deno.test("faults.refuseConnections(ms) listens again on its own after ms", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await kube.faults.refuseConnections(50);
  await kube.faults.whenListening();
  assert.equal((await core.listNode()).items.length, 0);
});

/**
 * A connection to `port` is refused. One that reached the backlog while the socket was closing may be reset
 * instead: that is still the old socket going away, so it tries again.
 */
async function assertRefused(port: number): Promise<void> {
  for (let attempt = 0;; attempt++) {
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      assert.fail("the connection was accepted");
    } catch (e) {
      if (e instanceof Deno.errors.ConnectionRefused) return;
      if (!(e instanceof Deno.errors.ConnectionReset) || attempt >= 20) throw e;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

Deno.test("faults.add() injects 429 with Retry-After, 5xx and latency per method and route", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  kube.store.create("nodes", node({ name: "n1" }));
  kube.faults.add({ method: "GET", route: "/api/v1/nodes", status: 429, retryAfterSec: 3, times: 1 });
  const throttled = await rejectsWith(core.listNode(), 429);
  assert.equal(throttled.reason, "TooManyRequests");
  assert.deepEqual(throttled.details, { retryAfterSeconds: 3 });
  assert.equal((await core.listNode()).items.length, 1, "times: 1 expires the rule");
  kube.faults.add({ method: "GET", route: "/api/v1/nodes", status: 429, retryAfterSec: 7, times: 1 });
  const raw = await fetch(`${kube.url}/api/v1/nodes`, { headers: { authorization: `Bearer ${kube.token}` } });
  assert.equal(raw.headers.get("retry-after"), "7");
  await raw.body?.cancel();
  const remove = kube.faults.add({ method: "PATCH", route: "/api/v1/nodes/*/status", status: 503 });
  await rejectsWith(core.patchNodeStatus({ name: "n1", body: [] }), 503);
  await core.patchNode({ name: "n1", body: [] });
  remove();
  await core.patchNodeStatus({ name: "n1", body: [] });
  kube.faults.add({ route: "/api/v1/nodes/{name}", latencyMs: 60, times: 1 });
  const started = performance.now();
  await core.readNode({ name: "n1" });
  assert.ok(performance.now() - started >= 55);
  assert.equal(kube.calls.count("GET /api/v1/nodes"), 3);
  assert.equal(kube.calls.count("PATCH /api/v1/nodes/{name}/status"), 2);
  assert.ok(kube.calls.log.some((c) => c.key === "PATCH /api/v1/nodes/{name}/status" && c.status === 503));
});

Deno.test("faults.add() on WATCH fails an informer's watch with a 500", async () => {
  await using kube = await startKubeSim();
  kube.faults.add({ method: "WATCH", route: "/api/v1/nodes", status: 500, times: 1 });
  const { informer, errors } = await nodeInformer(kube);
  await waitFor(() => errors.length === 1, { what: "informer error" });
  assert.equal(kube.calls.count("WATCH /api/v1/nodes"), 1);
  await informer.stop();
});

Deno.test("/__admin/ exposes counters and faults without a token", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.listNode();
  const calls = await (await fetch(`${kube.url}/__admin/calls`)).json();
  assert.equal(calls.counts["GET /api/v1/nodes"], 1);
  const added = await fetch(`${kube.url}/__admin/faults`, {
    method: "POST",
    body: JSON.stringify({ method: "GET", route: "/api/v1/nodes", status: 500, times: 1 }),
  });
  assert.equal(added.status, 201);
  await added.body?.cancel();
  await rejectsWith(core.listNode(), 500);
  const reset = await fetch(`${kube.url}/__admin/calls/reset`, { method: "POST" });
  await reset.body?.cancel();
  assert.equal(kube.calls.total(), 0);
  const objects = await (await fetch(`${kube.url}/__admin/objects/namespaces`)).json();
  assert.equal(objects.items.length, 4);
});

Deno.test("faults.add() with alternate refuses the first write to each path, lets its retry through, and so on", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  for (const name of ["a", "b"]) kube.store.create("nodes", node({ name }));
  kube.faults.add({ method: "PATCH", status: 409, alternate: true });
  await rejectsWith(core.patchNode({ name: "a", body: [] }), 409);
  await rejectsWith(core.patchNode({ name: "b", body: [] }), 409);
  await core.patchNode({ name: "a", body: [] });
  await rejectsWith(core.patchNode({ name: "a", body: [] }), 409);
  await core.patchNode({ name: "b", body: [] });
  assert.deepEqual(kube.calls.log.map((c) => `${c.path} ${c.status}`), [
    "/api/v1/nodes/a 409",
    "/api/v1/nodes/b 409",
    "/api/v1/nodes/a 200",
    "/api/v1/nodes/a 409",
    "/api/v1/nodes/b 200",
  ]);
  assert.ok(kube.calls.log.every((c) => c.userAgent !== "" && c.answeredAt !== undefined));
});

Deno.test("faults.expireWatchHistory() makes a re-watch from an older resourceVersion a 410, so informers relist", async () => {
  await using kube = await startKubeSim();
  kube.store.create("nodes", node({ name: "a" }));
  const { informer, events } = await nodeInformer(kube);
  await waitFor(() => kube.openWatches === 1);
  kube.faults.dropWatches();
  kube.store.delete("nodes", "a");
  kube.faults.expireWatchHistory();
  await waitFor(() => kube.calls.count("GET /api/v1/nodes") === 2 && kube.openWatches === 1, {
    what: "relist",
  });
  assert.deepEqual(informer.list(), []);
  assert.deepEqual(events, ["add a", "delete a"]);
  await informer.stop();
});

Deno.test("faults.acceptConnections() ends a refusal early on the same port", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const port = Number(new URL(kube.url).port);
  await kube.faults.refuseConnections(600_000);
  await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port }), Deno.errors.ConnectionRefused);
  await kube.faults.acceptConnections();
  await kube.faults.whenListening();
  assert.equal((await core.listNode()).items.length, 0);
});
