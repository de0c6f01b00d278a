import assert from "node:assert/strict";
import { CoreV1Api, KubeConfig, V1MicroTime } from "@kubernetes/client-node";
import { startKubeSim } from "./server.ts";
import { clientsFor, node, plain, rejectsWith } from "./testdata/test_support.ts";

Deno.test("startKubeSim() serves objects with uid, creationTimestamp and a global resourceVersion", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const created = await core.createNode({ body: node({ name: "n1" }) });
  assert.match(created.metadata?.uid ?? "", /^[0-9a-f-]{36}$/);
  assert.ok(created.metadata?.creationTimestamp instanceof Date);
  assert.equal(created.metadata?.generation, 1);
  const rv1 = Number(created.metadata?.resourceVersion);
  const second = await core.createNode({ body: node({ name: "n2" }) });
  assert.ok(Number(second.metadata?.resourceVersion) > rv1);
  const list = await core.listNode();
  assert.deepEqual(list.items.map((n) => n.metadata?.name), ["n1", "n2"]);
  assert.equal(list.metadata?.resourceVersion, second.metadata?.resourceVersion);
  const namespaces = await core.listNamespace();
  assert.deepEqual(
    namespaces.items.map((n) => n.metadata?.name),
    ["default", "kube-node-lease", "kube-public", "kube-system"],
  );
});

Deno.test("replaceNode() bumps generation on spec changes only and skips no-op writes", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const n = await core.createNode({ body: node({ name: "n1" }) });
  n.metadata!.labels = { role: "worker" };
  const labelled = await core.replaceNode({ name: "n1", body: n });
  assert.equal(labelled.metadata?.generation, 1);
  labelled.spec = { ...labelled.spec, unschedulable: true };
  const cordoned = await core.replaceNode({ name: "n1", body: labelled });
  assert.equal(cordoned.metadata?.generation, 2);
  const same = await core.replaceNode({ name: "n1", body: cordoned });
  assert.equal(same.metadata?.resourceVersion, cordoned.metadata?.resourceVersion);
  assert.equal(kube.store.get("nodes", "n1")?.metadata.generation, 2);
});

Deno.test("replaceNode() with a stale resourceVersion is a 409 Conflict and changes nothing", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const n = await core.createNode({ body: node({ name: "n1" }) });
  await core.replaceNode({ name: "n1", body: { ...n, metadata: { ...n.metadata, labels: { a: "1" } } } });
  const status = await rejectsWith(
    core.replaceNode({ name: "n1", body: { ...n, metadata: { ...n.metadata, labels: { a: "2" } } } }),
    409,
  );
  assert.equal(status.reason, "Conflict");
  assert.match(String(status.message), /the object has been modified/);
  assert.deepEqual(status.details, { name: "n1", kind: "nodes" });
  assert.equal(kube.store.get("nodes", "n1")?.metadata.labels?.a, "1");
});

Deno.test("createNode() of an existing name is a 409 AlreadyExists", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.createNode({ body: node({ name: "n1" }) });
  const status = await rejectsWith(core.createNode({ body: node({ name: "n1" }) }), 409);
  assert.equal(status.reason, "AlreadyExists");
  assert.equal(status.message, 'nodes "n1" already exists');
});

Deno.test("readNamespacedService() of a missing object is a 404 NotFound Status with details", async () => {
  await using kube = await startKubeSim();
  const { core, coordination } = clientsFor(kube);
  const status = await rejectsWith(core.readNamespacedService({ name: "nope", namespace: "default" }), 404);
  assert.equal(status.kind, "Status");
  assert.equal(status.reason, "NotFound");
  assert.deepEqual(status.details, { name: "nope", kind: "services" });
  const lease = await rejectsWith(
    coordination.readNamespacedLease({ name: "x", namespace: "kube-system" }),
    404,
  );
  assert.deepEqual(lease.details, { name: "x", group: "coordination.k8s.io", kind: "leases" });
});

Deno.test("createNamespacedSecret() needs an existing namespace", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const body = { metadata: { name: "s" }, stringData: { token: "abc" } };
  const status = await rejectsWith(core.createNamespacedSecret({ namespace: "missing", body }), 404);
  assert.equal(status.message, 'namespaces "missing" not found');
  const secret = await core.createNamespacedSecret({ namespace: "kube-system", body });
  assert.equal(secret.data?.token, btoa("abc"));
  assert.equal(secret.type, "Opaque");
});

Deno.test("replaceNode() ignores status and replaceNodeStatus() ignores spec", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const n = await core.createNode({ body: node({ name: "n1" }) });
  const changed = await core.replaceNode({
    name: "n1",
    body: {
      ...n,
      spec: { providerID: "linode://7" },
      status: { addresses: [{ type: "Hostname", address: "h" }] },
    },
  });
  assert.equal(changed.spec?.providerID, "linode://7");
  assert.deepEqual(plain(changed.status?.addresses), [{ type: "InternalIP", address: "10.0.0.1" }]);
  const status = await core.replaceNodeStatus({
    name: "n1",
    body: {
      ...changed,
      spec: { providerID: "linode://9" },
      status: { addresses: [{ type: "Hostname", address: "h" }] },
    },
  });
  assert.equal(status.spec?.providerID, "linode://7");
  assert.deepEqual(plain(status.status?.addresses), [{ type: "Hostname", address: "h" }]);
  assert.equal(status.metadata?.generation, changed.metadata?.generation);
});

