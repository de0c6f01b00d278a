/**
 * deploy/monitoring.yaml: the ServiceMonitor finds the CCM's pods and port, and its RBAC lets Prometheus's
 * ServiceAccount read /metrics and nothing else, as the Kubernetes emulator's SubjectAccessReview decides it.
 */
import assert from "node:assert/strict";
import * as yaml from "js-yaml";
import { startFixture } from "../kube/testdata/fixtures.ts";
import { makeReviewApis } from "../kube/clients.ts";
import { kubeAccessReviewer } from "../kube/reviews.ts";
import { Registry } from "../common/metrics.ts";

type Doc = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string } };

function load(file: string): Doc[] {
  return yaml.loadAll(Deno.readTextFileSync(new URL(`../deploy/${file}`, import.meta.url))) as Doc[];
}

function only(docs: Doc[], kind: string): Doc & Record<string, never> {
  const found = docs.filter((d) => d.kind === kind);
  assert.equal(found.length, 1, kind);
  return found[0] as Doc & Record<string, never>;
}

Deno.test("deploy/monitoring.yaml: the ServiceMonitor scrapes the DaemonSet's https port at /metrics", () => {
  const monitoring = load("monitoring.yaml");
  const ds = only(load("ccm.yaml"), "DaemonSet") as unknown as {
    metadata: { namespace: string };
    spec: {
      template: {
        metadata: { labels: Record<string, string> };
        spec: { containers: { ports: { name: string; containerPort: number }[] }[] };
      };
    };
  };
  const service = only(monitoring, "Service") as unknown as {
    metadata: { namespace: string; labels: Record<string, string> };
    spec: { selector: Record<string, string>; ports: { name: string; port: number; targetPort: string }[] };
  };
  const monitor = only(monitoring, "ServiceMonitor") as unknown as {
    spec: {
      selector: { matchLabels: Record<string, string> };
      namespaceSelector: { matchNames: string[] };
      endpoints: { port: string; scheme: string; path: string; bearerTokenFile: string }[];
    };
  };
  assert.equal(service.metadata.namespace, ds.metadata.namespace);
  for (const [k, v] of Object.entries(service.spec.selector)) {
    assert.equal(ds.spec.template.metadata.labels[k], v, `pod label ${k}`);
  }
  const containerPorts = ds.spec.template.spec.containers.flatMap((c) => c.ports);
  const [port] = service.spec.ports;
  assert.ok(port && containerPorts.some((p) => p.name === port.targetPort && p.containerPort === port.port));
  for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) {
    assert.equal(service.metadata.labels[k], v, `Service label ${k}`);
  }
  assert.deepEqual(monitor.spec.namespaceSelector.matchNames, [service.metadata.namespace]);
  const [endpoint] = monitor.spec.endpoints;
  assert.deepEqual([endpoint?.port, endpoint?.scheme, endpoint?.path], [port.name, "https", "/metrics"]);
  assert.match(endpoint?.bearerTokenFile ?? "", /serviceaccount\/token$/, "Prometheus sends its token");
});

Deno.test("deploy/monitoring.yaml: Prometheus's ServiceAccount may get /metrics, and not /plan", async () => {
  await using fixture = await startFixture();
  const docs = load("monitoring.yaml");
  const resources: Record<string, string> = {
    ClusterRole: "rbac.authorization.k8s.io/clusterroles",
    ClusterRoleBinding: "rbac.authorization.k8s.io/clusterrolebindings",
    Service: "services",
  };
  for (const doc of docs) {
    const resource = resources[doc.kind];
    if (resource) fixture.kube.store.create(resource, doc, { namespace: doc.metadata.namespace });
  }
  const binding = only(docs, "ClusterRoleBinding") as unknown as {
    subjects: { name: string; namespace: string }[];
  };
  const sa = binding.subjects[0];
  assert.ok(sa);
  const kc = fixture.clients.kc;
  const access = kubeAccessReviewer(makeReviewApis({ authn: kc, authz: kc }, { metrics: new Registry() }));
  const prometheus = {
    username: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    uid: "",
    groups: ["system:serviceaccounts", `system:serviceaccounts:${sa.namespace}`, "system:authenticated"],
    extra: {},
  };
  assert.equal(await access.allowed(prometheus, { path: "/metrics", verb: "get" }), true);
  assert.equal(await access.allowed(prometheus, { path: "/plan", verb: "get" }), false);
  assert.equal(
    await access.allowed({ ...prometheus, username: "system:serviceaccount:default:x" }, {
      path: "/metrics",
      verb: "get",
    }),
    false,
  );
});
