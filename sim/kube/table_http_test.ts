import assert from "node:assert/strict";
import { FakeClock } from "../../common/clock.ts";
import { kubeletNode, registerNode } from "../kubelet.ts";
import { type KubeSim, startKubeSim } from "./server.ts";
import { clientsFor } from "./testdata/test_support.ts";

/** What kubectl get sends. */
const TABLE =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io," +
  "application/json";

type Json = Record<string, unknown>;

async function get(kube: KubeSim, path: string, accept = TABLE): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${kube.url}${path}`, {
    headers: { authorization: `Bearer ${kube.token}`, accept },
  });
  return { status: res.status, body: await res.json() };
}

function names(table: Json): string[] {
  return (table.rows as { cells: unknown[] }[]).map((r) => String(r.cells[0]));
}

/** The cells kubectl shows without `-o wide` (priority 0 columns). */
function narrowCells(table: Json): unknown[][] {
  const keep = (table.columnDefinitions as Json[]).map((c) => c.priority === 0);
  return (table.rows as { cells: unknown[] }[]).map((r) => r.cells.filter((_, i) => keep[i]));
}

async function seeded(count: number, clock = new FakeClock()): Promise<KubeSim> {
  const kube = await startKubeSim({ clock });
  for (let i = 1; i <= count; i++) {
    const labels: Record<string, string> = i % 2 === 0 ? { "node-role.kubernetes.io/worker": "" } : {};
    registerNode(kube, kubeletNode(`n${i}`, { labels, nowMs: clock.now() }));
  }
  return kube;
}

Deno.test("GET /api/v1/nodes with kubectl's Accept pages a Table through limit and continue", async () => {
  await using kube = await seeded(5);
  const first = await get(kube, "/api/v1/nodes?limit=2");
  assert.equal(first.status, 200);
  assert.equal(first.body.kind, "Table");
  assert.equal(first.body.apiVersion, "meta.k8s.io/v1");
  const meta = first.body.metadata as Json;
  assert.equal(meta.resourceVersion, kube.store.resourceVersion);
  assert.equal(meta.remainingItemCount, 3);
  assert.deepEqual(names(first.body), ["n1", "n2"]);
  const seen = [...names(first.body)];
  let token = meta.continue;
  while (typeof token === "string") {
    const page = await get(kube, `/api/v1/nodes?limit=2&continue=${encodeURIComponent(token)}`);
    assert.equal((page.body.metadata as Json).resourceVersion, meta.resourceVersion);
    seen.push(...names(page.body));
    token = (page.body.metadata as Json).continue;
  }
  assert.deepEqual(seen, ["n1", "n2", "n3", "n4", "n5"]);
});

Deno.test("GET with labelSelector and fieldSelector filters the Table's rows", async () => {
  await using kube = await seeded(4);
  const workers = await get(kube, "/api/v1/nodes?labelSelector=node-role.kubernetes.io%2Fworker");
  assert.deepEqual(names(workers.body), ["n2", "n4"]);
  const roles = (workers.body.rows as { cells: unknown[] }[]).map((r) => r.cells[2]);
  assert.deepEqual(roles, ["worker", "worker"]);
  const one = await get(kube, "/api/v1/nodes?fieldSelector=metadata.name%3Dn3");
  assert.deepEqual(names(one.body), ["n3"]);
});

Deno.test("GET of one Node as a Table carries its resourceVersion; a missing one is still a 404 Status", async () => {
  const clock = new FakeClock();
  await using kube = await seeded(1, clock);
  await clock.advance(190_000);
  const { body } = await get(kube, "/api/v1/nodes/n1");
  assert.equal(
    (body.metadata as Json).resourceVersion,
    kube.store.get("nodes", "n1")?.metadata.resourceVersion,
  );
  const [row] = body.rows as { cells: unknown[]; object: Json }[];
  assert.deepEqual(row?.cells, [
    "n1",
    "Ready",
    "<none>",
    "3m10s",
    "v1.32.0",
    "<none>",
    "<none>",
    "Debian GNU/Linux 12 (bookworm)",
    "6.1.0-28-cloud-amd64",
    "containerd://1.7.24",
  ]);
  assert.equal(row?.object.kind, "PartialObjectMetadata");
  const missing = await get(kube, "/api/v1/nodes/ghost");
  assert.equal(missing.status, 404);
  assert.equal(missing.body.kind, "Status");
});

Deno.test("GET ?includeObject=Object and None shape each row's object; an unknown value is a 400", async () => {
  await using kube = await seeded(1);
  const full = await get(kube, "/api/v1/nodes?includeObject=Object");
  const object = (full.body.rows as { object: Json }[])[0]?.object;
  assert.equal(object?.kind, "Node");
  assert.equal(object?.apiVersion, "v1");
  assert.ok(object?.status);
  const none = await get(kube, "/api/v1/nodes?includeObject=None");
  assert.equal((none.body.rows as { object: unknown }[])[0]?.object, null);
  const bad = await get(kube, "/api/v1/nodes?includeObject=Everything");
  assert.equal(bad.status, 400);
  assert.match(String(bad.body.message), /^Unable to convert to Table as requested: includeObject/);
});

Deno.test("an Accept the server cannot serve is a 406, unless plain JSON is listed as a fallback", async () => {
  await using kube = await seeded(1);
  const only = await get(kube, "/api/v1/nodes", "application/json;as=Table;v=v2;g=meta.k8s.io");
  assert.equal(only.status, 406);
  assert.equal(only.body.reason, "NotAcceptable");
  const fallback = await get(
    kube,
    "/api/v1/nodes",
    "application/json;as=Table;v=v2;g=meta.k8s.io, application/json",
  );
  assert.equal(fallback.status, 200);
  assert.equal(fallback.body.kind, "NodeList");
});

Deno.test("events of both APIs print as LAST SEEN, TYPE, REASON, OBJECT, MESSAGE", async () => {
  await using kube = await startKubeSim({ clock: new FakeClock() });
  const at = new Date(kube.store.now()).toISOString();
  kube.store.create("events", {
    metadata: { name: "n5.1", namespace: "default" },
    involvedObject: { kind: "Node", name: "demo-node-5" },
    type: "Normal",
    reason: "Synced",
    message: "Node synced successfully",
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  });
  const core = await get(kube, "/api/v1/namespaces/default/events");
  assert.deepEqual(narrowCells(core.body)[0], [
    "0s",
    "Normal",
    "Synced",
    "node/demo-node-5",
    "Node synced successfully",
  ]);
  const v1 = await get(kube, "/apis/events.k8s.io/v1/namespaces/default/events");
  assert.equal(v1.body.kind, "Table");
  assert.deepEqual((v1.body.columnDefinitions as Json[]).map((c) => c.name).slice(0, 4), [
    "Last Seen",
    "Type",
    "Reason",
    "Object",
  ]);
});

Deno.test("a watch asking for Tables gets one-row Tables, column definitions on the first event only", async () => {
  await using kube = await seeded(1);
  const abort = new AbortController();
  const res = await fetch(`${kube.url}/api/v1/nodes?watch=true&timeoutSeconds=5`, {
    headers: { authorization: `Bearer ${kube.token}`, accept: TABLE },
    signal: abort.signal,
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const nextEvent = async (): Promise<Json> => {
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("watch ended");
      text += value;
    }
    const line = text.slice(0, text.indexOf("\n"));
    text = text.slice(line.length + 1);
    return JSON.parse(line);
  };
  try {
    const added = await nextEvent();
    assert.equal(added.type, "ADDED");
    assert.equal((added.object as Json).kind, "Table");
    assert.ok(Array.isArray((added.object as Json).columnDefinitions));
    registerNode(kube, kubeletNode("n2"));
    const next = await nextEvent();
    assert.equal((next.object as Json).columnDefinitions, null);
    assert.deepEqual(names(next.object as Json), ["n2"]);
  } finally {
    abort.abort();
    await reader.cancel().catch(() => {});
  }
});

Deno.test("client-node's JSON calls are unaffected by server-side printing", async () => {
  await using kube = await seeded(3);
  const { core } = clientsFor(kube);
  const list = await core.listNode({ labelSelector: "node-role.kubernetes.io/worker" });
  assert.deepEqual(list.items.map((n) => n.metadata?.name), ["n2"]);
  assert.equal(list.items[0]?.status?.nodeInfo?.kubeletVersion, "v1.32.0");
  const page = await core.listNode({ limit: 2 });
  assert.equal(page.items.length, 2);
  assert.ok(page.metadata?._continue);
  const one = await core.readNode({ name: "n1" });
  assert.equal(one.kind, "Node");
  assert.equal(one.status?.conditions?.[0]?.type, "Ready");
  const namespaces = await core.listNamespace();
  assert.equal(namespaces.kind, "NamespaceList");
});