Deno.test("deleteNode() of an object with finalizers sets deletionTimestamp until they are removed", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.createNode({ body: { metadata: { name: "n1", finalizers: ["example.com/hold"] } } });
  await core.deleteNode({ name: "n1" });
  const pending = await core.readNode({ name: "n1" });
  assert.ok(pending.metadata?.deletionTimestamp instanceof Date);
  pending.metadata!.finalizers = [...pending.metadata!.finalizers!, "example.com/other"];
  const forbidden = await rejectsWith(core.replaceNode({ name: "n1", body: pending }), 422);
  assert.match(String(forbidden.message), /no new finalizers/);
  pending.metadata!.finalizers = [];
  await core.replaceNode({ name: "n1", body: pending });
  await rejectsWith(core.readNode({ name: "n1" }), 404);
  await core.createNode({ body: node({ name: "n2" }) });
  await core.deleteNode({ name: "n2" });
  assert.equal(kube.store.get("nodes", "n2"), undefined);
});

Deno.test("createNode() rejects bad bodies with 400 BadRequest and 422 Invalid", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const wrongKind = await rejectsWith(
    core.createNode({ body: { kind: "Service", metadata: { name: "x" } } }),
    400,
  );
  assert.equal(wrongKind.reason, "BadRequest");
  await core.createNode({ body: node({ name: "n1" }) });
  const mismatch = await rejectsWith(core.replaceNode({ name: "n1", body: node({ name: "n2" }) }), 400);
  assert.match(String(mismatch.message), /does not match the name on the URL/);
  const badName = await rejectsWith(core.createNode({ body: node({ name: "Bad_Name" }) }), 422);
  assert.equal(badName.reason, "Invalid");
  const taint = node({ name: "n3", taints: [{ key: "k", effect: "Sometimes" }] });
  const badTaint = await rejectsWith(core.createNode({ body: taint }), 422);
  assert.deepEqual((badTaint.details as { causes: { field: string }[] }).causes.map((c) => c.field), [
    "spec.taints[0].effect",
  ]);
  const noName = await rejectsWith(core.createNode({ body: { metadata: {} } }), 422);
  assert.match(String(noName.message), /name or generateName is required/);
});

Deno.test("createNamespacedEvent() with generateName gets a unique generated name", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const body = {
    metadata: { generateName: "n1." },
    involvedObject: { kind: "Node", name: "n1" },
    reason: "Test",
    message: "hello",
  };
  const a = await core.createNamespacedEvent({ namespace: "default", body });
  const b = await core.createNamespacedEvent({ namespace: "default", body });
  assert.match(a.metadata?.name ?? "", /^n1\.[a-z0-9]{5}$/);
  assert.notEqual(a.metadata?.name, b.metadata?.name);
  const wrongNs = await rejectsWith(core.createNamespacedEvent({ namespace: "kube-system", body }), 422);
  assert.match(String(wrongNs.message), /does not match event.namespace/);
});

Deno.test("createNamespacedService() allocates a cluster IP and node ports that survive replace", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  const svc = await core.createNamespacedService({
    namespace: "default",
    body: {
      metadata: { name: "web" },
      spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
      status: { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } },
    },
  });
  assert.match(svc.spec?.clusterIP ?? "", /^10\.96\./);
  const nodePort = svc.spec?.ports?.[0]?.nodePort ?? 0;
  assert.ok(nodePort >= 30000 && nodePort <= 32767);
  assert.deepEqual(plain(svc.status), { loadBalancer: {} });
  const replaced = await core.replaceNamespacedService({
    name: "web",
    namespace: "default",
    body: { metadata: { name: "web" }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
  });
  assert.equal(replaced.spec?.clusterIP, svc.spec?.clusterIP);
  assert.equal(replaced.spec?.ports?.[0]?.nodePort, nodePort);
  const noPorts = await rejectsWith(
    core.createNamespacedService({ namespace: "default", body: { metadata: { name: "x" }, spec: {} } }),
    422,
  );
  assert.match(String(noPorts.message), /spec.ports: Required value/);
});

