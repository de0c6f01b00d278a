import assert from "node:assert/strict";
import { captureLogs } from "../common/log.ts";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { SERVICE_RESYNC_MS } from "../controllers/service/controller.ts";
import { certificateFingerprint, SECRET_REFRESH_MS } from "../controllers/service/tls/secrets.ts";
import { generateSelfSignedCert } from "../server/tls.ts";
import { type ServiceWorld, startServiceWorld } from "./service_fixture.ts";

const HTTPS_443 = {
  [annotationKey("port-443")]: JSON.stringify({ protocol: "https", "tls-secret-name": "web-tls" }),
};

/** The fingerprint the API reports for the certificate on the Service's port 443 (the certificate is redacted). */
function certOn(world: ServiceWorld): string | undefined {
  const config = world.nodeBalancerOf("web")?.configs.find((c) => c.port === 443);
  return config?.protocol === "https" ? config.ssl_fingerprint : undefined;
}

function putSecret(world: ServiceWorld, pem: { certPem: string; keyPem: string }): void {
  const data = { "tls.crt": btoa(pem.certPem), "tls.key": btoa(pem.keyPem) };
  if (world.kube.store.get("secrets", "web-tls", "default")) {
    world.kube.store.patch("secrets", "web-tls", { data }, { type: "merge", namespace: "default" });
  } else world.addSecret("web-tls", { "tls.crt": pem.certPem, "tls.key": pem.keyPem });
}

Deno.test("service serves HTTPS ports with the Secret's certificate and follows its rotation within a refresh period", async () => {
  const logs = await captureLogs("debug");
  const first = await generateSelfSignedCert({ hosts: ["web.example.com"] });
  const second = await generateSelfSignedCert({ hosts: ["web.example.com"] });
  // The node controller's address refresh lists Linodes every 5 min: set apart, the whole CCM must be quiet.
  await using world = await startServiceWorld({ flags: ["--node-status-update-frequency=24h"] });
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("web", { ports: [{ port: 443 }], annotations: HTTPS_443 });
  await world.settle();
  assert.match(world.events("SyncLoadBalancerFailed", "web")[0]?.message ?? "", /web-tls/);
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 0);

  // One refresh period (not a retry, whose backoff is longer, nor a resync) brings each certificate.
  putSecret(world, first);
  await world.tick(SECRET_REFRESH_MS, SECRET_REFRESH_MS);
  assert.equal(certOn(world), certificateFingerprint(first.certPem), "the first certificate");
  putSecret(world, second);
  await world.tick(SECRET_REFRESH_MS, SECRET_REFRESH_MS);
  assert.equal(certOn(world), certificateFingerprint(second.certPem), "the rotated one");
  assert.equal(world.nodeBalancers().length, 1);
  const syncs = () =>
    world.metrics.counter("ccm_reconciles_total", "", ["controller", "result"]).get({
      controller: "service",
      result: "success",
    });
  world.linode.calls.reset();
  world.kube.calls.reset();
  const from = syncs();
  await world.tick(3 * SERVICE_RESYNC_MS, 10_000);
  assert.ok(syncs() >= from + 3, `three resyncs: ${syncs() - from}`);
  assert.equal(
    world.linode.calls.total(),
    0,
    "the certificate on the NodeBalancer is known by its fingerprint",
  );
  const gets = world.kube.calls.count("GET /api/v1/namespaces/{namespace}/secrets/{name}");
  assert.ok(gets <= (3 * SERVICE_RESYNC_MS) / SECRET_REFRESH_MS + 1, `one get per refresh period: ${gets}`);
  const secretCalls = world.kube.calls.log.filter((c) => c.key.includes("secrets")).map((c) => c.key);
  assert.deepEqual(
    [...new Set(secretCalls)],
    ["GET /api/v1/namespaces/{namespace}/secrets/{name}"],
    "never listed or watched",
  );

  const keys = [first.keyPem, second.keyPem].map((k) => k.split("\n")[1] ?? k);
  const events = (world.kube.store.list("events") as { message?: string }[]).map((e) => e.message ?? "").join(
    "\n",
  );
  for (const key of keys) {
    assert.ok(!events.includes(key), "no key material in Events");
    assert.ok(!logs.text().includes(key), "no key material in logs");
  }
});
