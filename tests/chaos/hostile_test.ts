/**
 * Hostile input: random annotation values (seeded; the seed is printed on failure), malformed TLS Secrets,
 * odd providerIDs, labels and annotations at the apiserver's limits. The CCM answers with Warning Events,
 * keeps running (a Node added afterwards is still initialised and routed) and destroys nothing.
 */
import assert from "node:assert/strict";
import type { CoreV1Event, V1Service } from "@kubernetes/client-node";
import { annotationKey } from "../../controllers/service/annotations/table.ts";
import { certificateFingerprint } from "../../controllers/service/tls/secrets.ts";
import { generateSelfSignedCert } from "../../server/tls.ts";
import { kubeletNode, registerNode, setNodeReady } from "../../sim/kubelet.ts";
import { hostileAnnotations, hugeLabels, malformedTlsData, ODD_PROVIDER_IDS } from "./hostile_values.ts";
import { SafetyMonitor } from "./safety.ts";
import { newSeed, scaled, withSeed } from "./scale.ts";
import { type ChaosWorld, startChaosWorld } from "./world.ts";

function warningsFor(w: ChaosWorld, reason: string, name: string): CoreV1Event[] {
  return w.events(reason).filter((e) => e.involvedObject.name === name && e.type === "Warning");
}

/** How many times Warnings of `reason` were emitted for `name` (an Event repeated counts each time). */
function warningCount(w: ChaosWorld, reason: string, name: string): number {
  return warningsFor(w, reason, name).reduce((n, e) => n + (e.count ?? 1), 0);
}

function createService(w: ChaosWorld, name: string, port: number, annotations: Record<string, string>): void {
  w.kube.store.create("services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", annotations },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ name: "p", port, protocol: "TCP" }] },
  });
}

/** Proof the CCM still runs: a Node added now is initialised and routed. */
async function assertStillRunning(w: ChaosWorld, name: string): Promise<void> {
  w.addNode(name);
  await w.advanceUntil(() => {
    const node = w.node(name);
    const id = w.linodeIdOf(name);
    return node?.spec?.providerID === `linode://${id}` &&
      w.linode.world.ipRanges(id).includes(node.spec.podCIDR ?? "none");
  }, { what: `${name} initialised and routed`, stepMs: 1_000 });
}

Deno.test("runCcm() given random annotation values warns, keeps running, and destroys nothing", async () => {
  await withSeed(newSeed(), async (random) => {
    await using w = await startChaosWorld({ nodes: 3, services: 2 });
    using safety = new SafetyMonitor(w);
    await w.start();
    await w.converge();
    safety.baseline();
    for (const s of w.services()) {
      const port = s.spec?.ports?.[0]?.port ?? 80;
      const annotations = hostileAnnotations(random, port);
      w.kube.store.patch("services", s.metadata?.name ?? "", { metadata: { annotations } }, {
        type: "merge",
        namespace: "default",
      });
    }
    const fresh = Array.from({ length: scaled(6, 40) }, (_, i) => `hostile-${i}`);
    fresh.forEach((name, i) => createService(w, name, 8000 + i, hostileAnnotations(random, 8000 + i)));
    await w.tick(60_000, 5_000);
    for (const s of w.services()) {
      const name = s.metadata?.name ?? "";
      const served = (s.status?.loadBalancer?.ingress?.length ?? 0) > 0;
      const warned = warningsFor(w, "SyncLoadBalancerFailed", name);
      const annotations = JSON.stringify(s.metadata?.annotations).slice(0, 400);
      assert.ok(served || warned.length > 0, `${name} neither served nor warned about: ${annotations}`);
      for (const e of warned) {
        assert.ok((e.message ?? "").length < 4096, `a Warning of ${e.message?.length} bytes`);
      }
      if (fresh.includes(name) && !served) assert.equal(w.nodeBalancerOf(s), undefined);
    }
    await assertStillRunning(w, "after-hostile");
    safety.assertClean();
  });
});

