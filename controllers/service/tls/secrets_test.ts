import assert from "node:assert/strict";
import type { V1Secret } from "@kubernetes/client-node";
import { generateSelfSignedCert } from "../../../server/tls.ts";
import {
  certificateFingerprint,
  type SecretLister,
  SecretsUnavailableError,
  tlsMaterial,
  TlsSecrets,
} from "./secrets.ts";

function secret(name: string, data: Record<string, string>, resourceVersion = "1"): V1Secret {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, btoa(v)]));
  return { metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion }, data: encoded };
}

function lister(secrets: V1Secret[], synced = true): SecretLister {
  const byKey = new Map(secrets.map((s) => [`${s.metadata?.namespace}/${s.metadata?.name}`, s]));
  return { synced, get: (key) => byKey.get(key), onChange: () => () => {} };
}

Deno.test("certificateFingerprint() is the SHA-1 of the certificate's DER as colon-separated hex", async () => {
  const { certPem } = await generateSelfSignedCert({ hosts: ["web.example.com"] });
  const body = certPem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, "");
  const der = Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", der));
  const want = [...digest].map((b) => b.toString(16).padStart(2, "0").toUpperCase()).join(":");
  assert.equal(certificateFingerprint(certPem), want);
  assert.equal(certificateFingerprint("no certificate"), null);
});

Deno.test("tlsMaterial() reads tls.crt and tls.key, trimmed, and nothing from an incomplete Secret", async () => {
  const { certPem, keyPem } = await generateSelfSignedCert();
  const material = tlsMaterial(secret("web-tls", { "tls.crt": `${certPem}\n\n`, "tls.key": keyPem }));
  assert.equal(material?.cert, certPem.trim());
  assert.equal(material?.key, keyPem.trim());
  assert.equal(material?.fingerprint, certificateFingerprint(certPem));
  assert.equal(tlsMaterial(secret("half", { "tls.crt": certPem })), undefined);
});

Deno.test("TlsSecrets remembers which Services read which Secrets, missing ones included", async () => {
  const { certPem, keyPem } = await generateSelfSignedCert();
  const tls = new TlsSecrets(lister([secret("web-tls", { "tls.crt": certPem, "tls.key": keyPem })]));
  const got = tls.materialFor("default/web", "default", ["web-tls", "not-yet"]);
  assert.deepEqual([...got.keys()], ["web-tls"]);
  assert.deepEqual(
    tls.servicesUsing("default/not-yet"),
    ["default/web"],
    "a Secret created later enqueues it",
  );
  tls.materialFor("default/web", "default", []);
  assert.deepEqual(tls.servicesUsing("default/web-tls"), []);
});

Deno.test("TlsSecrets refuses to call a Secret missing before the informer listed", () => {
  const tls = new TlsSecrets(lister([], false));
  assert.throws(() => tls.materialFor("default/web", "default", ["web-tls"]), SecretsUnavailableError);
  assert.deepEqual(tls.materialFor("default/api", "default", []).size, 0, "no Secret needed, no wait");
});
