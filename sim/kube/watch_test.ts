import assert from "node:assert/strict";
import { type KubernetesObject, Watch } from "@kubernetes/client-node";
import { FakeClock } from "../../common/clock.ts";
import { type KubeSim, startKubeSim } from "./server.ts";
import { clientsFor, node, waitFor } from "./testdata/test_support.ts";

interface Seen {
  type: string;
  name: string | undefined;
  rv: string | undefined;
  annotations?: Record<string, string>;
  code?: number;
}

/** Opens a client-node watch and records what arrives; `ended` is set when the stream ends. */
async function watchNodes(kube: KubeSim, query: Record<string, string | boolean>) {
  const seen: Seen[] = [];
  const state: { ended: boolean; error: unknown } = { ended: false, error: undefined };
  const watch = new Watch(clientsFor(kube).kc);
  const controller = await watch.watch(
    "/api/v1/nodes",
    query,
    (type, obj: KubernetesObject & { code?: number }) => {
      seen.push({
        type,
        name: obj.metadata?.name,
        rv: obj.metadata?.resourceVersion,
        annotations: obj.metadata?.annotations,
        code: obj.code,
      });
    },
    (err) => {
      state.ended = true;
      state.error = err;
    },
  );
  return { seen, state, stop: () => controller.abort() };
}

Deno.test("Watch.watch() replays changes after a resourceVersion, then follows live ones", async () => {
  await using kube = await startKubeSim();
  const from = kube.store.resourceVersion;
  kube.store.create("nodes", node({ name: "a" }));
  kube.store.patch("nodes", "a", { metadata: { labels: { x: "1" } } }, { type: "merge" });
  const w = await watchNodes(kube, { resourceVersion: from });
  await waitFor(() => w.seen.length === 2, { what: "replayed events" });
  kube.store.delete("nodes", "a");
  kube.store.create("secrets", { metadata: { name: "other", namespace: "default" } });
  kube.store.create("nodes", node({ name: "b" }));
  await waitFor(() => w.seen.length === 4, { what: "live events" });
  assert.deepEqual(w.seen.map((e) => `${e.type} ${e.name}`), [
    "ADDED a",
    "MODIFIED a",
    "DELETED a",
    "ADDED b",
  ]);
  const rvs = w.seen.map((e) => Number(e.rv));
  assert.deepEqual([...rvs].sort((x, y) => x - y), rvs);
  assert.equal(kube.calls.count("WATCH /api/v1/nodes"), 1);
  w.stop();
  await waitFor(() => kube.openWatches === 0, { what: "server to notice the client left" });
});

Deno.test("Watch.watch() with a label selector sees objects enter and leave it as ADDED and DELETED", async () => {
  await using kube = await startKubeSim();
  kube.store.create("nodes", node({ name: "a" }));
  const w = await watchNodes(kube, { resourceVersion: kube.store.resourceVersion, labelSelector: "pool=x" });
  kube.store.patch("nodes", "a", { metadata: { labels: { pool: "x" } } }, { type: "merge" });
  kube.store.patch("nodes", "a", { metadata: { labels: { other: "1" } } }, { type: "merge" });
  kube.store.patch("nodes", "a", { metadata: { labels: { pool: "y" } } }, { type: "merge" });
  kube.store.create("nodes", node({ name: "b", labels: { pool: "y" } }));
  kube.store.delete("nodes", "a");
  await waitFor(() => w.seen.length === 3, { what: "selector transitions" });
  assert.deepEqual(w.seen.map((e) => `${e.type} ${e.name}`), ["ADDED a", "MODIFIED a", "DELETED a"]);
  w.stop();
});

Deno.test("Watch.watch() without a resourceVersion starts with synthetic ADDED events", async () => {
  await using kube = await startKubeSim();
  kube.store.create("nodes", node({ name: "a" }));
  kube.store.create("nodes", node({ name: "b" }));
  const w = await watchNodes(kube, {});
  await waitFor(() => w.seen.length === 2);
  assert.deepEqual(w.seen.map((e) => `${e.type} ${e.name}`), ["ADDED a", "ADDED b"]);
  w.stop();
});

Deno.test("Watch.watch() from a compacted resourceVersion gets a 410 Expired ERROR and the stream ends", async () => {
  const clock = new FakeClock();
  await using kube = await startKubeSim({ clock, watchHistoryMs: 1000 });
  const old = kube.store.resourceVersion;
  kube.store.create("nodes", node({ name: "a" }));
  await clock.advance(2000);
  kube.store.create("nodes", node({ name: "b" }));
  const w = await watchNodes(kube, { resourceVersion: old });
  await waitFor(() => w.state.ended, { what: "stream end" });
  assert.deepEqual(w.seen.map((e) => [e.type, e.code]), [["ERROR", 410]]);
  assert.equal(w.state.error, null);
});

