import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { defaultHosts, generateSelfSignedCert, readTlsFiles } from "./tls.ts";
import { loadX509 } from "./x509.ts";

async function parse(certPem: string) {
  const x509 = await loadX509();
  const cert = new x509.X509Certificate(certPem);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON() ?? [];
  const basic = cert.getExtension(x509.BasicConstraintsExtension);
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  return { x509, cert, san, basic, eku };
}

for (const algorithm of ["ECDSA-P256", "RSA-2048"] as const) {
  Deno.test(`generateSelfSignedCert() makes a ${algorithm} serving certificate that verifies itself`, async () => {
    const clock = new FakeClock(Date.UTC(2026, 5, 1));
    const { certPem, keyPem } = await generateSelfSignedCert({
      algorithm,
      clock,
      validityDays: 7,
      hosts: ["localhost", "127.0.0.1", "::1", "ccm-0.example"],
    });
    const { x509, cert, san, basic, eku } = await parse(certPem);
    assert.deepEqual(san, [
      { type: "dns", value: "localhost" },
      { type: "ip", value: "127.0.0.1" },
      { type: "ip", value: "::1" },
      { type: "dns", value: "ccm-0.example" },
    ]);
    assert.equal(cert.notBefore.getTime(), Date.UTC(2026, 5, 1) - 3_600_000);
    assert.equal(cert.notAfter.getTime(), Date.UTC(2026, 5, 8));
    assert.equal(basic?.ca, false);
    assert.deepEqual([...eku?.usages ?? []], [x509.ExtendedKeyUsage.serverAuth]);
    assert.equal(cert.subject, cert.issuer);
    assert.equal(await cert.verify({ date: new Date(Date.UTC(2026, 5, 2)) }), true);
    assert.equal(cert.publicKey.algorithm.name, algorithm === "RSA-2048" ? "RSASSA-PKCS1-v1_5" : "ECDSA");
    assert.match(keyPem, /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n?$/);
  });
}

Deno.test("generateSelfSignedCert() gives every certificate a fresh key and serial", async () => {
  const a = await generateSelfSignedCert({ hosts: ["localhost"] });
  const b = await generateSelfSignedCert({ hosts: ["localhost"] });
  assert.notEqual(a.keyPem, b.keyPem);
  assert.notEqual((await parse(a.certPem)).cert.serialNumber, (await parse(b.certPem)).cert.serialNumber);
});

Deno.test("generateSelfSignedCert() defaults to loopback names and the hostname", async () => {
  const { san } = await parse((await generateSelfSignedCert()).certPem);
  assert.deepEqual(san.map((n) => n.value), defaultHosts());
  assert.deepEqual(defaultHosts().slice(0, 3), ["localhost", "127.0.0.1", "::1"]);
  assert.ok(defaultHosts().includes(Deno.hostname()));
});

Deno.test("readTlsFiles() returns the PEM text of both files", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pem = await generateSelfSignedCert({ hosts: ["localhost"] });
    await Deno.writeTextFile(`${dir}/tls.crt`, pem.certPem);
    await Deno.writeTextFile(`${dir}/tls.key`, pem.keyPem);
    assert.deepEqual(await readTlsFiles(`${dir}/tls.crt`, `${dir}/tls.key`), pem);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const BAD_FILES: { name: string; cert: string | null; key: string | null; message: RegExp }[] = [
  {
    name: "a missing certificate file",
    cert: null,
    key: "ok",
    message: /^Cannot read certificate .*tls\.crt$/,
  },
  { name: "a missing key file", cert: "ok", key: null, message: /^Cannot read private key .*tls\.key$/ },
  {
    name: "a key file that is not PEM",
    cert: "ok",
    key: "secret-material-123",
    message: /^Cannot use private key .*tls\.key: no PEM private key block$/,
  },
  {
    name: "an encrypted key",
    cert: "ok",
    key: "-----BEGIN ENCRYPTED PRIVATE KEY-----\nc2VjcmV0\n-----END ENCRYPTED PRIVATE KEY-----\n",
    message: /^Cannot use private key .*tls\.key: it is encrypted$/,
  },
  {
    name: "a key that is not the certificate's",
    cert: "ok",
    key: "other",
    message: /^Cannot use private key .*tls\.key: it is not the key of .*tls\.crt$/,
  },
  {
    name: "a key block that does not parse",
    cert: "ok",
    key: "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n",
    message: /^Cannot use private key .*tls\.key: it does not parse$/,
  },
  {
    name: "a certificate file without a certificate",
    cert: "-----BEGIN PRIVATE KEY-----\n",
    key: "ok",
    message: /^Cannot use certificate .*tls\.crt: no PEM certificate block$/,
  },
];

for (const c of BAD_FILES) {
  Deno.test(`readTlsFiles() rejects ${c.name} without quoting its content`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const pem = await generateSelfSignedCert({ hosts: ["localhost"] });
      const cert = c.cert === "ok" ? pem.certPem : c.cert;
      const key = c.key === "ok"
        ? pem.keyPem
        : c.key === "other"
        ? (await generateSelfSignedCert({ hosts: ["localhost"] })).keyPem
        : c.key;
      if (cert !== null) await Deno.writeTextFile(`${dir}/tls.crt`, cert);
      if (key !== null) await Deno.writeTextFile(`${dir}/tls.key`, key);
      const error = await readTlsFiles(`${dir}/tls.crt`, `${dir}/tls.key`).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(error instanceof TypeError);
      assert.match(error.message, c.message);
      assert.ok(!error.message.includes("secret") && !error.message.includes("c2VjcmV0"));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
