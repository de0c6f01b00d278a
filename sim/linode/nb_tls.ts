/**
 * The certificate and key of an `https` NodeBalancer config, checked as the API checks them: a PEM certificate
 * (or a chain, the first certificate being served), a PEM private key that belongs to it, and the read-only
 * `ssl_commonname` and `ssl_fingerprint` derived from the certificate.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from "node:crypto";
import { fieldError } from "./http.ts";

/** What a config shows about its certificate. */
export interface TlsFacts {
  commonName: string;
  /** SHA-1 of the DER certificate, upper-case hex pairs joined by colons, as the reference's example. */
  fingerprint: string;
}

function parseCertificate(pem: string, field: string): X509Certificate {
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw fieldError(field, "Invalid SSL certificate");
  try {
    return new X509Certificate(pem);
  } catch {
    throw fieldError(field, "Invalid SSL certificate");
  }
}

/** The certificate's subject CN; empty when it has none (the reference does not say what the API shows then). */
function commonNameOf(cert: X509Certificate): string {
  const cn = cert.subject.split("\n").find((part) => part.startsWith("CN="));
  return cn === undefined ? "" : cn.slice(3);
}

function spkiOfKey(pem: string, field: string): Uint8Array {
  // Encrypted keys fail here too: the API has no field for a passphrase.
  if (!/-----BEGIN (RSA |EC )?PRIVATE KEY-----/.test(pem)) throw fieldError(field, "Invalid SSL key");
  try {
    const key = createPrivateKey(pem);
    return new Uint8Array(createPublicKey(key).export({ type: "spki", format: "der" }));
  } catch {
    throw fieldError(field, "Invalid SSL key");
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/**
 * Parses a certificate and key (PKCS#8, PKCS#1 RSA or SEC1 EC PEM, as Kubernetes TLS Secrets carry them) and
 * checks the key is the certificate's; 400 on `<prefix>ssl_cert` / `<prefix>ssl_key` otherwise. Expiry is not
 * checked: the reference does not say the API refuses expired certificates.
 */
export function checkTlsPair(certPem: string, keyPem: string, prefix = ""): TlsFacts {
  const cert = parseCertificate(certPem, `${prefix}ssl_cert`);
  const keySpki = spkiOfKey(keyPem, `${prefix}ssl_key`);
  const certSpki = new Uint8Array(cert.publicKey.export({ type: "spki", format: "der" }));
  if (!sameBytes(keySpki, certSpki)) {
    throw fieldError(`${prefix}ssl_key`, "SSL key does not match the certificate");
  }
  return { commonName: commonNameOf(cert), fingerprint: cert.fingerprint };
}
