import assert from "node:assert/strict";
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { AuditEntry } from "./audit.ts";
import { startKubeSim } from "./server.ts";
import { node, rejectsWith } from "./testdata/test_support.ts";

/** The RBAC attributes of requests, as compact strings. */
function attributes(entries: readonly AuditEntry[]): string[] {
  return entries.map((e) => {
    const resource = e.subresource ? `${e.resource}/${e.subresource}` : e.resource;
    const group = e.apiGroup === "" ? "core" : e.apiGroup;
    return e.resourceRequest
      ? `${e.verb} ${group} ${resource} ns=${e.namespace} name=${e.name}`
      : `${e.verb} ${e.path}`;
  });
}

Deno.test("KubeSim.audit records each request's RBAC verb, group, resource, subresource, namespace and name", async () => {
  await using kube = await startKubeSim();
  kube.store.create("nodes", node({ name: "n1" }));
  const kc = new KubeConfig();
  kc.loadFromString(kube.kubeconfig());
  const core = kc.makeApiClient(CoreV1Api);
  await core.listNode();
  await core.readNode({ name: "n1" });
  await core.listNode({ fieldSelector: "metadata.name=n1" });
  await core.patchNodeStatus(
    { name: "n1", body: { status: { addresses: [] } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
  await core.createNamespacedEvent({
    namespace: "default",
    body: { metadata: { name: "n1.1" }, involvedObject: { kind: "Node", name: "n1" }, reason: "Test" },
  });
  await rejectsWith(core.readNamespacedSecret({ namespace: "kube-system", name: "missing" }), 404);
  await core.deleteNode({ name: "n1" });
  const version = await fetch(`${kube.url}/version`, { headers: { authorization: `Bearer ${kube.token}` } });
  await version.body?.cancel();
  assert.deepEqual(attributes(kube.audit.entries), [
    "list core nodes ns= name=",
    "get core nodes ns= name=n1",
    "list core nodes ns= name=n1",
    "patch core nodes/status ns= name=n1",
    "create core events ns=default name=",
    "get core secrets ns=kube-system name=missing",
    "delete core nodes ns= name=n1",
    "get /version",
  ]);
  assert.deepEqual(kube.audit.entries.map((e) => e.status), [200, 200, 200, 200, 201, 404, 200, 200]);
  assert.equal(kube.audit.distinct().length, 8);
});

Deno.test("KubeSim.audit tells watches, deletecollection and the events.k8s.io group apart, and keeps distinct ones", async () => {
  await using kube = await startKubeSim();
  const headers = { authorization: `Bearer ${kube.token}` };
  const get = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${kube.url}${path}`, { ...init, headers });
    await res.body?.cancel();
    return res.status;
  };
  assert.equal(await get("/api/v1/nodes?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dn2"), 200);
  assert.equal(await get("/apis/events.k8s.io/v1/namespaces/default/events", { method: "DELETE" }), 200);
  assert.equal(await get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l1"), 404);
  assert.equal(await get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l1"), 404);
  assert.deepEqual(attributes(kube.audit.distinct()), [
    "watch core nodes ns= name=n2",
    "deletecollection events.k8s.io events ns=default name=",
    "get coordination.k8s.io leases ns=kube-system name=l1",
  ]);
  assert.equal(kube.audit.entries.length, 4);
  const admin = await (await fetch(`${kube.url}/__admin/audit`)).json();
  assert.equal(admin.distinct.length, 3);
  await (await fetch(`${kube.url}/__admin/audit/reset`, { method: "POST" })).body?.cancel();
  assert.equal(kube.audit.entries.length, 0);
});
