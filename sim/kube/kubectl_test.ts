import assert from "node:assert/strict";
import { hasKubectl, openKubectl } from "./testdata/kubectl_support.ts";
import { startKubeSim } from "./server.ts";
import { node } from "./testdata/test_support.ts";

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  type: LoadBalancer
  ports:
  - name: http
    port: PORT
    targetPort: 8080
`;

Deno.test({
  name: "startKubeSim({ tls: true }) serves kubectl get, describe, apply and delete",
  ignore: !hasKubectl(),
  async fn() {
    // kubectl sends bearer tokens only over HTTPS, so this is the TLS mode's real client test.
    await using kube = await startKubeSim({ tls: true });
    await using kubectl = await openKubectl(kube);
    kube.store.create(
      "nodes",
      node({ name: "n1", providerID: "linode://11", taints: [{ key: "k", effect: "NoSchedule" }] }),
    );
    const get = await kubectl.run(["get", "nodes"]);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /^NAME\s+/);
    assert.match(get.stdout, /\nn1\s+/);

    const describe = await kubectl.run(["describe", "node", "n1"]);
    assert.equal(describe.code, 0, describe.stderr);
    assert.match(describe.stdout, /ProviderID:\s+linode:\/\/11/);
    assert.match(describe.stdout, /Taints:\s+k:NoSchedule/);

    const created = await kubectl.run(["apply", "-f", "-"], SERVICE.replace("PORT", "80"));
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /service\/web created/);
    const first = kube.store.get("services", "web", "default");
    assert.ok(first?.metadata.annotations?.["kubectl.kubernetes.io/last-applied-configuration"]);

    const configured = await kubectl.run(["apply", "-f", "-"], SERVICE.replace("PORT", "81"));
    assert.equal(configured.code, 0, configured.stderr);
    assert.match(configured.stdout, /service\/web configured/);
    assert.equal(configured.stderr, "");
    const ports = (kube.store.get("services", "web", "default")?.spec as { ports: { port: number }[] }).ports;
    assert.deepEqual(ports.map((p) => p.port), [81]);
    assert.equal(kube.calls.count("PATCH /api/v1/namespaces/{namespace}/services/{name}"), 1);

    const all = await kubectl.run(["get", "svc", "-A"]);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /default\s+web\s+/);

    const deleted = await kubectl.run(["delete", "service", "web", "--wait=false"]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /service "web" deleted/);
    assert.equal(kube.store.get("services", "web", "default"), undefined);

    const missing = await kubectl.run(["get", "node", "ghost"]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /nodes "ghost" not found/);
  },
});