Deno.test("Watch.watch() with allowWatchBookmarks gets periodic BOOKMARKs at the current resourceVersion", async () => {
  await using kube = await startKubeSim({ bookmarkIntervalMs: 20 });
  const w = await watchNodes(kube, {
    resourceVersion: kube.store.resourceVersion,
    allowWatchBookmarks: true,
  });
  kube.store.create("secrets", { metadata: { name: "s", namespace: "default" } });
  await waitFor(() => w.seen.some((e) => e.type === "BOOKMARK" && e.rv === kube.store.resourceVersion));
  const plain = await watchNodes(kube, { resourceVersion: kube.store.resourceVersion });
  await waitFor(() => w.seen.filter((e) => e.type === "BOOKMARK").length >= 3);
  assert.equal(plain.seen.length, 0);
  w.stop();
  plain.stop();
});

Deno.test("Watch.watch() with sendInitialEvents ends the initial ADDED events with an annotated BOOKMARK", async () => {
  await using kube = await startKubeSim();
  kube.store.create("nodes", node({ name: "a" }));
  const w = await watchNodes(kube, {
    sendInitialEvents: true,
    allowWatchBookmarks: true,
    resourceVersionMatch: "NotOlderThan",
  });
  await waitFor(() => w.seen.length === 2);
  assert.equal(w.seen[1]?.type, "BOOKMARK");
  assert.deepEqual(w.seen[1]?.annotations, { "k8s.io/initial-events-end": "true" });
  w.stop();
});

Deno.test("startKubeSim({ watchMaxMs }) closes watches server-side after a randomised while", async () => {
  await using kube = await startKubeSim({ watchMaxMs: 60 });
  const started = Date.now();
  const w = await watchNodes(kube, { resourceVersion: kube.store.resourceVersion });
  await waitFor(() => w.state.ended, { what: "server-side close" });
  assert.ok(Date.now() - started >= 25);
  assert.equal(w.state.error, null);
  assert.equal(kube.openWatches, 0);
});

Deno.test("faults.dropWatches() ends every open watch and reports how many", async () => {
  await using kube = await startKubeSim();
  const a = await watchNodes(kube, { resourceVersion: kube.store.resourceVersion });
  const b = await watchNodes(kube, {});
  await waitFor(() => kube.openWatches === 2);
  assert.equal(kube.faults.dropWatches(), 2);
  await waitFor(() => a.state.ended && b.state.ended);
  assert.equal(kube.openWatches, 0);
});

Deno.test("startKubeSim() serves legacy /watch/ paths as WATCH on the namespaced collection", async () => {
  await using kube = await startKubeSim();
  kube.store.create("services", {
    metadata: { name: "web", namespace: "default" },
    spec: { ports: [{ port: 80 }] },
  });
  const res = await fetch(`${kube.url}/api/v1/watch/namespaces/default/services`, {
    headers: { authorization: `Bearer ${kube.token}` },
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const first = await reader.read();
  assert.deepEqual(JSON.parse(String(first.value).trim()).type, "ADDED");
  await reader.cancel();
  assert.equal(kube.calls.count("WATCH /api/v1/namespaces/{namespace}/services"), 1);
});

Deno.test("faults.lagWatchEvents() holds back events from the first matching one on, in order, but not writes", async () => {
  await using kube = await startKubeSim();
  const w = await watchNodes(kube, { resourceVersion: kube.store.resourceVersion });
  const { core } = clientsFor(kube);
  const endLag = kube.faults.lagWatchEvents(2_000, (obj) => obj.metadata.name === "b");
  await core.createNode({ body: node({ name: "a" }) });
  await waitFor(() => w.seen.length === 1, { what: "a, not lagged" });
  await core.createNode({ body: node({ name: "b" }) });
  endLag();
  // Created after the lag ended, yet queued behind b: a watch never reorders.
  await core.createNode({ body: node({ name: "c" }) });
  // Both writes were answered; the watch has shown neither (each is due 2 s after b).
  await core.readNode({ name: "c" });
  assert.deepEqual(w.seen.map((e) => e.name), ["a"]);
  await waitFor(() => w.seen.length === 3, { what: "b and c after the lag", timeoutMs: 10_000 });
  assert.deepEqual(w.seen.map((e) => `${e.type} ${e.name}`), ["ADDED a", "ADDED b", "ADDED c"]);
  w.stop();
});
