import assert from "node:assert/strict";
import { startKubeSim } from "./server.ts";

type Body = Record<string, unknown>;

/** POSTs (or PUTs) `body` to `path` with the emulator's token; returns status and the Status causes. */
async function send(url: string, token: string, path: string, body: Body, method = "POST") {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const status = await res.json();
  const causes = (status?.details?.causes ?? []) as { field: string; reason: string }[];
  return { code: res.status, causes: causes.map((c) => `${c.field} ${c.reason}`), body: status };
}

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const SA = { kind: "ServiceAccount", name: "ccm", namespace: "kube-system" };
const REF = { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ccm" };

const INVALID: { name: string; path: string; body: Body; causes: string[] }[] = [
  {
    name: "a rule without verbs, groups or resources",
    path: `${RBAC}/clusterroles`,
    body: { metadata: { name: "system:ccm" }, rules: [{}] },
    causes: [
      "rules[0].verbs FieldValueRequired",
      "rules[0].apiGroups FieldValueRequired",
      "rules[0].resources FieldValueRequired",
    ],
  },
  {
    name: "non-resource URLs in a namespaced Role",
    path: `${RBAC}/namespaces/kube-system/roles`,
    body: { metadata: { name: "r" }, rules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }] },
    causes: ["rules[0].nonResourceURLs FieldValueInvalid"],
  },
  {
    name: "a ClusterRoleBinding to a Role, with a ServiceAccount without namespace",
    path: `${RBAC}/clusterrolebindings`,
    body: {
      metadata: { name: "b" },
      roleRef: { ...REF, kind: "Role" },
      subjects: [{ ...SA, namespace: "" }],
    },
    causes: ["roleRef.kind FieldValueNotSupported", "subjects[0].namespace FieldValueRequired"],
  },
  {
    name: "a binding outside the RBAC group, to a subject of unknown kind",
    path: `${RBAC}/namespaces/kube-system/rolebindings`,
    body: {
      metadata: { name: "b" },
      roleRef: { ...REF, apiGroup: "" },
      subjects: [{ kind: "Robot", name: "x" }],
    },
    causes: ["roleRef.apiGroup FieldValueNotSupported", "subjects[0].kind FieldValueNotSupported"],
  },
  {
    name: "a DaemonSet whose selector misses its template, without an image",
    path: "/apis/apps/v1/namespaces/kube-system/daemonsets",
    body: {
      metadata: { name: "ds" },
      spec: {
        selector: { matchLabels: { app: "a" } },
        template: { metadata: { labels: { app: "b" } }, spec: { containers: [{ name: "c" }] } },
      },
    },
    causes: [
      "spec.template.metadata.labels FieldValueInvalid",
      "spec.template.spec.containers[0].image FieldValueRequired",
    ],
  },
];

for (const c of INVALID) {
  Deno.test(`the emulator refuses ${c.name} with 422 and every cause`, async () => {
    await using kube = await startKubeSim();
    const { code, causes, body } = await send(kube.url, kube.token, c.path, c.body);
    assert.equal(code, 422, JSON.stringify(body));
    assert.deepEqual(causes, c.causes);
  });
}

Deno.test("the emulator keeps a binding's roleRef and a DaemonSet's selector immutable, and zeroes DaemonSet status", async () => {
  await using kube = await startKubeSim();
  const binding = { metadata: { name: "b", namespace: "kube-system" }, roleRef: REF, subjects: [SA] };
  const path = `${RBAC}/namespaces/kube-system/rolebindings`;
  assert.equal((await send(kube.url, kube.token, path, binding)).code, 201);
  const changed = { ...binding, roleRef: { ...REF, name: "other" } };
  const put = await send(kube.url, kube.token, `${path}/b`, changed, "PUT");
  assert.equal(put.code, 422);
  assert.deepEqual(put.causes, ["roleRef FieldValueInvalid"]);
  const ds = {
    metadata: { name: "ds", namespace: "kube-system" },
    spec: {
      selector: { matchLabels: { app: "a" } },
      template: { metadata: { labels: { app: "a" } }, spec: { containers: [{ name: "c", image: "i" }] } },
    },
  };
  const created = await send(kube.url, kube.token, "/apis/apps/v1/namespaces/kube-system/daemonsets", ds);
  assert.equal(created.code, 201);
  assert.equal(created.body.status.desiredNumberScheduled, 0);
  const moved = { ...ds, spec: { ...ds.spec, selector: { matchLabels: { app: "b" } } } };
  const res = await send(
    kube.url,
    kube.token,
    "/apis/apps/v1/namespaces/kube-system/daemonsets/ds",
    moved,
    "PUT",
  );
  assert.deepEqual([res.code, res.causes], [422, ["spec.selector FieldValueInvalid"]]);
});
