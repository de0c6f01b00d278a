/**
 * The switch from the Go CCM under RBAC: the Kubernetes emulator enforces RBAC, this CCM authenticates as the
 * Go CCM's ServiceAccount, and that ServiceAccount holds the Go CCM chart's ClusterRole as its chart renders it
 * (tests/testdata/go_ccm_chart_rbac.yaml) plus exactly what docs/migration.md step 5 tells an operator to add
 * (its `yaml` block, applied as written). The switch must then work without a single 403, and without one of
 * those additions it must fail loudly, naming the missing permission, while destroying nothing.
 */
import assert from "node:assert/strict";
import type { V1Lease } from "@kubernetes/client-node";
import * as yaml from "js-yaml";
import { captureLogs } from "../common/log.ts";
import { type AccessRequest, grantsFor, isAllowed } from "../deploy/rbac.ts";
import { CCM_LEASE } from "../sim/mod.ts";
import type { KubeSim } from "../sim/kube/server.ts";
import { backendIds, startSwitch, type Switch } from "./go_ccm_fixture.ts";
import { freePort } from "./process.ts";

const CHART_RBAC = new URL("./testdata/go_ccm_chart_rbac.yaml", import.meta.url);
const MIGRATION = new URL("../docs/migration.md", import.meta.url);
const SERVICE_ACCOUNT = "kube-system/ccm-linode";
const MANIFEST = new URL("../deploy/ccm.yaml", import.meta.url);

type Manifest = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string } };

function documents(text: string): Manifest[] {
  return (yaml.loadAll(text) as unknown[]).filter((d): d is Manifest =>
    typeof d === "object" && d !== null && "kind" in d
  );
}

/** The RBAC objects of docs/migration.md step 5: its one `yaml` block, as an operator would apply it. */
function guideAdditions(): Manifest[] {
  const text = Deno.readTextFileSync(MIGRATION);
  const steps = text.slice(text.indexOf("\n## Steps\n"));
  const step = steps.slice(steps.indexOf("\n5. **"), steps.indexOf("\n6. **"));
  const block = /```yaml\n([\s\S]*?)```/.exec(step.replace(/^ {3}/gm, ""))?.[1];
  if (block === undefined) throw new Error("docs/migration.md step 5 has no yaml block of RBAC additions");
  return documents(block);
}

const STORE_KEYS: Readonly<Record<string, string>> = {
  ServiceAccount: "serviceaccounts",
  ClusterRole: "rbac.authorization.k8s.io/clusterroles",
  ClusterRoleBinding: "rbac.authorization.k8s.io/clusterrolebindings",
  Role: "rbac.authorization.k8s.io/roles",
  RoleBinding: "rbac.authorization.k8s.io/rolebindings",
};

/** Creates each manifest in the emulator, as `kubectl apply` of a new object would. */
function apply(kube: KubeSim, manifests: readonly Manifest[]): void {
  for (const m of manifests) {
    const key = STORE_KEYS[m.kind];
    if (!key) throw new TypeError(`Cannot apply a ${m.kind} here`);
    kube.store.create(key, m);
  }
}

/** `manifests` with `verb` taken off every rule on `resource` (a rule left without verbs dropped). */
function without(manifests: readonly Manifest[], verb: string, resource: string): Manifest[] {
  type Rule = { resources?: string[]; verbs?: string[] };
  return manifests.map((m) => {
    if (!Array.isArray(m.rules)) return m;
    const rules = (m.rules as Rule[])
      .map((r) => r.resources?.includes(resource) ? { ...r, verbs: r.verbs?.filter((v) => v !== verb) } : r)
      .filter((r) => (r.verbs?.length ?? 0) > 0);
    return { ...m, rules };
  });
}

