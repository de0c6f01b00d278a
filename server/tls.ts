/**
 * Serving certificates of the secure port: the PEM pair of `--tls-cert-file`/`--tls-private-key-file`, re-read
 * every minute and swapped in when it changes (as upstream's `DynamicCertKeyPairContent`, which also watches the
 * files; a pair that does not load keeps the one served), or a self-signed one made at start, as the upstream
 * cloud-controller-manager does when no certificate is given, and made anew at two thirds of its life (upstream
 * makes one for a year and never renews it). The private key never reaches a log or an error.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import type { Clock } from "../common/clock.ts";
import { isAbort } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
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
  /** Days the certificate stays valid (default 30; `ServingCertificate` makes a new one after two thirds). */
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

/**
 * Reads a PEM certificate and key from files and checks that they load and belong together (as Go's
 * `tls.X509KeyPair` upstream); errors name the file, never its content.
 */
export async function readTlsFiles(certFile: string, keyFile: string): Promise<TlsPem> {
  const certPem = await readPem(certFile, "certificate", CERT_PEM);
  const keyPem = await readPem(keyFile, "private key", KEY_PEM);
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----/.test(keyPem)) {
    throw new TypeError(`Cannot use private key ${keyFile}: it is encrypted`);
  }
  checkPair({ certPem, keyPem }, certFile, keyFile);
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

/** Throws unless the certificate and the key parse and the key is the certificate's. The causes are dropped. */
function checkPair(pem: TlsPem, certFile: string, keyFile: string): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem.certPem);
  } catch {
    throw new TypeError(`Cannot use certificate ${certFile}: it does not parse`);
  }
  let matches: boolean;
  try {
    matches = cert.checkPrivateKey(createPrivateKey(pem.keyPem));
  } catch {
    throw new TypeError(`Cannot use private key ${keyFile}: it does not parse`);
  }
  if (!matches) throw new TypeError(`Cannot use private key ${keyFile}: it is not the key of ${certFile}`);
}

/** Where the serving certificate comes from: the flag files, a fixed PEM pair, or made here. */
export type TlsSource = { certFile: string; keyFile: string } | TlsPem | "self-signed";

/** What `ServingCertificate` uses. */
export interface ServingCertificateDeps {
  /** Schedules renewals and re-reads. */
  clock: Pick<Clock, "sleep">;
  log: Logger;
}

/** Options of `ServingCertificate.start`. */
export interface ServingCertificateOptions {
  /** How often the flag files are read again (default a minute, upstream's re-check period). */
  pollMs?: number;
  /** Life of a self-signed certificate in days (default 30); a new one is made after two thirds of it. */
  validityDays?: number;
  /** SAN hosts of a self-signed certificate (default `defaultHosts()`). */
  hosts?: readonly string[];
}

/** Upstream re-checks the files every minute besides watching them. */
export const DEFAULT_POLL_MS = 60_000;
/** After a failed attempt to make a certificate, the next one comes this much later. */
const RETRY_MS = 60_000;

/**
 * The certificate the secure port serves now, kept fresh: a self-signed one renewed before it expires, or the
 * flag files re-read. Listeners (the server's `setSecureContext`) get each new pair; `run` does the work.
 */
export class ServingCertificate {
  #pem: TlsPem;
  #rejected = "";
  readonly #source: TlsSource;
  readonly #deps: ServingCertificateDeps;
  readonly #options: ServingCertificateOptions;
  readonly #listeners: ((pem: TlsPem) => void)[] = [];

  private constructor(
    pem: TlsPem,
    source: TlsSource,
    deps: ServingCertificateDeps,
    o: ServingCertificateOptions,
  ) {
    this.#pem = pem;
    this.#source = source;
    this.#deps = deps;
    this.#options = o;
  }

  /** Loads or makes the first certificate; throws (naming files only) when the flag files do not load. */
  static async start(
    source: TlsSource,
    deps: ServingCertificateDeps,
    options: ServingCertificateOptions = {},
  ): Promise<ServingCertificate> {
    const first = source === "self-signed"
      ? await generateSelfSignedCert(selfSignedOptions(options))
      : "certFile" in source
      ? await readTlsFiles(source.certFile, source.keyFile)
      : source;
    return new ServingCertificate(first, source, deps, options);
  }

  /** The pair served now. */
  get pem(): TlsPem {
    return this.#pem;
  }

  /** "self-signed", "files" or "given", for the start line. */
  get kind(): string {
    return this.#source === "self-signed" ? "self-signed" : "certFile" in this.#source ? "files" : "given";
  }

  /** Calls `listener` with every new pair. */
  onChange(listener: (pem: TlsPem) => void): void {
    this.#listeners.push(listener);
  }

  /** Renews or re-reads until `signal` aborts; a fixed pair needs nothing. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      if (this.#source === "self-signed") await this.#renewLoop(signal);
      else if ("certFile" in this.#source) await this.#pollLoop(this.#source, signal);
    } catch (e) {
      if (!isAbort(e, signal)) throw e;
    }
  }

  async #renewLoop(signal: AbortSignal): Promise<void> {
    const lifeMs = (this.#options.validityDays ?? DEFAULT_VALIDITY_DAYS) * DAY_MS;
    let wait = Math.floor(lifeMs * 2 / 3);
    for (;;) {
      await this.#deps.clock.sleep(wait, signal);
      try {
        this.#swap(await generateSelfSignedCert(selfSignedOptions(this.#options)));
        this.#deps.log.info("renewed the self-signed serving certificate");
        wait = Math.floor(lifeMs * 2 / 3);
      } catch (e) {
        this.#deps.log.warning("cannot renew the self-signed serving certificate: {error}", {
          error: e instanceof Error ? e.name : "error",
        });
        wait = RETRY_MS;
      }
    }
  }

  async #pollLoop(files: { certFile: string; keyFile: string }, signal: AbortSignal): Promise<void> {
    for (;;) {
      await this.#deps.clock.sleep(this.#options.pollMs ?? DEFAULT_POLL_MS, signal);
      await this.#reload(files);
    }
  }

  /** Reads the files again; a new pair that loads is served, one that does not is logged once and skipped. */
  async #reload(files: { certFile: string; keyFile: string }): Promise<void> {
    let next: TlsPem;
    try {
      next = await readTlsFiles(files.certFile, files.keyFile);
    } catch (e) {
      const problem = e instanceof Error ? e.message : "cannot read";
      if (problem === this.#rejected) return;
      this.#rejected = problem;
      this.#deps.log.warning("keeping the serving certificate: {problem}", { problem });
      return;
    }
    this.#rejected = "";
    if (next.certPem === this.#pem.certPem && next.keyPem === this.#pem.keyPem) return;
    this.#swap(next);
    this.#deps.log.info("serving the new certificate of {certFile}", { certFile: files.certFile });
  }

  #swap(pem: TlsPem): void {
    this.#pem = pem;
    for (const listener of this.#listeners) listener(pem);
  }
}

/**
 * The validity window is real time, whatever clock schedules the renewal: clients check it against theirs (a
 * test's fake clock would otherwise make certificates that expired long ago).
 */
function selfSignedOptions(options: ServingCertificateOptions): SelfSignedOptions {
  return { hosts: options.hosts, validityDays: options.validityDays };
}
