/**
 * The RBAC of deploy/ccm.yaml against the CCM's real traffic: every request of the scripted scenario
 * (tests/rbac_traffic.ts, every controller through runCcm) must be allowed, and every permission granted
 * must have been used. The Lease permission is a Role in the CCM's namespace, limited by name where RBAC can.
 */
import assert from "node:assert/strict";
import * as yaml from "js-yaml";
import {
  type AccessRequest,
  deriveRules,
  grantsFor,
  isAllowed,
  renderRules,
  type Subject,
  unusedGrants,
} from "../deploy/rbac.ts";
import { FLAG_INDEX } from "../config/flag_table.ts";
import { CCM_NAMESPACE, runTrafficScenario } from "./rbac_traffic.ts";

const MANIFEST = new URL("../deploy/ccm.yaml", import.meta.url);

/** Non-resource paths every authenticated client may read (the system:discovery and public-info roles). */
const DISCOVERY = [
  /^\/api(\/v1)?$/,
  /^\/apis(\/[^/]+(\/[^/]+)?)?$/,
  /^\/version$/,
  /^\/openapi\/v[23](\/.*)?$/,
];

function manifests(): Record<string, unknown>[] {
  return (yaml.loadAll(Deno.readTextFileSync(MANIFEST)) as unknown[]).filter((
    d,
  ): d is Record<string, unknown> => typeof d === "object" && d !== null);
}

/** The ServiceAccount the DaemonSet runs as. */
function ccmSubject(docs: readonly Record<string, unknown>[]): Subject {
  const ds = docs.find((d) => d.kind === "DaemonSet") as {
    metadata: { namespace: string };
    spec: { template: { spec: { serviceAccountName: string } } };
  };
  return { namespace: ds.metadata.namespace, name: ds.spec.template.spec.serviceAccountName };
}

function describe(r: AccessRequest): string {
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  return `${r.verb} ${r.apiGroup || "core"}/${resource}${r.name ? ` ${r.name}` : ""} in "${r.namespace}"`;
}

Deno.test("deploy/ccm.yaml grants exactly what the CCM's traffic uses: no request denied, no permission unused", async (t) => {
  const docs = manifests();
  const grants = grantsFor(docs, ccmSubject(docs));
  const traffic = await runTrafficScenario();
  const requests = traffic.requests.filter((r) => r.resourceRequest);
  const derived = deriveRules(requests, CCM_NAMESPACE);
  const fix = `\nRules from this traffic (deno task rbac --write puts them in place):\nClusterRole:\n` +
    `${renderRules(derived.cluster)}Role in ${CCM_NAMESPACE}:\n${renderRules(derived.namespace)}`;
  assert.ok(requests.length > 0, "the scenario made requests");
  await t.step("every request the CCM made is allowed", () => {
    const denied = requests.filter((r) => !isAllowed(grants, r)).map(describe);
    assert.deepEqual(denied, [], `denied: ${denied.join("; ")}${fix}`);
  });
  await t.step("every permission granted was used", () => {
    const unused = unusedGrants(grants, requests);
    assert.deepEqual(unused, [], `never used: ${unused.join("; ")}${fix}`);
  });
  await t.step("non-resource requests are only discovery, which every authenticated client may read", () => {
    const paths = traffic.requests.filter((r) => !r.resourceRequest).map((r) => r.path);
    assert.deepEqual(paths.filter((p) => !DISCOVERY.some((d) => d.test(p))), []);
  });
});

Deno.test("deploy/ccm.yaml: the Lease is a Role in the CCM's namespace, every verb but create limited to its name", () => {
  const docs = manifests();
  const subject = ccmSubject(docs);
  const grants = grantsFor(docs, subject);
  const leaseGrants = grants.filter((g) => g.rule.resources.includes("leases"));
  const namespace = String(FLAG_INDEX.get("leader-elect-resource-namespace")?.def);
  const name = String(FLAG_INDEX.get("leader-elect-resource-name")?.def);
  assert.equal(namespace, subject.namespace, "the Lease lives in the CCM's own namespace");
  assert.ok(leaseGrants.length > 0);
  for (const g of leaseGrants) {
    assert.equal(g.namespace, namespace, `${g.source} is not limited to ${namespace}`);
    const unnamed = g.rule.verbs.filter((v) => v !== "create");
    if (unnamed.length) assert.deepEqual(g.rule.resourceNames, [name], `${unnamed} on any Lease`);
  }
  const lease = (verb: string, leaseName: string, ns = namespace): AccessRequest => ({
    verb,
    apiGroup: "coordination.k8s.io",
    resource: "leases",
    subresource: "",
    namespace: ns,
    name: leaseName,
  });
  assert.ok(isAllowed(grants, lease("update", name)));
  assert.ok(!isAllowed(grants, lease("update", "kube-scheduler")), "another Lease in the namespace");
  assert.ok(!isAllowed(grants, lease("get", name, "default")), "the same name in another namespace");
  assert.ok(!isAllowed(grants, lease("list", "")), "listing Leases");
});

Deno.test("deploy/ccm.yaml: no wildcard, and every binding names the DaemonSet's ServiceAccount", () => {
  const docs = manifests();
  const subject = ccmSubject(docs);
  const sa = docs.find((d) => d.kind === "ServiceAccount") as {
    metadata: { name: string; namespace: string };
  };
  assert.deepEqual({ namespace: sa.metadata.namespace, name: sa.metadata.name }, subject);
  for (const g of grantsFor(docs, subject)) {
    for (const list of [g.rule.apiGroups, g.rule.resources, g.rule.verbs]) {
      assert.ok(!list.includes("*"), `${g.source} has a wildcard`);
    }
  }
  const bindings = docs.filter((d) => d.kind === "ClusterRoleBinding" || d.kind === "RoleBinding");
  assert.ok(bindings.length >= 2);
  for (const b of bindings) {
    assert.deepEqual((b as { subjects: unknown[] }).subjects, [{ kind: "ServiceAccount", ...subject }]);
  }
});

Deno.test("deploy/ccm.yaml's ClusterRole comment calls a resource watched only where the rules grant watch", () => {
  const text = Deno.readTextFileSync(MANIFEST);
  const end = text.indexOf("kind: ClusterRole\n");
  const comment = text.slice(0, end).split("---\n").pop()!.split("\n").filter((l) => l.startsWith("#"))
    .map((l) => l.slice(2)).join(" ");
  const role = manifests().find((d) => d.kind === "ClusterRole") as {
    rules: { resources: string[]; verbs: string[] }[];
  };
  // Each clause ("; "-separated) opens with a resource and what the CCM does with it, in brackets.
  const described = [...comment.matchAll(/(?:: |; )(?:LoadBalancer )?([A-Z][a-z]+s) \(([^)]*)\)/g)];
  assert.ok(described.length >= 3, comment);
  for (const [, kind, what] of described) {
    const verbs = role.rules.filter((r) => r.resources.includes(kind!.toLowerCase())).flatMap((r) => r.verbs);
    assert.ok(verbs.length > 0, `${kind}: no rule`);
    const watched = /\bwatched\b/.test(what!.replace(/never [a-z ]*watched/, ""));
    assert.equal(watched, verbs.includes("watch"), `${kind} (${what}) against verbs ${verbs}`);
  }
  assert.match(comment, /Secrets \([^)]*read by name with get, never listed or watched/);
});
