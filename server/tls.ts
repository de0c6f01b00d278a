/**
 * Serving certificates for the health and metrics endpoint: the PEM pair given by
 * `--tls-cert-file`/`--tls-private-key-file`, or a self-signed one made at start, as the upstream
 * cloud-controller-manager does when no certificate is given. The private key never reaches a log.
 */
import type { Clock } from "../common/clock.ts";
import { loadX509, servingExtensions } from "./x509.ts";

/** A certificate (chain) and its private key, both PEM text, as `Deno.serve({ cert, key })` takes them. */
export interface TlsPem {
  certPem: string;
  keyPem: string;
}

/** Options of `generateSelfSignedCert`. */
export interface SelfSignedOptions {
  /** DNS names and IP addresses for the SAN extension (default: localhost, 127.0.0.1, ::1 and the hostname). */
  hosts?: readonly string[];
  /** Days the certificate stays valid (default 30; it is made anew at every start). */
  validityDays?: number;
  /** Key type (default ECDSA P-256, the cheapest to make). */
  algorithm?: "ECDSA-P256" | "RSA-2048";
  /** Source of "now" for the validity window (default: the system clock). */
  clock?: Pick<Clock, "now">;
}

const DEFAULT_VALIDITY_DAYS = 30;
const DAY_MS = 86_400_000;
/** Backdating absorbs clock skew between this host and its scrapers. */
const BACKDATE_MS = 3_600_000;

const ALGORITHMS = {
  "ECDSA-P256": { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" },
  "RSA-2048": {
    name: "RSASSA-PKCS1-v1_5",
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: "SHA-256",
  },
} as const;

/** The default SAN hosts: loopback names plus this machine's hostname when it may be read. */
export function defaultHosts(): string[] {
  const hosts = ["localhost", "127.0.0.1", "::1"];
  try {
    const name = Deno.hostname();
    if (name && !hosts.includes(name)) hosts.push(name);
  } catch {
    // Without --allow-sys=hostname the loopback names still cover probes and port-forwards.
  }
  return hosts;
}

function randomSerialHex(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = bytes[0]! & 0x7f; // a positive INTEGER
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Makes a self-signed serving certificate (CA:false, serverAuth) with a fresh key pair, valid
 * from an hour ago for `validityDays`.
 */
export async function generateSelfSignedCert(options: SelfSignedOptions = {}): Promise<TlsPem> {
  const x509 = await loadX509();
  const algorithm = ALGORITHMS[options.algorithm ?? "ECDSA-P256"];
  const keys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]) as CryptoKeyPair;
  const hosts = options.hosts?.length ? [...options.hosts] : defaultHosts();
  const now = options.clock?.now() ?? Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialHex(),
    name: [{ CN: [`${hosts[0]}@${Math.floor(now / 1000)}`] }],
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + (options.validityDays ?? DEFAULT_VALIDITY_DAYS) * DAY_MS),
    signingAlgorithm: algorithm,
    keys,
    extensions: servingExtensions(x509, hosts),
  });
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return { certPem: cert.toString("pem"), keyPem: x509.PemConverter.encode(pkcs8, "PRIVATE KEY") };
}

const CERT_PEM = /-----BEGIN CERTIFICATE-----/;
const KEY_PEM = /-----BEGIN (RSA |EC |ENCRYPTED )?PRIVATE KEY-----/;

/** Reads a PEM certificate and key from files; errors name the file, never its content. */
export async function readTlsFiles(certFile: string, keyFile: string): Promise<TlsPem> {
  const certPem = await readPem(certFile, "certificate", CERT_PEM);
  const keyPem = await readPem(keyFile, "private key", KEY_PEM);
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----/.test(keyPem)) {
    throw new TypeError(`Cannot use private key ${keyFile}: it is encrypted`);
  }
  return { certPem, keyPem };
}

async function readPem(path: string, what: string, marker: RegExp): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new TypeError(`Cannot read ${what} ${path}`, { cause: e });
  }
  if (!marker.test(text)) throw new TypeError(`Cannot use ${what} ${path}: no PEM ${what} block`);
  return text;
}
