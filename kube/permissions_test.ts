import assert from "node:assert/strict";
import { join } from "node:path";
import type { V1Node } from "@kubernetes/client-node";
import { FakeClock } from "../common/clock.ts";
import { captureLogs, componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { startKubeSim } from "../sim/mod.ts";
import { type KubeClients, makeKubeClients, nodeSource } from "./clients.ts";
import { loadKubeConfig } from "./config.ts";
import type { EventSink, EventType, ObjectRef } from "./events.ts";
import { Informer } from "./informer.ts";
import {
  isRbacDenial,
  KubeForbiddenError,
  MISSING_PERMISSION_REASON,
  MissingPermissions,
  qualifiedResource,
  ruleFor,
} from "./permissions.ts";
import { KubeApiError } from "./requests.ts";
import { waitFor } from "./testdata/fixtures.ts";

const SA = "system:serviceaccount:kube-system:ccm";

/** The Events handed to the sink, as the recorder would receive them. */
class Recorded implements EventSink {
  readonly events: { ref: ObjectRef; type: EventType; reason: string; message: string }[] = [];
  event(ref: ObjectRef, type: EventType, reason: string, message: string): void {
    this.events.push({ ref, type, reason, message });
  }
}

interface World extends AsyncDisposable {
  kube: Awaited<ReturnType<typeof startKubeSim>>;
  clients: KubeClients;
  metrics: Registry;
  permissions: MissingPermissions;
  sink: Recorded;
  forbidden(verb: string, resource: string): number;
  grant(name: string, rules: unknown[]): void;
}

/** The emulator enforcing RBAC and clients authenticating as the ServiceAccount kube-system/ccm. */
async function world(subject?: () => ObjectRef | undefined): Promise<World> {
  const kube = await startKubeSim({ enforceRbac: true });
  const dir = await Deno.makeTempDir({ prefix: "permissions_test_" });
  const path = join(dir, "kubeconfig");
  await kube.writeKubeconfig(path, kube.identities.addServiceAccount("kube-system", "ccm"));
  const metrics = new Registry();
  const permissions = new MissingPermissions({ log: componentLogger("kube"), metrics });
  const sink = new Recorded();
  permissions.attach({ events: sink, subject });
  const clients = makeKubeClients(loadKubeConfig({ kubeconfig: path }), { metrics, permissions });
  return {
    kube,
    clients,
    metrics,
    permissions,
    sink,
    forbidden: (verb, resource) =>
      metrics.counter("ccm_kube_forbidden_total", "", ["verb", "resource"]).get({ verb, resource }),
    grant(name, rules) {
      kube.store.create("rbac.authorization.k8s.io/clusterroles", { metadata: { name }, rules });
      kube.store.create("rbac.authorization.k8s.io/clusterrolebindings", {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: [{ kind: "ServiceAccount", name: "ccm", namespace: "kube-system" }],
      });
    },
    async [Symbol.asyncDispose]() {
      await kube.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("isRbacDenial() tells the authorizer's refusal from other 403s", () => {
  const cases: [string, boolean][] = [
    [
      `nodes is forbidden: User "${SA}" cannot list resource "nodes" in API group "" at the cluster scope`,
      true,
    ],
    [
      `leases.coordination.k8s.io "x" is forbidden: User "${SA}" cannot update resource "leases" in API group ` +
      `"coordination.k8s.io" in the namespace "kube-system"`,
      true,
    ],
    ['admission webhook "policy.example.com" denied the request: no', false],
    [
      'services "web" is forbidden: unable to create new content in namespace x because it is being terminated',
      false,
    ],
    ["", false],
  ];
  for (const [message, want] of cases) assert.equal(isRbacDenial(message), want, message);
});

Deno.test("qualifiedResource() and ruleFor() name a permission as a ClusterRole rule does", () => {
  const base = { namespace: "", name: "" };
  const status = { ...base, verb: "patch", group: "", resource: "nodes", subresource: "status" };
  const review = {
    ...base,
    verb: "create",
    group: "authentication.k8s.io",
    resource: "tokenreviews",
    subresource: "",
  };
  assert.equal(qualifiedResource(status), "nodes/status");
  assert.equal(qualifiedResource(review), "tokenreviews.authentication.k8s.io");
  assert.equal(ruleFor(status), '{apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"]}');
  assert.equal(
    ruleFor(review),
    '{apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"]}',
  );
});

Deno.test("MissingPermissions: a refused request rejects with a permanent KubeForbiddenError, counted each time, reported once", async () => {
  const logs = await captureLogs("info");
  await using w = await world();
  for (let i = 0; i < 3; i++) {
    await assert.rejects(w.clients.core.readNamespace({ name: "kube-system" }), (e: unknown) => {
      assert.ok(e instanceof KubeForbiddenError);
      assert.equal(e.status, 403);
      assert.equal(e.permanent, true);
      assert.deepEqual(e.permission, {
        verb: "get",
        group: "",
        resource: "namespaces",
        subresource: "",
        namespace: "kube-system",
        name: "kube-system",
      });
      assert.match(e.message, /cannot get resource "namespaces" in API group ""/);
      return true;
    });
  }
  assert.equal(w.forbidden("get", "namespaces"), 3);
  assert.equal(w.sink.events.length, 1, "one Event until the permission changes");
  const [event] = w.sink.events;
  assert.deepEqual(event?.ref, { kind: "Namespace", apiVersion: "v1", name: "kube-system" });
  assert.equal(event?.type, "Warning");
  assert.equal(event?.reason, MISSING_PERMISSION_REASON);
  assert.match(
    event?.message ?? "",
    /^Missing RBAC permission: get on namespaces in API group "" \(cluster-wide\)/,
  );
  assert.match(
    event?.message ?? "",
    /add \{apiGroups: \[""\], resources: \["namespaces"\], verbs: \["get"\]\}/,
  );
  const errors = logs.lines.map((l) => JSON.parse(l)).filter((r) => r.level === "ERROR");
  assert.equal(errors.length, 1);
  assert.deepEqual([errors[0].verb, errors[0].resource], ["get", "namespaces"]);
  assert.equal(errors[0].rule, '{apiGroups: [""], resources: ["namespaces"], verbs: ["get"]}');
});

Deno.test("MissingPermissions: once granted and lost again, a permission is reported again; the Event is on the object being reconciled", async () => {
  const subject: ObjectRef = { kind: "Node", apiVersion: "v1", name: "n1" };
  await using w = await world(() => subject);
  w.kube.store.create("nodes", { metadata: { name: "n1" } });
  const patchStatus = () =>
    w.clients.core.patchNodeStatus({
      name: "n1",
      body: [{ op: "add", path: "/metadata/labels", value: {} }],
    });
  await assert.rejects(patchStatus(), KubeForbiddenError);
  w.grant("status", [{ apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"] }]);
  await patchStatus();
  w.kube.store.delete("rbac.authorization.k8s.io/clusterrolebindings", "status");
  await assert.rejects(patchStatus(), KubeForbiddenError);
  assert.equal(w.forbidden("patch", "nodes/status"), 2);
  assert.deepEqual(w.sink.events.map((e) => e.ref.name), ["n1", "n1"], "reported again after it was granted");
  assert.match(w.sink.events[0]?.message ?? "", /patch on nodes\/status in API group ""/);
  assert.equal(w.forbidden("patch", "nodes"), 0, "the subresource is its own permission");
});

Deno.test("MissingPermissions: a 403 that is not RBAC's stays a KubeApiError, neither counted nor reported", async () => {
  await using w = await world();
  w.grant("nodes", [{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }]);
  w.kube.faults.add({
    method: "GET",
    route: "/api/v1/nodes",
    status: 403,
    message: 'admission webhook "x" denied the request',
    times: 1,
  });
  await assert.rejects(w.clients.core.listNode(), (e: unknown) => {
    assert.ok(e instanceof KubeApiError && !(e instanceof KubeForbiddenError));
    assert.equal(e.status, 403);
    return true;
  });
  assert.equal(w.forbidden("list", "nodes"), 0);
  assert.deepEqual(w.sink.events, []);
  assert.equal((await w.clients.core.listNode()).items.length, 0);
});

Deno.test("Informer with MissingPermissions: a refused watch is reported, and the informer waits its longest backoff", async () => {
  await using w = await world();
  w.grant("nodes", [{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }]);
  const clock = new FakeClock();
  const informer = new Informer<V1Node>(w.clients.kc, nodeSource(w.clients.core), {
    log: componentLogger("informer-test"),
    metrics: w.metrics,
    clock,
    backoff: { baseMs: 100, maxMs: 60_000 },
    permissions: w.permissions,
  });
  const stop = new AbortController();
  const done = informer.start(stop.signal);
  try {
    await waitFor(() => w.forbidden("watch", "nodes") === 1, "the watch refused");
    const restarts = w.metrics.counter("ccm_informer_restarts_total", "", ["resource"]);
    await waitFor(() => restarts.get({ resource: "nodes" }) === 1, "a restart counted");
    await clock.advance(59_000);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(w.forbidden("watch", "nodes"), 1, "not retried before the longest backoff");
    await clock.advance(1_000);
    await waitFor(() => w.forbidden("watch", "nodes") === 2, "retried after it");
    assert.equal(w.sink.events.length, 1);
    assert.match(w.sink.events[0]?.message ?? "", /watch on nodes in API group "" \(cluster-wide\)/);
    w.grant("watch", [{ apiGroups: [""], resources: ["nodes"], verbs: ["watch"] }]);
    await clock.advance(60_000);
    await waitFor(() => informer.healthy, "the informer watching once granted");
  } finally {
    stop.abort();
    await done;
  }
});
