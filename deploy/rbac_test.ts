import assert from "node:assert/strict";
import {
  type AccessRequest,
  deriveRules,
  grantsFor,
  isAllowed,
  type RbacRule,
  renderRules,
  replaceRuleBlock,
  ruleAllows,
  unusedGrants,
} from "./rbac.ts";

function req(verb: string, resource: string, o: Partial<AccessRequest> = {}): AccessRequest {
  const [res = "", sub = ""] = resource.split("/");
  return { verb, apiGroup: "", resource: res, subresource: sub, namespace: "", name: "", ...o };
}

const NODES: RbacRule = { apiGroups: [""], resources: ["nodes"], verbs: ["get", "patch"] };
const LEASE: RbacRule = {
  apiGroups: ["coordination.k8s.io"],
  resources: ["leases"],
  verbs: ["get", "update", "create"],
  resourceNames: ["ccm"],
};
const lease = (verb: string, name = "ccm") =>
  req(verb, "leases", { apiGroup: "coordination.k8s.io", namespace: "kube-system", name });

const CASES: { name: string; rule: RbacRule; req: AccessRequest; want: boolean }[] = [
  { name: "verb and resource match", rule: NODES, req: req("patch", "nodes", { name: "n1" }), want: true },
  { name: "another verb", rule: NODES, req: req("delete", "nodes", { name: "n1" }), want: false },
  { name: "a subresource needs its own entry", rule: NODES, req: req("patch", "nodes/status"), want: false },
  { name: "another group", rule: NODES, req: req("get", "nodes", { apiGroup: "apps" }), want: false },
  { name: "a named Lease", rule: LEASE, req: lease("update"), want: true },
  { name: "another Lease", rule: LEASE, req: lease("update", "other"), want: false },
  { name: "create cannot match resourceNames", rule: LEASE, req: lease("create", ""), want: false },
  {
    name: "wildcards",
    rule: { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
    req: req("delete", "nodes/status"),
    want: true,
  },
];

for (const c of CASES) {
  Deno.test(`ruleAllows() ${c.name}`, () => assert.equal(ruleAllows(c.rule, c.req), c.want));
}

const SA = { kind: "ServiceAccount", name: "ccm", namespace: "kube-system" };
const DOCS = [
  { kind: "ClusterRole", metadata: { name: "nodes" }, rules: [NODES] },
  { kind: "Role", metadata: { name: "lease", namespace: "kube-system" }, rules: [LEASE] },
  { kind: "Role", metadata: { name: "lease", namespace: "default" }, rules: [NODES] },
  {
    kind: "ClusterRoleBinding",
    metadata: { name: "b1" },
    roleRef: { kind: "ClusterRole", name: "nodes" },
    subjects: [SA],
  },
  {
    kind: "RoleBinding",
    metadata: { name: "b2", namespace: "kube-system" },
    roleRef: { kind: "Role", name: "lease" },
    subjects: [SA],
  },
  {
    kind: "RoleBinding",
    metadata: { name: "b3", namespace: "kube-system" },
    roleRef: { kind: "Role", name: "lease" },
    subjects: [{ ...SA, name: "someone-else" }],
  },
];

Deno.test("grantsFor() follows the subject's bindings to their roles, with the RoleBinding's namespace", () => {
  const grants = grantsFor(DOCS, { namespace: "kube-system", name: "ccm" });
  assert.deepEqual(grants.map((g) => [g.source, g.namespace]), [
    ["ClusterRole/nodes", undefined],
    ["Role/kube-system/lease", "kube-system"],
  ]);
  assert.ok(isAllowed(grants, lease("get")));
  assert.ok(
    !isAllowed(grants, { ...lease("get"), namespace: "default" }),
    "a Role applies in its namespace only",
  );
  assert.ok(isAllowed(grants, req("get", "nodes", { name: "any" })));
  assert.throws(
    () => grantsFor([DOCS[3]!], { namespace: "kube-system", name: "ccm" }),
    /refers to a missing ClusterRole/,
  );
});

Deno.test("unusedGrants() lists each verb of each resource that no request used", () => {
  const grants = grantsFor(DOCS, { namespace: "kube-system", name: "ccm" });
  const used = [req("get", "nodes", { name: "n1" }), lease("get"), lease("update")];
  assert.deepEqual(unusedGrants(grants, used), [
    "patch core/nodes cluster-wide (ClusterRole/nodes)",
    "create coordination.k8s.io/leases [ccm] in kube-system (Role/kube-system/lease)",
  ]);
});

Deno.test("deriveRules() puts requests made only in the CCM's namespace in a Role, by name where every request named it", () => {
  const requests = [
    req("list", "nodes"),
    req("watch", "nodes"),
    req("patch", "nodes", { name: "n1" }),
    req("patch", "nodes/status", { name: "n1" }),
    req("create", "events", { namespace: "default" }),
    req("create", "events", { namespace: "kube-system" }),
    lease("get"),
    lease("create", ""),
    lease("update"),
    lease("watch"),
    req("list", "secrets", { namespace: "kube-system" }),
  ];
  const derived = deriveRules(requests, "kube-system");
  assert.deepEqual(derived.cluster, [
    { apiGroups: [""], resources: ["events"], verbs: ["create"] },
    { apiGroups: [""], resources: ["nodes"], verbs: ["list", "patch", "watch"] },
    { apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"] },
  ]);
  assert.deepEqual(derived.namespace, [
    { apiGroups: [""], resources: ["secrets"], verbs: ["list"] },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
    {
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      verbs: ["get", "update", "watch"],
      resourceNames: ["ccm"],
    },
  ]);
  const grants = [
    ...derived.cluster.map((rule) => ({ rule, source: "c" })),
    ...derived.namespace.map((rule) => ({ rule, namespace: "kube-system", source: "r" })),
  ];
  assert.ok(requests.every((r) => isAllowed(grants, r)));
  assert.deepEqual(unusedGrants(grants, requests), []);
});

Deno.test("replaceRuleBlock() rewrites only the marked block, keeping its indentation", () => {
  const text = "rules:\n  # rules:cluster begin\n  - old\n  # rules:cluster end\nnext: 1\n";
  const out = replaceRuleBlock(text, "cluster", [NODES]);
  assert.equal(
    out,
    `rules:\n  # rules:cluster begin\n${renderRules([NODES])}  # rules:cluster end\nnext: 1\n`,
  );
  assert.match(
    renderRules([NODES]),
    /- apiGroups: \[""\]\n {4}resources: \[nodes\]\n {4}verbs: \[get, patch\]/,
  );
  assert.throws(() => replaceRuleBlock(text, "namespace", []), /markers/);
});
