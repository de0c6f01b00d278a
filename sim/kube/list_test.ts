import assert from "node:assert/strict";
import { FakeClock } from "../../common/clock.ts";
import { listResponse } from "./list.ts";
import { parseRoute, type ResourceRoute } from "./routing.ts";
import { startKubeSim } from "./server.ts";
import { StatusError } from "./status.ts";
import { KubeStore } from "./store.ts";
import { clientsFor, node } from "./testdata/test_support.ts";

Deno.test("listNode() pages with limit/continue over a consistent snapshot", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  for (let i = 0; i < 5; i++) kube.store.create("nodes", node({ name: `n${i}` }));
  const first = await core.listNode({ limit: 2 });
  assert.deepEqual(first.items.map((n) => n.metadata?.name), ["n0", "n1"]);
  assert.equal(first.metadata?.remainingItemCount, 3);
  assert.ok(first.metadata?._continue);
  // Changes after the first page must not show up in the rest of this list.
  kube.store.delete("nodes", "n3");
  kube.store.create("nodes", node({ name: "n2a" }));
  const second = await core.listNode({ limit: 2, _continue: first.metadata?._continue });
  assert.deepEqual(second.items.map((n) => n.metadata?.name), ["n2", "n3"]);
  const third = await core.listNode({ limit: 2, _continue: second.metadata?._continue });
  assert.deepEqual(third.items.map((n) => n.metadata?.name), ["n4"]);
  assert.equal(third.metadata?._continue, undefined);
  assert.equal(third.metadata?.resourceVersion, first.metadata?.resourceVersion);
  const fresh = await core.listNode();
  assert.deepEqual(fresh.items.map((n) => n.metadata?.name), ["n0", "n1", "n2", "n2a", "n4"]);
});

Deno.test("listNode() filters by label and field selectors", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  kube.store.create("nodes", node({ name: "a", labels: { pool: "x" } }));
  kube.store.create("nodes", node({ name: "b", labels: { pool: "y" } }));
  kube.store.create("nodes", node({ name: "c" }));
  const names = async (opts: { labelSelector?: string; fieldSelector?: string }) =>
    (await core.listNode(opts)).items.map((n) => n.metadata?.name);
  assert.deepEqual(await names({ labelSelector: "pool=x" }), ["a"]);
  assert.deepEqual(await names({ labelSelector: "pool" }), ["a", "b"]);
  assert.deepEqual(await names({ labelSelector: "!pool" }), ["c"]);
  assert.deepEqual(await names({ labelSelector: "pool notin (x)" }), ["b", "c"]);
  assert.deepEqual(await names({ fieldSelector: "metadata.name=b" }), ["b"]);
  assert.deepEqual(await names({ labelSelector: "pool in (x,y)", fieldSelector: "metadata.name!=a" }), ["b"]);
});

function nodesRoute(): ResourceRoute {
  const route = parseRoute("/api/v1/nodes");
  assert.equal(route.kind, "resource");
  return route as ResourceRoute;
}

Deno.test("listResponse() answers a continue token older than the history window with 410 Expired", async () => {
  const clock = new FakeClock();
  const store = new KubeStore({ historyMs: 1000, clock });
  for (let i = 0; i < 3; i++) store.create("nodes", { metadata: { name: `n${i}` } });
  const first = listResponse(store, nodesRoute(), new URLSearchParams({ limit: "1" }));
  const token = String((first.metadata as Record<string, unknown>).continue);
  await clock.advance(500);
  store.create("nodes", { metadata: { name: "later" } });
  const ok = listResponse(store, nodesRoute(), new URLSearchParams({ limit: "1", continue: token }));
  assert.equal((ok.items as unknown[]).length, 1);
  await clock.advance(1100);
  store.create("nodes", { metadata: { name: "much-later" } });
  assert.throws(
    () => listResponse(store, nodesRoute(), new URLSearchParams({ limit: "1", continue: token })),
    (e) => e instanceof StatusError && e.code === 410 && e.reason === "Expired",
  );
  assert.throws(
    () => listResponse(store, nodesRoute(), new URLSearchParams({ continue: "not-a-token" })),
    (e) => e instanceof StatusError && e.code === 400,
  );
});

Deno.test("listResponse() serves resourceVersionMatch=Exact from history", () => {
  const store = new KubeStore({ historyMs: 60_000, clock: new FakeClock() });
  store.create("nodes", { metadata: { name: "a" } });
  const rv = store.resourceVersion;
  store.create("nodes", { metadata: { name: "b" } });
  store.delete("nodes", "a");
  const exact = listResponse(
    store,
    nodesRoute(),
    new URLSearchParams({ resourceVersion: rv, resourceVersionMatch: "Exact" }),
  );
  assert.deepEqual((exact.items as { metadata: { name: string } }[]).map((n) => n.metadata.name), ["a"]);
  assert.equal((exact.metadata as Record<string, unknown>).resourceVersion, rv);
  const future = String(Number(store.resourceVersion) + 10);
  assert.throws(
    () =>
      listResponse(
        store,
        nodesRoute(),
        new URLSearchParams({ resourceVersion: future, resourceVersionMatch: "Exact" }),
      ),
    (e) => e instanceof StatusError && e.code === 504,
  );
});

Deno.test("listNode() returns 5,000 nodes in one response", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  for (let i = 0; i < 5000; i++) {
    kube.store.create(
      "nodes",
      node({ name: `node-${String(i).padStart(4, "0")}`, providerID: `linode://${i}` }),
    );
  }
  const list = await core.listNode();
  assert.equal(list.items.length, 5000);
  assert.equal(list.items[4999]?.spec?.providerID, "linode://4999");
});
