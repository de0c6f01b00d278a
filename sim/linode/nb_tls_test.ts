import assert from "node:assert/strict";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./testdata/test_client.ts";
import { makeCert, sha1Fingerprint } from "./testdata/tls_fixture.ts";

type Config = Record<string, unknown> & { id: number };

async function nodeBalancer(sim: LinodeSim): Promise<number> {
  const nb = await withSim(
    sim,
    () => rawCall("POST", "/nodebalancers", { label: "svc-tls", region: "us-east" }),
  );
  return (nb as { id: number }).id;
}

function post(sim: LinodeSim, nbId: number, body: unknown) {
  return withSim(sim, () => rawCall("POST", `/nodebalancers/${nbId}/configs`, body)) as Promise<Config>;
}

function put(sim: LinodeSim, nbId: number, configId: number, body: unknown) {
  return withSim(sim, () => rawCall("PUT", `/nodebalancers/${nbId}/configs/${configId}`, body)) as Promise<
    Config
  >;
}

Deno.test("https configs derive ssl_commonname and ssl_fingerprint from the certificate and redact cert and key", async () => {
  await using sim = await startLinodeSim();
  const nbId = await nodeBalancer(sim);
  const cert = await makeCert("shop.example.com");
  const config = await post(sim, nbId, {
    port: 443,
    protocol: "https",
    ssl_cert: cert.certPem,
    ssl_key: cert.keyPem,
  });
  assert.equal(config.ssl_commonname, "shop.example.com");
  assert.equal(config.ssl_fingerprint, await sha1Fingerprint(cert.der));
  assert.match(String(config.ssl_fingerprint), /^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
  assert.deepEqual([config.ssl_cert, config.ssl_key], ["<REDACTED>", "<REDACTED>"]);
  const listed = await withSim(sim, () => rawCall("GET", `/nodebalancers/${nbId}/configs`)) as {
    data: Config[];
  };
  assert.deepEqual([listed.data[0]?.ssl_cert, listed.data[0]?.ssl_key], ["<REDACTED>", "<REDACTED>"]);
  const snapshot = JSON.stringify(sim.world.nodeBalancers());
  assert.ok(!snapshot.includes("PRIVATE KEY"), "world snapshots do not carry the key either");
});

Deno.test("https configs accept RSA and EC keys in PKCS#8 and traditional PEM, as TLS Secrets hold them", async () => {
  await using sim = await startLinodeSim();
  const nbId = await nodeBalancer(sim);
  const variants = [
    await makeCert("rsa8.example.com", { algorithm: "rsa" }),
    await makeCert("rsa1.example.com", { algorithm: "rsa", keyFormat: "traditional" }),
    await makeCert("ec1.example.com", { algorithm: "ec", keyFormat: "traditional" }),
  ];
  assert.match(variants[1]?.keyPem ?? "", /BEGIN RSA PRIVATE KEY/);
  assert.match(variants[2]?.keyPem ?? "", /BEGIN EC PRIVATE KEY/);
  for (const [i, v] of variants.entries()) {
    const config = await post(sim, nbId, {
      port: 8443 + i,
      protocol: "https",
      ssl_cert: v.certPem,
      ssl_key: v.keyPem,
    });
    assert.equal(config.ssl_fingerprint, await sha1Fingerprint(v.der));
  }
});

Deno.test("https configs refuse a malformed certificate, a malformed key and a key of another certificate", async () => {
  await using sim = await startLinodeSim();
  const nbId = await nodeBalancer(sim);
  const a = await makeCert("a.example.com");
  const b = await makeCert("b.example.com");
  const cases: [unknown, unknown, string, string][] = [
    ["not a certificate", a.keyPem, "ssl_cert", "Invalid SSL certificate"],
    [
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
      a.keyPem,
      "ssl_cert",
      "Invalid SSL certificate",
    ],
    [a.certPem, "not a key", "ssl_key", "Invalid SSL key"],
    [a.certPem, a.certPem, "ssl_key", "Invalid SSL key"],
    [a.certPem, b.keyPem, "ssl_key", "SSL key does not match the certificate"],
    [a.certPem, undefined, "ssl_key", "SSL key is required for https"],
    [a.certPem, "", "ssl_key", "SSL key is required for https"],
  ];
  for (const [certPem, keyPem, field, reason] of cases) {
    const got = await failure(
      post(sim, nbId, { port: 443, protocol: "https", ssl_cert: certPem, ssl_key: keyPem }),
    );
    assert.deepEqual(got, { status: 400, errors: [{ field, reason }] }, `${field}: ${reason}`);
  }
  const inline = await failure(withSim(sim, () =>
    rawCall("POST", "/nodebalancers", {
      label: "svc-x",
      region: "us-east",
      configs: [{ port: 443, protocol: "https", ssl_cert: a.certPem, ssl_key: b.keyPem }],
    })));
  assert.deepEqual(inline.errors, [{
    field: "configs[0].ssl_key",
    reason: "SSL key does not match the certificate",
  }]);
});

Deno.test("updating an https config keeps, replaces or drops its certificate", async () => {
  await using sim = await startLinodeSim();
  const nbId = await nodeBalancer(sim);
  const a = await makeCert("a.example.com");
  const b = await makeCert("b.example.com");
  const config = await post(sim, nbId, {
    port: 443,
    protocol: "https",
    ssl_cert: a.certPem,
    ssl_key: a.keyPem,
  });
  const kept = await put(sim, nbId, config.id, { check: "connection" });
  assert.equal(kept.ssl_commonname, "a.example.com", "a PUT without SSL fields keeps the certificate");
  const halfRotated = await failure(put(sim, nbId, config.id, { ssl_cert: b.certPem }));
  assert.equal(halfRotated.errors[0]?.field, "ssl_key", "a new certificate with the old key does not match");
  const rotated = await put(sim, nbId, config.id, { ssl_cert: b.certPem, ssl_key: b.keyPem });
  assert.deepEqual([rotated.ssl_commonname, rotated.ssl_fingerprint], [
    "b.example.com",
    await sha1Fingerprint(b.der),
  ]);
  const tcp = await put(sim, nbId, config.id, { protocol: "tcp" });
  assert.deepEqual([tcp.ssl_cert, tcp.ssl_key, tcp.ssl_commonname, tcp.ssl_fingerprint], [
    null,
    null,
    "",
    "",
  ]);
  const back = await failure(put(sim, nbId, config.id, { protocol: "https" }));
  assert.equal(back.errors[0]?.field, "ssl_cert", "switching back to https needs the certificate again");
});
