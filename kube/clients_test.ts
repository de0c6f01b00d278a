import assert from "node:assert/strict";
import { join } from "node:path";
import { LeaseLostError, SwitchFence } from "../common/write_guard.ts";
import { Registry } from "../common/metrics.ts";
import { makeKubeClients } from "./clients.ts";
import { loadKubeConfig } from "./config.ts";
import { callsStartingWith, node, startFixture } from "./testdata/fixtures.ts";
import { KubeApiError } from "./requests.ts";

Deno.test("makeKubeClients() lists through a loaded kubeconfig and counts requests", async () => {
  await using f = await startFixture();
  f.kube.store.create("nodes", node("n1"));
  const list = await f.clients.core.listNode();
  assert.deepEqual(list.items.map((n) => n.metadata?.name), ["n1"]);
  const counter = f.metrics.counter("ccm_kube_requests_total", "");
  assert.equal(counter.get({ verb: "list", resource: "nodes", code: "200" }), 1);
});

Deno.test("makeKubeClients() fences core writes but not reads or Lease writes", async () => {
  const fence = new SwitchFence(false);
  await using f = await startFixture({ fence });
  f.kube.store.create("nodes", node("n1"));
  f.kube.calls.reset();
  await assert.rejects(f.clients.core.deleteNode({ name: "n1" }), LeaseLostError);
  await assert.rejects(
    f.clients.core.createNamespacedEvent({
      namespace: "default",
      body: { metadata: { name: "e1" }, involvedObject: { kind: "Node", name: "n1" } },
    }),
    LeaseLostError,
  );
  assert.equal(f.kube.calls.total(), 0, "fenced writes must not be sent");
  assert.equal((await f.clients.core.readNode({ name: "n1" })).metadata?.name, "n1");
  await f.clients.coordination.createNamespacedLease({
    namespace: "kube-system",
    body: { metadata: { name: "ccm" }, spec: { holderIdentity: "me" } },
  });
  assert.equal(callsStartingWith(f.kube, "DELETE"), 0);
  assert.ok(f.kube.store.get("leases", "ccm", "kube-system"));
  fence.set(true);
  await f.clients.core.deleteNode({ name: "n1" });
  assert.equal(f.kube.store.get("nodes", "n1"), undefined);
});

Deno.test("makeKubeClients() turns a 401 into a KubeApiError without the token", async () => {
  await using f = await startFixture();
  const bad = join(await Deno.makeTempDir(), "kubeconfig");
  try {
    const wrongToken = "wrong-token-0123456789";
    await Deno.writeTextFile(
      bad,
      (await Deno.readTextFile(f.kubeconfigPath)).replaceAll(f.kube.token, wrongToken),
    );
    const clients = makeKubeClients(loadKubeConfig({ kubeconfig: bad }), { metrics: new Registry() });
    const e = await clients.core.listNode().catch((e) => e);
    assert.ok(e instanceof KubeApiError, String(e));
    assert.equal(e.status, 401);
    for (const text of [e.message, String(e.stack), JSON.stringify(e)]) {
      assert.ok(!text.includes(wrongToken) && !text.includes(f.kube.token), "token leaked");
    }
  } finally {
    await Deno.remove(join(bad, ".."), { recursive: true });
  }
});

Deno.test("makeKubeClients() reports an unreachable apiserver as status 0", async () => {
  await using f = await startFixture();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const clients = f.clientsVia(`http://127.0.0.1:${port}`);
  const e = await clients.core.listNode().catch((e) => e);
  assert.ok(e instanceof KubeApiError, String(e));
  assert.equal(e.status, 0);
  assert.equal(e.reason, "Unreachable");
  assert.equal(
    f.metrics.counter("ccm_kube_requests_total", "").get({ verb: "list", resource: "nodes", code: "error" }),
    1,
  );
});

Deno.test("makeKubeClients() works in-cluster over TLS with the service-account token and CA", async () => {
  await using f = await startFixture({ sim: { tls: true } });
  f.kube.store.create("nodes", node("n1"));
  const dir = await Deno.makeTempDir({ prefix: "serviceaccount_" });
  try {
    const caData = /certificate-authority-data: *"?([A-Za-z0-9+/=]+)/.exec(f.kube.kubeconfig())?.[1] ?? "";
    await Deno.writeTextFile(join(dir, "ca.crt"), atob(caData));
    await Deno.writeTextFile(join(dir, "token"), f.kube.token);
    const url = new URL(f.kube.url);
    const kc = loadKubeConfig({ serviceHost: url.hostname, servicePort: url.port, serviceAccountDir: dir });
    const clients = makeKubeClients(kc, { metrics: new Registry() });
    const list = await clients.core.listNode();
    assert.deepEqual(list.items.map((n) => n.metadata?.name), ["n1"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
