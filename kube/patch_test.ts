import assert from "node:assert/strict";
import { LeaseLostError, SwitchFence } from "../common/write_guard.ts";
import { callsStartingWith, node, startFixture } from "./testdata/fixtures.ts";
import {
  deleteNode,
  mergePatchNode,
  mergePatchNodeStatus,
  mergePatchService,
  mergePatchServiceStatus,
  patchServiceFinalizers,
  strategicPatchNode,
} from "./patch.ts";
import { isConflict, isNotFound, KubeApiError } from "./requests.ts";

Deno.test("mergePatchNode() changes only the patched labels", async () => {
  await using f = await startFixture();
  f.kube.store.create(
    "nodes",
    node("n1", { labels: { a: "1" }, taints: [{ key: "t", effect: "NoSchedule" }] }),
  );
  const out = await mergePatchNode(f.clients.core, "n1", { metadata: { labels: { b: "2" } } });
  assert.deepEqual(out.metadata?.labels, { a: "1", b: "2" });
  const stored = f.kube.store.get("nodes", "n1");
  assert.deepEqual(stored?.metadata.labels, { a: "1", b: "2" });
  assert.deepEqual(stored?.spec, { taints: [{ key: "t", effect: "NoSchedule" }] });
  assert.equal(
    f.metrics.counter("ccm_kube_requests_total", "").get({ verb: "patch", resource: "nodes", code: "200" }),
    1,
  );
});

Deno.test("mergePatchNodeStatus() sets addresses and leaves the spec alone", async () => {
  await using f = await startFixture();
  f.kube.store.create("nodes", node("n1", { labels: { a: "1" } }));
  const addresses = [{ type: "InternalIP", address: "10.0.0.5" }];
  await mergePatchNodeStatus(f.clients.core, "n1", { status: { addresses } });
  const stored = f.kube.store.get("nodes", "n1");
  assert.deepEqual((stored?.status as { addresses?: unknown }).addresses, addresses);
  assert.deepEqual(stored?.metadata.labels, { a: "1" });
});

Deno.test("strategicPatchNode() merges taints by key instead of replacing the list", async () => {
  await using f = await startFixture();
  f.kube.store.create("nodes", node("n1", { taints: [{ key: "keep", effect: "NoSchedule" }] }));
  await strategicPatchNode(f.clients.core, "n1", { spec: { taints: [{ key: "new", effect: "NoExecute" }] } });
  const taints = (f.kube.store.get("nodes", "n1")?.spec as { taints: { key: string }[] }).taints;
  assert.deepEqual(taints.map((t) => t.key).sort(), ["keep", "new"]);
});

Deno.test("mergePatchService() and mergePatchServiceStatus() patch annotations and ingress only", async () => {
  await using f = await startFixture();
  f.kube.store.create("services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default", annotations: { keep: "yes" } },
    spec: { type: "LoadBalancer", ports: [{ port: 80, protocol: "TCP" }] },
  });
  const svc = { namespace: "default", name: "web" };
  await mergePatchService(f.clients.core, svc, { metadata: { annotations: { added: "1" } } });
  await mergePatchServiceStatus(f.clients.core, svc, {
    status: { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } },
  });
  const stored = f.kube.store.get("services", "web", "default");
  assert.deepEqual(stored?.metadata.annotations, { keep: "yes", added: "1" });
  assert.deepEqual((stored?.status as { loadBalancer: unknown }).loadBalancer, {
    ingress: [{ ip: "1.2.3.4" }],
  });
  assert.equal((stored?.spec as { type: string }).type, "LoadBalancer");
});

Deno.test("mergePatchNode() of a missing Node fails with a NotFound KubeApiError", async () => {
  await using f = await startFixture();
  const e = await mergePatchNode(f.clients.core, "ghost", { metadata: { labels: { a: "1" } } }).catch((e) =>
    e
  );
  assert.ok(e instanceof KubeApiError && isNotFound(e), String(e));
  assert.equal(e.reason, "NotFound");
});

Deno.test("deleteNode() refuses stale preconditions and deletes with current ones", async () => {
  await using f = await startFixture();
  const created = f.kube.store.create("nodes", node("n1"));
  const uid = created.metadata.uid ?? "";
  const staleUid = await deleteNode(f.clients.core, "n1", { preconditions: { uid: "not-the-uid" } }).catch((
    e,
  ) => e);
  assert.ok(isConflict(staleUid), String(staleUid));
  f.kube.store.update("nodes", { ...created, metadata: { ...created.metadata, labels: { changed: "yes" } } });
  const staleRv = await deleteNode(f.clients.core, "n1", {
    preconditions: { uid, resourceVersion: created.metadata.resourceVersion },
  }).catch((e) => e);
  assert.ok(isConflict(staleRv), String(staleRv));
  assert.ok(f.kube.store.get("nodes", "n1"), "the node must survive stale deletes");
  const current = f.kube.store.get("nodes", "n1");
  await deleteNode(f.clients.core, "n1", {
    preconditions: { uid, resourceVersion: current?.metadata.resourceVersion },
  });
  assert.equal(f.kube.store.get("nodes", "n1"), undefined);
});

Deno.test("mergePatchNode() and deleteNode() over fenced clients never reach the apiserver without leadership", async () => {
  await using f = await startFixture({ fence: new SwitchFence(false) });
  const created = f.kube.store.create("nodes", node("n1"));
  f.kube.calls.reset();
  await assert.rejects(
    mergePatchNode(f.clients.core, "n1", { metadata: { labels: { a: "1" } } }),
    LeaseLostError,
  );
  await assert.rejects(
    deleteNode(f.clients.core, "n1", { preconditions: { uid: created.metadata.uid ?? "" } }),
    LeaseLostError,
  );
  assert.equal(f.kube.calls.total(), 0);
  assert.equal(callsStartingWith(f.kube, "PATCH"), 0);
  assert.ok(f.kube.store.get("nodes", "n1"));
});

Deno.test("patchServiceFinalizers() sets and clears finalizers through the status subresource, guarded by resourceVersion", async () => {
  await using f = await startFixture();
  f.kube.store.create("services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default" },
    spec: { type: "LoadBalancer", ports: [{ port: 80, protocol: "TCP" }] },
  });
  const svc = { namespace: "default", name: "web" };
  const rv = f.kube.store.get("services", "web", "default")?.metadata.resourceVersion;
  const out = await patchServiceFinalizers(f.clients.core, svc, [
    "service.kubernetes.io/load-balancer-cleanup",
  ], rv);
  assert.deepEqual(out.metadata?.finalizers, ["service.kubernetes.io/load-balancer-cleanup"]);
  assert.equal(
    f.metrics.counter("ccm_kube_requests_total", "").get({
      verb: "patch",
      resource: "services/status",
      code: "200",
    }),
    1,
    "sent to services/status",
  );
  await assert.rejects(patchServiceFinalizers(f.clients.core, svc, [], rv), (e: unknown) => isConflict(e));
  await patchServiceFinalizers(f.clients.core, svc, []);
  assert.equal(f.kube.store.get("services", "web", "default")?.metadata.finalizers, undefined);
});
