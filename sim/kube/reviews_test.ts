import assert from "node:assert/strict";
import { startKubeSim } from "./server.ts";

type Sim = Awaited<ReturnType<typeof startKubeSim>>;

async function post(sim: Sim, resource: string, body: unknown, method = "POST") {
  const group = resource === "tokenreviews" ? "authentication.k8s.io" : "authorization.k8s.io";
  const res = await fetch(`${sim.url}/apis/${group}/v1/${resource}`, {
    method,
    headers: { authorization: `Bearer ${sim.token}`, "content-type": "application/json" },
    body: method === "POST" ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

function sar(user: string, attrs: Record<string, unknown>, groups: string[] = []) {
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: { user, groups, ...attrs },
  };
}

function nonResource(path: string, verb = "get") {
  return { nonResourceAttributes: { path, verb } };
}

function bind(sim: Sim, name: string, rules: unknown[], subjects: unknown[], namespace?: string): void {
  const kind = namespace ? "Role" : "ClusterRole";
  const plural = namespace ? "roles" : "clusterroles";
  if (rules.length) {
    sim.store.create(`rbac.authorization.k8s.io/${plural}`, { metadata: { name, namespace }, rules });
  }
  sim.store.create(`rbac.authorization.k8s.io/${namespace ? "rolebindings" : "clusterrolebindings"}`, {
    metadata: { name, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: rules.length ? kind : "ClusterRole", name },
    subjects,
  });
}

Deno.test("TokenReview: known tokens authenticate with their groups and system:authenticated; others do not", async () => {
  await using sim = await startKubeSim();
  sim.identities.add("tok-a", { username: "alice", uid: "u1", groups: ["devs"] });
  const known = await post(sim, "tokenreviews", { kind: "TokenReview", spec: { token: "tok-a" } });
  assert.equal(known.status, 201);
  assert.deepEqual(known.body.status.user, {
    username: "alice",
    uid: "u1",
    groups: ["devs", "system:authenticated"],
  });
  assert.equal(known.body.status.authenticated, true);
  const admin = await post(sim, "tokenreviews", { kind: "TokenReview", spec: { token: sim.token } });
  assert.ok(admin.body.status.user.groups.includes("system:masters"));
  const unknown = await post(sim, "tokenreviews", { kind: "TokenReview", spec: { token: "tok-x" } });
  assert.equal(unknown.status, 201, "an unknown token is an answer, not an error");
  assert.equal(unknown.body.status.authenticated, false);
  const audience = await post(sim, "tokenreviews", { spec: { token: "tok-a", audiences: ["vault"] } });
  assert.equal(audience.body.status.authenticated, false);
  sim.identities.remove("tok-a");
  const revoked = await post(sim, "tokenreviews", { spec: { token: "tok-a" } });
  assert.equal(revoked.body.status.authenticated, false);
  assert.equal((await post(sim, "tokenreviews", { spec: {} })).status, 400, "token is required");
  assert.equal((await post(sim, "tokenreviews", {}, "GET")).status, 405, "create only");
});

Deno.test("SubjectAccessReview: refuses a spec without exactly one attribute set or without a subject", async () => {
  await using sim = await startKubeSim();
  const both = await post(
    sim,
    "subjectaccessreviews",
    sar("a", { ...nonResource("/x"), resourceAttributes: {} }),
  );
  assert.equal(both.status, 422);
  assert.match(both.body.message, /exactly one of nonResourceAttributes or resourceAttributes/);
  assert.equal((await post(sim, "subjectaccessreviews", sar("a", {}))).status, 422);
  const nobody = await post(sim, "subjectaccessreviews", sar("", nonResource("/x")));
  assert.equal(nobody.status, 422);
  assert.match(nobody.body.message, /at least one of user or group/);
});

Deno.test("SubjectAccessReview: evaluates nonResourceURLs as RBAC does", async () => {
  await using sim = await startKubeSim();
  bind(sim, "metrics", [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }], [
    { kind: "ServiceAccount", name: "prometheus", namespace: "monitoring" },
  ]);
  bind(sim, "debug", [{ nonResourceURLs: ["/debug/*"], verbs: ["*"] }], [{
    kind: "Group",
    name: "devs",
    apiGroup: "rbac.authorization.k8s.io",
  }]);
  bind(sim, "users", [{ nonResourceURLs: ["*"], verbs: ["get"] }], [{
    kind: "User",
    name: "root-ish",
    apiGroup: "rbac.authorization.k8s.io",
  }]);
  // A RoleBinding to a ClusterRole grants no non-resource URL.
  sim.store.create("rbac.authorization.k8s.io/rolebindings", {
    metadata: { name: "ns-metrics", namespace: "default" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "metrics" },
    subjects: [{ kind: "User", name: "ns-user", apiGroup: "rbac.authorization.k8s.io" }],
  });
  const prom = "system:serviceaccount:monitoring:prometheus";
  const cases: [string, string, string, string[], boolean][] = [
    [prom, "/metrics", "get", [], true],
    [prom, "/metrics", "post", [], false],
    [prom, "/metrics/extra", "get", [], false],
    [prom, "/plan", "get", [], false],
    ["system:serviceaccount:other:prometheus", "/metrics", "get", [], false],
    ["bob", "/debug/pprof", "post", ["devs"], true],
    ["bob", "/debug", "get", ["devs"], false],
    ["root-ish", "/anything", "get", [], true],
    ["ns-user", "/metrics", "get", [], false],
    ["admin", "/plan", "get", ["system:masters"], true],
  ];
  for (const [user, path, verb, groups, want] of cases) {
    const res = await post(sim, "subjectaccessreviews", sar(user, nonResource(path, verb), groups));
    assert.equal(res.status, 201);
    assert.equal(res.body.status.allowed, want, `${user} ${verb} ${path}`);
    if (want) assert.match(res.body.status.reason, /^RBAC: allowed by ClusterRoleBinding "/);
  }
});

Deno.test("SubjectAccessReview: resource attributes honour RoleBindings in their namespace only", async () => {
  await using sim = await startKubeSim();
  bind(sim, "reader", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: ["s1"] }], [
    { kind: "User", name: "carol", apiGroup: "rbac.authorization.k8s.io" },
  ], "default");
  const ask = (namespace: string, name: string) =>
    post(
      sim,
      "subjectaccessreviews",
      sar("carol", {
        resourceAttributes: { verb: "get", group: "", resource: "secrets", namespace, name },
      }),
    );
  assert.equal((await ask("default", "s1")).body.status.allowed, true);
  assert.equal((await ask("default", "s2")).body.status.allowed, false);
  assert.equal((await ask("kube-system", "s1")).body.status.allowed, false);
});
