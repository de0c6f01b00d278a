import assert from "node:assert/strict";
import type { V1Secret } from "@kubernetes/client-node";
import { generateSelfSignedCert } from "../../../server/tls.ts";
import {
  certificateFingerprint,
  type SecretReader,
  SecretsUnavailableError,
  tlsMaterial,
  TlsSecrets,
} from "./secrets.ts";

function secret(name: string, data: Record<string, string>, resourceVersion = "1"): V1Secret {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, btoa(v)]));
  return { metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion }, data: encoded };
}

/** Secrets by `ns/name`, as an apiserver would answer `get`; `down` makes every read fail; `reads` counts them. */
function store(secrets: V1Secret[]) {
  const byKey = new Map(secrets.map((s) => [`${s.metadata?.namespace}/${s.metadata?.name}`, s]));
  const state = { down: false, reads: 0 };
  const reader: SecretReader = {
    read(namespace, name) {
      state.reads++;
      if (state.down) return Promise.reject(new Error("HTTP 503"));
      return Promise.resolve(byKey.get(`${namespace}/${name}`));
    },
  };
  return { reader, byKey, state };
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
  const tls = new TlsSecrets(store([secret("web-tls", { "tls.crt": certPem, "tls.key": keyPem })]).reader);
  const got = await tls.materialFor("default/web", "default", ["web-tls", "not-yet"]);
  assert.deepEqual([...got.keys()], ["web-tls"]);
  assert.deepEqual(
    tls.servicesUsing("default/not-yet"),
    ["default/web"],
    "a Secret created later enqueues it",
  );
  await tls.materialFor("default/web", "default", []);
  assert.deepEqual(tls.servicesUsing("default/web-tls"), []);
  assert.deepEqual(tls.held(), [], "a Secret no Service uses is not kept");
});

Deno.test("TlsSecrets reads each named Secret once, and refresh() names the Services whose Secret changed", async () => {
  const first = await generateSelfSignedCert();
  const second = await generateSelfSignedCert();
  const s = store([secret("web-tls", { "tls.crt": first.certPem, "tls.key": first.keyPem })]);
  const tls = new TlsSecrets(s.reader);
  await tls.materialFor("default/web", "default", ["web-tls", "later"]);
  await tls.materialFor("default/web", "default", ["web-tls", "later"]);
  assert.equal(s.state.reads, 2, "one get per Secret, not per sync");
  assert.deepEqual(await tls.refresh(), [], "nothing changed");
  s.byKey.set(
    "default/web-tls",
    secret("web-tls", { "tls.crt": second.certPem, "tls.key": second.keyPem }, "2"),
  );
  s.byKey.set("default/later", secret("later", { "tls.crt": second.certPem, "tls.key": second.keyPem }));
  assert.deepEqual(await tls.refresh(), ["default/web"]);
  const got = await tls.materialFor("default/web", "default", ["web-tls", "later"]);
  assert.equal(got.get("web-tls")?.fingerprint, certificateFingerprint(second.certPem));
  assert.ok(got.has("later"));
});

Deno.test("TlsSecrets refuses to plan without a Secret it cannot read, and a failed refresh keeps the last reading", async () => {
  const { certPem, keyPem } = await generateSelfSignedCert();
  const s = store([secret("web-tls", { "tls.crt": certPem, "tls.key": keyPem })]);
  const tls = new TlsSecrets(s.reader);
  s.state.down = true;
  await assert.rejects(tls.materialFor("default/web", "default", ["web-tls"]), SecretsUnavailableError);
  assert.equal((await tls.materialFor("default/api", "default", [])).size, 0, "no Secret needed, no read");
  s.state.down = false;
  assert.ok((await tls.materialFor("default/web", "default", ["web-tls"])).has("web-tls"));
  s.state.down = true;
  assert.deepEqual(await tls.refresh(), [], "doubt changes nothing");
  assert.ok(
    (await tls.materialFor("default/web", "default", ["web-tls"])).has("web-tls"),
    "last reading kept",
  );
});
