/** A throwaway CA and a 127.0.0.1 server certificate for the emulator's HTTPS mode. */
import { loadX509, servingExtensions } from "../../server/x509.ts";

/** PEM material for `Deno.serve` and the kubeconfig. */
export interface SimCertificates {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const EC_KEY = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGNING = { name: "ECDSA", hash: "SHA-256" } as const;

/** Generates a CA and a server certificate for 127.0.0.1/localhost signed by it (valid for a day). */
export async function generateCertificates(): Promise<SimCertificates> {
  const x509 = await loadX509();
  x509.cryptoProvider.set(crypto);
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  const caKeys = await crypto.subtle.generateKey(EC_KEY, true, ["sign", "verify"]);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: "CN=kube-sim-ca",
    keys: caKeys,
    notBefore,
    notAfter,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const serverKeys = await crypto.subtle.generateKey(EC_KEY, true, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.create({
    subject: "CN=kube-sim",
    issuer: ca.subject,
    publicKey: serverKeys.publicKey,
    signingKey: caKeys.privateKey,
    notBefore,
    notAfter,
    signingAlgorithm: SIGNING,
    extensions: [
      ...servingExtensions(x509, ["127.0.0.1", "localhost"]),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const keyDer = await crypto.subtle.exportKey("pkcs8", serverKeys.privateKey);
  return {
    caPem: ca.toString("pem") + "\n",
    certPem: cert.toString("pem") + "\n",
    keyPem: x509.PemConverter.encode(keyDer, "PRIVATE KEY") + "\n",
  };
}