Deno.test("runCcm() given malformed TLS Secrets warns each time and keeps the certificate it has", async () => {
  const good = await generateSelfSignedCert({ hosts: ["web.example.com"] });
  const other = await generateSelfSignedCert({ hosts: ["other.example.com"] });
  const goodData = { "tls.crt": btoa(good.certPem), "tls.key": btoa(good.keyPem) };
  await using w = await startChaosWorld({ nodes: 2, services: 1 });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  const https = JSON.stringify({ protocol: "https", "tls-secret-name": "web-tls" });
  createService(w, "tls-web", 443, { [annotationKey("port-443")]: https });
  const putSecret = (data: Record<string, string>) => {
    const secret = { metadata: { name: "web-tls", namespace: "default" }, type: "Opaque", data };
    if (w.kube.store.get("secrets", "web-tls", "default")) {
      w.kube.store.update("secrets", secret, { namespace: "default" });
    } else w.kube.store.create("secrets", secret);
  };
  const warnings = () =>
    warningCount(w, "SyncLoadBalancerFailed", "tls-web") + warningCount(w, "InvalidTLSSecret", "tls-web");
  // Each broken Secret after a good one (a rotation gone wrong), so every one is news.
  const tryAll = async (served: boolean) => {
    for (const bad of malformedTlsData(good, other)) {
      if (served) {
        putSecret(goodData);
        await w.tick(10_000, 5_000);
      }
      const before = warnings();
      putSecret(bad.data);
      if (served && bad.quietWhenServed) {
        await w.tick(30_000, 5_000);
        continue;
      }
      await w.advanceUntil(() => warnings() > before, {
        what: `a Warning for the ${bad.name} Secret`,
        stepMs: 5_000,
      });
    }
  };
  await tryAll(false);
  const tlsWeb = () => w.services().find((s: V1Service) => s.metadata?.name === "tls-web") ?? {};
  assert.equal(w.nodeBalancerOf(tlsWeb()), undefined, "no NodeBalancer from a broken Secret");
  putSecret(goodData);
  await w.converge();
  safety.baseline();
  const fingerprint = () => w.nodeBalancerOf(tlsWeb())?.configs.find((c) => c.port === 443)?.ssl_fingerprint;
  assert.equal(fingerprint(), certificateFingerprint(good.certPem));
  await tryAll(true);
  assert.equal(fingerprint(), certificateFingerprint(good.certPem), "the served certificate stays");
  const leaked = w.kube.store.list("events").filter((e) => JSON.stringify(e).includes("PRIVATE KEY"));
  assert.deepEqual(leaked, [], "no key material in Events");
  safety.assertClean();
});

Deno.test("runCcm() given Nodes with odd providerIDs warns, initialises none of them, and deletes none", async () => {
  await using w = await startChaosWorld({ nodes: 2, services: 1 });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  safety.baseline();
  const odd = ODD_PROVIDER_IDS.map((providerID, i) => ({ name: `odd-${i}`, providerID }));
  for (const [i, { name, providerID }] of odd.entries()) {
    registerNode(w.kube, kubeletNode(name, { providerID, ready: i % 2 === 0 }));
  }
  await w.tick(60_000, 5_000);
  for (const { name, providerID } of odd) {
    const node = w.node(name);
    assert.ok(node, `${name} (${providerID}) still exists`);
    assert.equal(node.spec?.providerID, providerID, `${name} keeps its providerID`);
    assert.ok(
      (node.spec?.taints ?? []).some((t) => t.key === "node.cloudprovider.kubernetes.io/uninitialized"),
      `${name} (${providerID}) was not initialised`,
    );
  }
  // A `linode://` providerID the CCM cannot read gets a Warning; another cloud's is that cloud's, left alone.
  const ours = odd.filter(({ providerID }) => providerID.startsWith("linode://"));
  for (const { name, providerID } of ours) {
    const warned = w.events("InvalidProviderID").some((e) => e.involvedObject.name === name);
    assert.ok(warned, `a Warning for ${name} (${providerID})`);
  }
  for (const { name } of odd) {
    safety.release({ node: name });
    w.kube.store.delete("nodes", name);
  }
  await assertStillRunning(w, "after-odd");
  await w.converge();
  safety.assertClean();
});

Deno.test("runCcm() handles labels and annotations at the apiserver's limits", async () => {
  await withSeed(newSeed(), async (random) => {
    await using w = await startChaosWorld({ nodes: 2, services: 1 });
    using safety = new SafetyMonitor(w);
    await w.start();
    await w.converge();
    safety.baseline();
    const labels = hugeLabels(random, scaled(40, 200));
    const annotations = { "example.com/blob": "x".repeat(200_000) };
    for (const n of w.nodes()) {
      w.kube.store.patch("nodes", n.metadata?.name ?? "", { metadata: { labels, annotations } }, {
        type: "merge",
      });
    }
    w.addNode("huge-1");
    w.kube.store.patch("nodes", "huge-1", { metadata: { labels, annotations } }, { type: "merge" });
    createService(w, "huge-svc", 7000, annotations);
    w.kube.store.patch("services", "huge-svc", { metadata: { labels } }, {
      type: "merge",
      namespace: "default",
    });
    const tags = Array.from({ length: 500 }, (_, i) => `tag-${i}-${"t".repeat(40)}`).join(",");
    createService(w, "huge-tags", 7001, { [annotationKey("tags")]: tags });
    setNodeReady(w.kube, "node-1", true);
    await w.advanceUntil(() => w.converged().every((p) => p.startsWith("huge-tags")), {
      what: "every other object converged",
      stepMs: 5_000,
    });
    const tagged = w.services().find((s) => s.metadata?.name === "huge-tags") ?? {};
    const served = (tagged.status?.loadBalancer?.ingress?.length ?? 0) > 0;
    assert.ok(
      served || warningsFor(w, "SyncLoadBalancerFailed", "huge-tags").length > 0,
      "500 tags: served or warned",
    );
    safety.assertClean();
  });
});