Deno.test("listServiceForAllNamespaces() lists across namespaces; namespaced lists stay in theirs", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  kube.store.create("services", {
    metadata: { name: "a", namespace: "default" },
    spec: { ports: [{ port: 1 }] },
  });
  kube.store.create("services", {
    metadata: { name: "b", namespace: "kube-system" },
    spec: { ports: [{ port: 1 }] },
  });
  const all = await core.listServiceForAllNamespaces();
  assert.deepEqual(all.items.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`), [
    "default/a",
    "kube-system/b",
  ]);
  const system = await core.listNamespacedService({ namespace: "kube-system" });
  assert.deepEqual(system.items.map((s) => s.metadata?.name), ["b"]);
  assert.equal(kube.calls.count("GET /api/v1/services"), 1);
  assert.equal(kube.calls.count("GET /api/v1/namespaces/{namespace}/services"), 1);
});

Deno.test("createNamespacedLease() round-trips MicroTime and uses optimistic concurrency", async () => {
  await using kube = await startKubeSim();
  const { coordination } = clientsFor(kube);
  const lease = await coordination.createNamespacedLease({
    namespace: "kube-system",
    body: {
      metadata: { name: "ccm" },
      spec: { holderIdentity: "a", leaseDurationSeconds: 15, renewTime: new V1MicroTime() },
    },
  });
  const spec = kube.store.get("coordination.k8s.io/leases", "ccm", "kube-system")?.spec as Record<
    string,
    unknown
  >;
  assert.match(String(spec.renewTime), /\.\d{6}Z$/);
  await coordination.replaceNamespacedLease({
    name: "ccm",
    namespace: "kube-system",
    body: { ...lease, spec: { ...lease.spec, holderIdentity: "b" } },
  });
  await rejectsWith(
    coordination.replaceNamespacedLease({
      name: "ccm",
      namespace: "kube-system",
      body: { ...lease, spec: { ...lease.spec, holderIdentity: "c" } },
    }),
    409,
  );
});

Deno.test("startKubeSim() answers a missing or wrong token with 401 and counts it", async () => {
  await using kube = await startKubeSim({ token: "right-token" });
  const kc = new KubeConfig();
  kc.loadFromString(kube.kubeconfig().replace("right-token", "wrong-token"));
  await rejectsWith(kc.makeApiClient(CoreV1Api).listNode(), 401);
  const anonymous = await fetch(`${kube.url}/api/v1/nodes`);
  assert.equal(anonymous.status, 401);
  const status = await anonymous.json();
  assert.equal(status.kind, "Status");
  assert.equal(status.reason, "Unauthorized");
  assert.equal(kube.calls.count("GET /api/v1/nodes"), 2);
  assert.equal((await clientsFor(kube).core.listNode()).items.length, 0);
});

Deno.test("startKubeSim() store writes and HTTP writes share one history", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  kube.store.create("nodes", node({ name: "direct" }));
  const viaHttp = await core.readNode({ name: "direct" });
  await core.patchNode({
    name: "direct",
    body: [{ op: "add", path: "/metadata/labels", value: { a: "b" } }],
  });
  assert.deepEqual(kube.store.get("nodes", "direct")?.metadata.labels, { a: "b" });
  assert.ok(Number(kube.store.resourceVersion) > Number(viaHttp.metadata?.resourceVersion));
  assert.throws(() => kube.store.create("nodes", node({ name: "direct" })), /already exists/);
  assert.equal(kube.store.delete("nodes", "direct").deleted, true);
});

Deno.test("startKubeSim({ tls: true }) serves HTTPS that client-node trusts through the kubeconfig CA", async () => {
  await using kube = await startKubeSim({ tls: true });
  assert.match(kube.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.match(kube.kubeconfig(), /certificate-authority-data: /);
  const { core } = clientsFor(kube);
  assert.equal((await core.listNode()).items.length, 0);
});

Deno.test("deleteNamespace() removes its contents; a pending finalizer keeps it Terminating", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.createNamespace({ body: { metadata: { name: "team" } } });
  kube.store.create("secrets", { metadata: { name: "s", namespace: "team" } });
  kube.store.create("services", {
    metadata: { name: "lb", namespace: "team", finalizers: ["service.kubernetes.io/load-balancer-cleanup"] },
    spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
  });
  await core.deleteNamespace({ name: "team" });
  assert.equal(kube.store.get("secrets", "s", "team"), undefined);
  assert.equal((kube.store.get("namespaces", "team")?.status as { phase: string }).phase, "Terminating");
  const blocked = await rejectsWith(
    core.createNamespacedSecret({ namespace: "team", body: { metadata: { name: "late" } } }),
    403,
  );
  assert.match(String(blocked.message), /being terminated/);
  kube.store.patch("services", "lb", { metadata: { finalizers: null } }, {
    type: "merge",
    namespace: "team",
  });
  assert.equal(kube.store.get("namespaces", "team"), undefined);
  const protectedNs = await rejectsWith(core.deleteNamespace({ name: "kube-system" }), 403);
  assert.equal(protectedNs.reason, "Forbidden");
});

Deno.test("store refuses a kubernetes.io/tls Secret without tls.crt and tls.key, as the apiserver does", async () => {
  await using kube = await startKubeSim();
  const secret = (data: Record<string, string>) => ({
    metadata: { name: "t", namespace: "default" },
    type: "kubernetes.io/tls",
    data,
  });
  assert.throws(
    () => kube.store.create("secrets", secret({ "tls.crt": btoa("x") })),
    /data\[tls\.key\]: Required value/,
  );
  kube.store.create("secrets", secret({ "tls.crt": btoa("x"), "tls.key": btoa("y") }));
  kube.store.create("secrets", { metadata: { name: "o", namespace: "default" }, data: {} });
});
