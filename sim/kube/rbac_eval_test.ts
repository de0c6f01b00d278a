import assert from "node:assert/strict";
import { startKubeSim } from "./server.ts";

type Sim = Awaited<ReturnType<typeof startKubeSim>>;

const SA_USER = "system:serviceaccount:kube-system:ccm";

async function call(sim: Sim, token: string, path: string, init: RequestInit = {}) {
  const res = await fetch(`${sim.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/merge-patch+json" },
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

/** A ClusterRole (or Role in `namespace`) with `rules`, bound to the ServiceAccount kube-system/ccm. */
function grant(sim: Sim, name: string, rules: unknown[], namespace?: string): void {
  const plural = namespace ? "roles" : "clusterroles";
  sim.store.create(`rbac.authorization.k8s.io/${plural}`, { metadata: { name, namespace }, rules });
  sim.store.create(`rbac.authorization.k8s.io/${namespace ? "rolebindings" : "clusterrolebindings"}`, {
    metadata: { name, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: namespace ? "Role" : "ClusterRole", name },
    subjects: [{ kind: "ServiceAccount", name: "ccm", namespace: "kube-system" }],
  });
}

function forbidden(message: string, details: Record<string, string>) {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: "Forbidden",
    details,
    code: 403,
  };
}

async function enforcing(): Promise<{ sim: Sim; token: string }> {
  const sim = await startKubeSim({ enforceRbac: true });
  sim.store.create("nodes", { metadata: { name: "n1" } });
  sim.store.create("services", {
    metadata: { name: "web", namespace: "default" },
    spec: { ports: [{ port: 80 }] },
  });
  return { sim, token: sim.identities.addServiceAccount("kube-system", "ccm") };
}

Deno.test("KubeSim without enforceRbac: only its own token calls the API, as before", async () => {
  await using sim = await startKubeSim();
  const token = sim.identities.addServiceAccount("kube-system", "ccm");
  assert.equal(
    (await call(sim, token, "/api/v1/nodes")).status,
    401,
    "a ServiceAccount token is not accepted",
  );
  assert.equal((await call(sim, sim.token, "/api/v1/nodes")).status, 200);
});

Deno.test("KubeSim with enforceRbac: a request is served when a binding allows it, 403 otherwise, with upstream's Status", async () => {
  const { sim, token } = await enforcing();
  await using _ = sim;
  assert.deepEqual(
    (await call(sim, token, "/api/v1/nodes")).body,
    forbidden(
      `nodes is forbidden: User "${SA_USER}" cannot list resource "nodes" in API group "" at the cluster scope`,
      { kind: "nodes" },
    ),
  );
  grant(sim, "node-reader", [{ apiGroups: [""], resources: ["nodes"], verbs: ["list", "get"] }]);
  const listed = await call(sim, token, "/api/v1/nodes");
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.items.map((n: { metadata: { name: string } }) => n.metadata.name), ["n1"]);
  assert.equal((await call(sim, token, "/api/v1/nodes/n1")).status, 200);
  assert.equal(
    (await call(sim, sim.token, "/api/v1/services")).status,
    200,
    "the admin token is never asked",
  );
  assert.deepEqual(
    sim.audit.entries.slice(0, 2).map((e) => [e.verb, e.resource, e.status]),
    [["list", "nodes", 403], ["list", "nodes", 200]],
  );
});

Deno.test("KubeSim with enforceRbac: names, namespaces, API groups and watches in the forbidden message", async () => {
  const { sim, token } = await enforcing();
  await using _ = sim;
  const cases: [string, RequestInit, string, Record<string, string>][] = [
    [
      "/api/v1/namespaces/default/services/web",
      {},
      `services "web" is forbidden: User "${SA_USER}" cannot get resource "services" in API group "" in the namespace "default"`,
      { name: "web", kind: "services" },
    ],
    [
      "/api/v1/namespaces/kube-system",
      {},
      `namespaces "kube-system" is forbidden: User "${SA_USER}" cannot get resource "namespaces" in API group "" in the namespace "kube-system"`,
      { name: "kube-system", kind: "namespaces" },
    ],
    [
      "/api/v1/services?watch=true",
      {},
      `services is forbidden: User "${SA_USER}" cannot watch resource "services" in API group "" at the cluster scope`,
      { kind: "services" },
    ],
    [
      "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?watch=1&fieldSelector=metadata.name%3Dccm",
      {},
      `leases.coordination.k8s.io "ccm" is forbidden: User "${SA_USER}" cannot watch resource "leases" in API group "coordination.k8s.io" in the namespace "kube-system"`,
      { name: "ccm", group: "coordination.k8s.io", kind: "leases" },
    ],
    [
      "/apis/authentication.k8s.io/v1/tokenreviews",
      { method: "POST", body: JSON.stringify({ spec: { token: "x" } }) },
      `tokenreviews.authentication.k8s.io is forbidden: User "${SA_USER}" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope`,
      { group: "authentication.k8s.io", kind: "tokenreviews" },
    ],
  ];
  for (const [path, init, message, details] of cases) {
    const res = await call(sim, token, path, init);
    assert.equal(res.status, 403, path);
    assert.deepEqual(res.body, forbidden(message, details), path);
  }
});

Deno.test("KubeSim with enforceRbac: a subresource is its own resource (nodes/status), as RBAC names it", async () => {
  const { sim, token } = await enforcing();
  await using _ = sim;
  grant(sim, "nodes", [{ apiGroups: [""], resources: ["nodes"], verbs: ["patch"] }]);
  const patch = { method: "PATCH", body: JSON.stringify({ metadata: { labels: { a: "b" } } }) };
  assert.equal((await call(sim, token, "/api/v1/nodes/n1", patch)).status, 200);
  assert.deepEqual(
    (await call(sim, token, "/api/v1/nodes/n1/status", patch)).body,
    forbidden(
      `nodes "n1" is forbidden: User "${SA_USER}" cannot patch resource "nodes/status" in API group "" at the cluster scope`,
      { name: "n1", kind: "nodes" },
    ),
  );
  grant(sim, "node-status", [{ apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"] }]);
  assert.equal((await call(sim, token, "/api/v1/nodes/n1/status", patch)).status, 200);
});

Deno.test("KubeSim with enforceRbac: a RoleBinding allows in its namespace only; a missing role is the reason", async () => {
  const { sim, token } = await enforcing();
  await using _ = sim;
  sim.store.create("services", {
    metadata: { name: "db", namespace: "kube-system" },
    spec: { ports: [{ port: 5 }] },
  });
  grant(sim, "svc", [{ apiGroups: [""], resources: ["services"], verbs: ["get"] }], "default");
  assert.equal((await call(sim, token, "/api/v1/namespaces/default/services/web")).status, 200);
  const other = await call(sim, token, "/api/v1/namespaces/kube-system/services/db");
  assert.equal(other.status, 403);
  assert.match(
    other.body.message,
    /cannot get resource "services" in API group "" in the namespace "kube-system"$/,
  );
  sim.store.create("rbac.authorization.k8s.io/clusterrolebindings", {
    metadata: { name: "dangling" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ghost" },
    subjects: [{ kind: "Group", name: "system:serviceaccounts", apiGroup: "rbac.authorization.k8s.io" }],
  });
  const dangling = await call(sim, token, "/api/v1/nodes");
  assert.equal(
    dangling.body.message,
    `nodes is forbidden: User "${SA_USER}" cannot list resource "nodes" in API group "" at the cluster scope: ` +
      `RBAC: clusterrole.rbac.authorization.k8s.io "ghost" not found`,
  );
});

Deno.test("KubeSim with enforceRbac: groups bind (system:authenticated), non-resource paths stay open, unknown tokens get 401", async () => {
  const { sim, token } = await enforcing();
  await using _ = sim;
  for (const path of ["/version", "/api", "/apis"]) {
    assert.equal((await call(sim, token, path)).status, 200, path);
  }
  assert.equal((await call(sim, "tok-unknown", "/api/v1/nodes")).status, 401);
  assert.equal((await call(sim, "tok-unknown", "/version")).status, 401);
  sim.store.create("rbac.authorization.k8s.io/clusterroles", {
    metadata: { name: "everyone-nodes" },
    rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }],
  });
  sim.store.create("rbac.authorization.k8s.io/clusterrolebindings", {
    metadata: { name: "everyone-nodes" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "everyone-nodes" },
    subjects: [{ kind: "Group", name: "system:authenticated", apiGroup: "rbac.authorization.k8s.io" }],
  });
  assert.equal((await call(sim, token, "/api/v1/nodes")).status, 200);
});