/** The scraper of deploy/monitoring.yaml: `get` on `/metrics`, its own ServiceAccount token. */
function addScraper(kube: KubeSim): string {
  const token = kube.identities.addServiceAccount("monitoring", "prometheus");
  apply(kube, [
    {
      kind: "ClusterRole",
      metadata: { name: "ccm-metrics-reader" },
      rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
    },
    {
      kind: "ClusterRoleBinding",
      metadata: { name: "prometheus-ccm-metrics" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ccm-metrics-reader" },
      subjects: [{ kind: "ServiceAccount", name: "prometheus", namespace: "monitoring" }],
    },
  ]);
  return token;
}

async function scrape(sw: Switch, token: string): Promise<{ status: number; body: string }> {
  const server = sw.ccm.ccm.server;
  if (!server) throw new Error("The CCM serves nothing");
  using client = Deno.createHttpClient({ caCerts: [server.certPem] });
  const res = await fetch(`${server.url}/metrics`, { client, headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.text() };
}

/**
 * The Go CCM's world under enforced RBAC: its chart's objects plus `additions`, this CCM as its ServiceAccount
 * serving `/metrics`, with leader election (the Go CCM's Lease to take over) when `leaderElect`; `chart` may
 * change the chart's objects first.
 */
async function switchUnderRbac(
  additions: readonly Manifest[],
  leaderElect: boolean,
  chart: (docs: Manifest[]) => Manifest[] = (docs) => docs,
): Promise<Switch> {
  const sw = await startSwitch({
    serviceAccount: SERVICE_ACCOUNT,
    drift: { uninitialisedNode: true },
    flags: [`--leader-elect=${leaderElect}`, `--secure-port=${freePort()}`, "--bind-address=127.0.0.1"],
  });
  apply(sw.go.kube, [...chart(documents(Deno.readTextFileSync(CHART_RBAC))), ...additions]);
  sw.go.kube.enforceRbac = true;
  return sw;
}

/** Stops the Go CCM's renewals and moves time until this CCM holds the Lease. */
async function takeOver(sw: Switch): Promise<void> {
  const lease = () =>
    sw.go.kube.store.get("leases", CCM_LEASE.name, CCM_LEASE.namespace) as unknown as V1Lease | undefined;
  sw.go.lease.stop();
  const identity = sw.ccm.ccm.identity;
  await sw.ccm.advanceUntil(() => lease()?.spec?.holderIdentity === identity, {
    what: "the Lease taken over",
    stepMs: 1_000,
  });
}

function forbidden(kube: KubeSim): string[] {
  return kube.audit.entries.filter((e) => e.status === 403).map((e) =>
    `${e.verb} ${e.apiGroup || "core"}/${e.subresource ? `${e.resource}/${e.subresource}` : e.resource}`
  );
}

Deno.test("runCcm() as the Go CCM's ServiceAccount, with its chart's ClusterRole and the guide's additions: the switch works with no 403", async () => {
  await using sw = await switchUnderRbac(guideAdditions(), true);
  const { go, ccm } = sw;
  const uninitialised = go.drift.uninitialisedNode ?? "";
  const scraper = addScraper(go.kube);
  await ccm.start();
  await takeOver(sw);
  await ccm.advanceUntil(() => sw.adopted(), { what: "every Go CCM NodeBalancer adopted", stepMs: 1_000 });
  const node = go.nodes.find((n) => n.name === uninitialised);
  await ccm.advanceUntil(
    () =>
      ccm.node(uninitialised)?.spec?.providerID !== undefined &&
      go.linode.world.ipRanges(node?.linodeId ?? 0).includes(node?.podCidr ?? "?"),
    { what: "the uninitialised Node initialised and routed", stepMs: 1_000 },
  );
  const scraped = await scrape(sw, scraper);
  await ccm.tick(20_000, 1_000);

  assert.ok(ccm.ccm.fence.leading, "still leading");
  assert.equal(scraped.status, 200, "/metrics served to the authorised scraper");
  assert.deepEqual(forbidden(go.kube), [], "no request of the CCM was refused");
  assert.doesNotMatch(scraped.body, /^ccm_kube_forbidden_total\{/m);
  assert.deepEqual(ccm.events("MissingPermission"), []);
  const now = backendIds(sw.nodeBalancers());
  for (const [id, ports] of Object.entries(backendIds(sw.before))) {
    for (const [port, byAddress] of Object.entries(ports)) {
      for (const [address, nodeId] of Object.entries(byAddress)) {
        assert.equal(
          now[Number(id)]?.[Number(port)]?.[address],
          nodeId,
          `${id}:${port} ${address} kept its id`,
        );
      }
    }
  }
  assert.equal(go.linode.calls.count("POST /v4/nodebalancers"), 0);
  assert.equal(go.linode.calls.count("DELETE /v4/nodebalancers/{id}"), 0);
});

Deno.test("runCcm() as the Go CCM's ServiceAccount without the guide's get on namespaces: says so loudly, destroys nothing, does not loop", async () => {
  const logs = await captureLogs("info");
  const additions = guideAdditions();
  // Without leader election: the fake clock then moves in long steps (a Lease renews every 2 s).
  await using sw = await switchUnderRbac(without(additions, "get", "namespaces"), false);
  const { go, ccm } = sw;
  const scraper = addScraper(go.kube);
  const seen = sw.nodeBalancers();
  const statuses = go.services.map((s) => sw.service(s.name)?.status);
  await ccm.start();
  const identityReads = () => go.kube.calls.count("GET /api/v1/namespaces/{name}");
  const readsAtStart = identityReads();
  // Ten minutes: two Service resyncs, twenty orphan checks' worth of chances to loop.
  await ccm.tick(600_000, 10_000);

  const [event, ...more] = ccm.events("MissingPermission");
  assert.deepEqual(more, [], "one Event for the one missing permission");
  assert.equal(event?.type, "Warning");
  assert.match(event?.message ?? "", /^Missing RBAC permission: get on namespaces in API group ""/);
  assert.match(
    event?.message ?? "",
    /add \{apiGroups: \[""\], resources: \["namespaces"\], verbs: \["get"\]\}/,
  );
  const about = `${event?.involvedObject.kind}/${event?.involvedObject.name}`;
  assert.ok(["Namespace/kube-system", "Service/web", "Service/api"].includes(about), about);
  const scraped = await scrape(sw, scraper);
  assert.equal(scraped.status, 200);
  assert.match(scraped.body, /^ccm_kube_forbidden_total\{verb="get",resource="namespaces"\} [1-9]/m);
  const errors = logs.lines.map((l) => JSON.parse(l)).filter((r) => r.level === "ERROR");
  assert.deepEqual(errors.map((r) => [r.verb, r.resource, r.group]), [["get", "namespaces", ""]]);
  assert.deepEqual([...new Set(forbidden(go.kube))], ["get core/namespaces"], "nothing else refused");
  assert.ok(!logs.text().includes(go.linode.token), "no token in the logs");
  // Each Service tried again at each of the two resyncs (5 min), not on a backoff (which makes 13 reads here).
  const reads = identityReads() - readsAtStart;
  assert.ok(reads <= 2 * go.services.length + 2, `${reads} reads of the Namespace in 10 minutes`);

  assert.deepEqual(sw.nodeBalancers(), seen, "NodeBalancers untouched");
  assert.deepEqual(sw.linodeWrites().filter((k) => k.includes("nodebalancers")), []);
  assert.deepEqual(go.services.map((s) => sw.service(s.name)?.status), statuses, "Service status kept");
  for (const svc of go.services) assert.ok(sw.service(svc.name)?.metadata?.finalizers?.length);

  // Granted, the Services are synced at the next resync and the permission is reported as granted.
  apply(
    go.kube,
    additions.filter((m) => m.kind === "ClusterRole").map((m) => ({ ...m, metadata: { name: "fix" } })),
  );
  apply(go.kube, [{
    kind: "ClusterRoleBinding",
    metadata: { name: "fix" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "fix" },
    subjects: [{ kind: "ServiceAccount", name: "ccm-linode", namespace: "kube-system" }],
  }]);
  await ccm.advanceUntil(() => sw.adopted(), { what: "adopted once granted", stepMs: 10_000 });
  assert.match(logs.text(), /permission \\"get\\" on \\"namespaces\\" is granted now/);
});

Deno.test("runCcm() as a ServiceAccount that may not patch Nodes: the MissingPermission Event is on the Node being initialised", async () => {
  await using sw = await switchUnderRbac(guideAdditions(), false, (docs) => without(docs, "patch", "nodes"));
  const { go, ccm } = sw;
  const name = go.drift.uninitialisedNode ?? "";
  await ccm.start();
  await ccm.tick(240_000, 10_000);

  const events = ccm.events("MissingPermission");
  assert.deepEqual(events.map((e) => `${e.involvedObject.kind}/${e.involvedObject.name}`), [`Node/${name}`]);
  assert.match(events[0]?.message ?? "", /^Missing RBAC permission: patch on nodes in API group ""/);
  assert.ok(ccm.node(name)?.spec?.taints?.length, "still uninitialised");
  const patches = go.kube.audit.entries.filter((e) =>
    e.verb === "patch" && e.resource === "nodes" && !e.subresource
  );
  // Once, and once more after the route controller's status patch changed the Node: not on a backoff.
  assert.ok(patches.length <= 2, `${patches.length} patches in 4 minutes`);
  assert.equal(
    ccm.metrics.counter("ccm_kube_forbidden_total", "", ["verb", "resource"]).get({
      verb: "patch",
      resource: "nodes",
    }),
    patches.length,
  );
});

Deno.test("the Go chart's ClusterRole plus the guide's additions allow every permission of deploy/ccm.yaml", () => {
  const [namespace = "", name = ""] = SERVICE_ACCOUNT.split("/");
  const subject = { namespace, name };
  const granted = grantsFor([...documents(Deno.readTextFileSync(CHART_RBAC)), ...guideAdditions()], subject);
  const needed = grantsFor(documents(Deno.readTextFileSync(MANIFEST)), subject);
  const requests: AccessRequest[] = needed.flatMap((g) =>
    g.rule.apiGroups.flatMap((apiGroup) =>
      g.rule.resources.flatMap((full) =>
        g.rule.verbs.flatMap((verb) =>
          (g.rule.resourceNames ?? [""]).map((objectName) => {
            const [resource = "", subresource = ""] = full.split("/");
            return { verb, apiGroup, resource, subresource, namespace: g.namespace ?? "", name: objectName };
          })
        )
      )
    )
  );
  assert.ok(requests.length > 10);
  const denied = requests.filter((r) => !isAllowed(granted, r));
  assert.deepEqual(denied, [], "the guide must add what the CCM's traffic needs beyond the chart");
});
