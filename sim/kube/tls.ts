/** A throwaway CA and a 127.0.0.1 server certificate for the emulator's HTTPS mode. */

/** PEM material for `Deno.serve` and the kubeconfig. */
export interface SimCertificates {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const EC_KEY = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGNING = { name: "ECDSA", hash: "SHA-256" } as const;

function toPem(label: string, der: ArrayBuffer): string {
  const b64 = btoa(String.fromCharCode(...new Uint8Array(der)));
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

type MetadataMap = Map<unknown, unknown>;

/**
 * @peculiar/x509 uses tsyringe, which insists on a `reflect-metadata` polyfill that deno.json does not pin.
 * It only stores and reads decorator metadata, so a WeakMap-backed stand-in is enough.
 */
function ensureReflectMetadata(): void {
  const reflect = Reflect as unknown as Record<string, unknown>;
  if (typeof reflect.getMetadata === "function") return;
  const maps = new WeakMap<object, MetadataMap>();
  const own = (target: object, key: unknown) => maps.get(target)?.get(key);
  const lookup = (target: object | null, key: unknown): unknown => {
    for (let t = target; t !== null; t = Object.getPrototypeOf(t)) {
      const v = own(t, key);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  Object.assign(Reflect, {
    defineMetadata(key: unknown, value: unknown, target: object) {
      const map = maps.get(target) ?? new Map();
      map.set(key, value);
      maps.set(target, map);
    },
    getOwnMetadata: (key: unknown, target: object) => own(target, key),
    getMetadata: (key: unknown, target: object) => lookup(target, key),
    hasMetadata: (key: unknown, target: object) => lookup(target, key) !== undefined,
    metadata: (key: unknown, value: unknown) => (target: object) => {
      const map = maps.get(target) ?? new Map();
      map.set(key, value);
      maps.set(target, map);
    },
  });
}

/** Generates a CA and a server certificate for 127.0.0.1/localhost signed by it (valid for a day). */
export async function generateCertificates(): Promise<SimCertificates> {
  ensureReflectMetadata();
  const x509 = await import("@peculiar/x509");
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
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: "ip", value: "127.0.0.1" },
        { type: "dns", value: "localhost" },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const keyDer = await crypto.subtle.exportKey("pkcs8", serverKeys.privateKey);
  return {
    caPem: ca.toString("pem") + "\n",
    certPem: cert.toString("pem") + "\n",
    keyPem: toPem("PRIVATE KEY", keyDer),
  };
}
