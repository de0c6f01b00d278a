/** Test fixture: certificates and keys for `https` NodeBalancer configs, and their expected fingerprints. */
import { createPrivateKey } from "node:crypto";
import { loadX509 } from "../../../server/x509.ts";

/** A PEM certificate, its key in the requested encoding, and the DER certificate. */
export interface TestCert {
  certPem: string;
  keyPem: string;
  der: Uint8Array<ArrayBuffer>;
}

const RSA = {
  name: "RSASSA-PKCS1-v1_5",
  modulusLength: 2048,
  publicExponent: new Uint8Array([1, 0, 1]),
  hash: "SHA-256",
} as const;
const EC = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

/**
 * A self-signed certificate for `commonName`. `keyFormat` picks the key PEM: PKCS#8 ("PRIVATE KEY") or the
 * traditional PKCS#1 / SEC1 forms ("RSA PRIVATE KEY", "EC PRIVATE KEY") that Kubernetes TLS Secrets often hold.
 */
export async function makeCert(
  commonName: string,
  options: { algorithm?: "rsa" | "ec"; keyFormat?: "pkcs8" | "traditional" } = {},
): Promise<TestCert> {
  const x509 = await loadX509();
  const algorithm = options.algorithm === "rsa" ? RSA : EC;
  const keys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]) as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: [{ CN: [commonName] }, { O: ["Sim Test"] }],
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + 86_400_000),
    signingAlgorithm: algorithm,
    keys,
  });
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  let keyPem = x509.PemConverter.encode(pkcs8, "PRIVATE KEY");
  if (options.keyFormat === "traditional") {
    const type = options.algorithm === "rsa" ? "pkcs1" : "sec1";
    keyPem = String(createPrivateKey(keyPem).export({ type, format: "pem" }));
  }
  return { certPem: cert.toString("pem"), keyPem, der: new Uint8Array(cert.rawData) };
}

/** SHA-1 of the DER certificate as upper-case hex pairs joined by colons (computed with WebCrypto). */
export async function sha1Fingerprint(der: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", der));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0").toUpperCase()).join(":");
}
