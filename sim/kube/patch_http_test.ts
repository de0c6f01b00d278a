import assert from "node:assert/strict";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { startKubeSim } from "./server.ts";
import { clientsFor, node, plain, rejectsWith } from "./testdata/test_support.ts";

const MERGE = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
const STRATEGIC = setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch);
const APPLY = setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply);

const UNINITIALIZED = {
  key: "node.cloudprovider.kubernetes.io/uninitialized",
  value: "true",
  effect: "NoSchedule",
};

Deno.test("patchNode() applies a merge patch and bumps resourceVersion", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const n = await core.createNode({ body: node({ name: "n1", labels: { keep: "1", drop: "1" } }) });
  const patched = await core.patchNode({
    name: "n1",
    body: { metadata: { labels: { drop: null, add: "2" } } },
  }, MERGE);
  assert.deepEqual(patched.metadata?.labels, { keep: "1", add: "2" });
  assert.ok(Number(patched.metadata?.resourceVersion) > Number(n.metadata?.resourceVersion));
  assert.equal(kube.calls.count("PATCH /api/v1/nodes/{name}"), 1);
});

Deno.test("patchNode() applies a strategic merge patch that merges taints by key", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.createNode({
    body: node({
      name: "n1",
      taints: [UNINITIALIZED, { key: "dedicated", value: "db", effect: "NoSchedule" }],
    }),
  });
  const patched = await core.patchNode({
    name: "n1",
    body: { spec: { taints: [{ key: UNINITIALIZED.key, $patch: "delete" }], providerID: "linode://42" } },
  }, STRATEGIC);
  assert.deepEqual(plain(patched.spec), {
    providerID: "linode://42",
    taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }],
  });
  // The same patch as a merge patch would have replaced the list: the strategy really matters.
  const merged = await core.patchNode({
    name: "n1",
    body: { spec: { taints: [{ key: "x", effect: "NoExecute" }] } },
  }, MERGE);
  assert.deepEqual(plain(merged.spec?.taints), [{ key: "x", effect: "NoExecute" }]);
});

Deno.test("patchNodeStatus() merges addresses and conditions by type and ignores spec", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.createNode({ body: node({ name: "n1", addresses: [{ type: "Hostname", address: "n1" }] }) });
  const patched = await core.patchNodeStatus({
    name: "n1",
    body: {
      spec: { providerID: "linode://1" },
      status: {
        addresses: [{ type: "InternalIP", address: "192.168.0.1" }, {
          type: "ExternalIP",
          address: "1.2.3.4",
        }],
        conditions: [{ type: "NetworkUnavailable", status: "False" }],
      },
    },
  }, STRATEGIC);
  assert.equal(patched.spec?.providerID, undefined);
  assert.deepEqual(plain(patched.status?.addresses), [
    { type: "Hostname", address: "n1" },
    { type: "InternalIP", address: "192.168.0.1" },
    { type: "ExternalIP", address: "1.2.3.4" },
  ]);
  assert.deepEqual(patched.status?.conditions?.map((c) => c.type), ["Ready", "NetworkUnavailable"]);
  assert.equal(kube.calls.count("PATCH /api/v1/nodes/{name}/status"), 1);
});

Deno.test("patchNode() sends JSON patch by default, and a failed test operation is a 422", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.createNode({ body: node({ name: "n1", providerID: "linode://1" }) });
  const ok = await core.patchNode({
    name: "n1",
    body: [
      { op: "test", path: "/spec/providerID", value: "linode://1" },
      { op: "add", path: "/spec/unschedulable", value: true },
    ],
  });
  assert.equal(ok.spec?.unschedulable, true);
  const status = await rejectsWith(
    core.patchNode({
      name: "n1",
      body: [
        { op: "test", path: "/spec/providerID", value: "linode://2" },
        { op: "replace", path: "/spec/unschedulable", value: false },
      ],
    }),
    422,
  );
  assert.equal(status.reason, "Invalid");
  assert.equal(
    (await core.readNode({ name: "n1" })).spec?.unschedulable,
    true,
    "nothing of a failed patch applied",
  );
});

Deno.test("patchNode() honours a resourceVersion in the patch: stale is a 409 Conflict", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const n = await core.createNode({ body: node({ name: "n1" }) });
  const rv = n.metadata?.resourceVersion;
  await core.patchNode(
    { name: "n1", body: { metadata: { resourceVersion: rv, labels: { a: "1" } } } },
    MERGE,
  );
  const status = await rejectsWith(
    core.patchNode({ name: "n1", body: { metadata: { resourceVersion: rv, labels: { a: "2" } } } }, MERGE),
    409,
  );
  assert.equal(status.reason, "Conflict");
  assert.equal(kube.store.get("nodes", "n1")?.metadata.labels?.a, "1");
});

Deno.test("patchNode() of a missing node is a 404 and an apply patch is a 415", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await rejectsWith(
    core.patchNode({ name: "ghost", body: { metadata: { labels: { a: "1" } } } }, MERGE),
    404,
  );
  await core.createNode({ body: node({ name: "n1" }) });
  await rejectsWith(core.patchNode({ name: "n1", body: { metadata: { labels: { a: "1" } } } }, APPLY), 415);
});

Deno.test("patchNamespacedServiceStatus() writes the load balancer ingress without touching spec", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.createNamespacedService({
    namespace: "default",
    body: { metadata: { name: "web" }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
  });
  const patched = await core.patchNamespacedServiceStatus({
    name: "web",
    namespace: "default",
    body: { spec: { type: "ClusterIP" }, status: { loadBalancer: { ingress: [{ ip: "203.0.113.5" }] } } },
  }, MERGE);
  assert.equal(patched.spec?.type, "LoadBalancer");
  assert.deepEqual(plain(patched.status?.loadBalancer?.ingress), [{ ip: "203.0.113.5" }]);
  const removeFinalizer = await core.patchNamespacedService({
    name: "web",
    namespace: "default",
    body: { metadata: { finalizers: ["service.kubernetes.io/load-balancer-cleanup"] } },
  }, STRATEGIC);
  assert.deepEqual(removeFinalizer.metadata?.finalizers, ["service.kubernetes.io/load-balancer-cleanup"]);
  assert.deepEqual(plain(removeFinalizer.status?.loadBalancer?.ingress), [{ ip: "203.0.113.5" }]);
});
