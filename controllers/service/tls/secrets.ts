/**
 * TLS Secrets for HTTPS ports: only the Secrets that Service annotations name are read, one `get` each, and
 * re-read every `SECRET_REFRESH_MS` while a Service uses them, so a rotated certificate reaches the
 * NodeBalancer within that period (the Go CCM reads them on each sync). Nothing lists or watches Secrets, so
 * the CCM never holds the cluster's other Secrets (Helm releases, service-account tokens) and its RBAC needs
 * `get` only. Certificates and keys stay in memory: nothing here logs them or puts them in an error.
 */
import { createHash } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";

/** The `tls.crt` and `tls.key` of a Secret, as text. */
export interface TlsMaterial {
  readonly cert: string;
  readonly key: string;
  /** SHA-1 fingerprint of the certificate (`certificateFingerprint`), for comparing with the API's `ssl_fingerprint`. */
  readonly fingerprint?: string | null;
}

/** Reads one Secret by name; undefined when it does not exist. `kube/clients.ts` `secretReader` implements it. */
export interface SecretReader {
  read(namespace: string, name: string): Promise<V1Secret | undefined>;
}

/** How often a Secret in use is read again, to notice a rotated certificate. */
export const SECRET_REFRESH_MS = 60_000;

/** A Secret could not be read: whether it exists is unknown, so retry (never plan without it). */
export class SecretsUnavailableError extends Error {
  override name = "SecretsUnavailableError";
}

/** Decodes a Secret's `data` value (base64, as the API sends it and client-node keeps it). */
function decode(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

/**
 * The fingerprint of the first certificate of a PEM chain as the API reports `ssl_fingerprint`: SHA-1 of the
 * DER, upper-case hex pairs joined by colons (the API reference's example has 20 bytes; the emulator does the
 * same), or null when there is no readable certificate. Compared with the API's value, it tells whether a
 * Secret's certificate is already on the NodeBalancer without sending it again.
 */
export function certificateFingerprint(pem: string): string | null {
  const body = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(pem)?.[1];
  if (!body) return null;
  let der: Uint8Array;
  try {
    der = Uint8Array.from(atob(body.replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
  const hex = createHash("sha1").update(der).digest("hex").toUpperCase();
  return hex.match(/../g)?.join(":") ?? null;
}

/** `tls.crt` and `tls.key` of a Secret, trimmed as the Go CCM does, or undefined when either is missing. */
export function tlsMaterial(secret: V1Secret): TlsMaterial | undefined {
  const cert = decode(secret.data?.["tls.crt"])?.trim() ?? secret.stringData?.["tls.crt"]?.trim();
  const key = decode(secret.data?.["tls.key"])?.trim() ?? secret.stringData?.["tls.key"]?.trim();
  return cert && key ? { cert, key, fingerprint: certificateFingerprint(cert) } : undefined;
}

/** One Secret as last read: its version (`null` when missing) and its TLS material, if complete. */
interface ReadSecret {
  readonly version: string | null;
  readonly material: TlsMaterial | undefined;
}

/** Which Services read which Secrets, for enqueueing on Secret changes; and the material, as last read. */
export class TlsSecrets {
  readonly #reader: SecretReader;
  /** Service key → Secret keys (`ns/name`) its last plan read. */
  readonly #uses = new Map<string, ReadonlySet<string>>();
  readonly #read = new Map<string, ReadSecret>();

  constructor(reader: SecretReader) {
    this.#reader = reader;
  }

  /**
   * The TLS material of `names` (Secrets in `namespace`) for Service `serviceKey`; a missing or incomplete
   * Secret is absent from the map. A Secret read before is not read again (`refresh` keeps it current).
   * Throws `SecretsUnavailableError` when one cannot be read.
   */
  async materialFor(
    serviceKey: string,
    namespace: string,
    names: readonly string[],
  ): Promise<Map<string, TlsMaterial>> {
    const keys = new Set(names.map((n) => `${namespace}/${n}`));
    if (keys.size) this.#uses.set(serviceKey, keys);
    else this.#uses.delete(serviceKey);
    this.#dropUnused();
    const out = new Map<string, TlsMaterial>();
    for (const name of names) {
      const key = `${namespace}/${name}`;
      const read = this.#read.get(key) ?? await this.#load(key);
      if (read.material) out.set(name, read.material);
    }
    return out;
  }

  /**
   * Reads every Secret in use again; answers the Services using one that changed (created, rotated,
   * deleted). A Secret that cannot be read now keeps its last reading: doubt changes nothing.
   */
  async refresh(): Promise<string[]> {
    const changed = new Set<string>();
    for (const key of this.#inUse()) {
      const before = this.#read.get(key);
      let after: ReadSecret;
      try {
        after = await this.#load(key);
      } catch {
        continue;
      }
      if (before?.version !== after.version) { for (const svc of this.servicesUsing(key)) changed.add(svc); }
    }
    return [...changed];
  }

  /** The Services whose last plan read the Secret `secretKey` (`ns/name`). */
  servicesUsing(secretKey: string): string[] {
    return [...this.#uses].filter(([, keys]) => keys.has(secretKey)).map(([svc]) => svc);
  }

  /** The Secrets held in memory (`ns/name`): only those some Service uses. */
  held(): string[] {
    return [...this.#read.keys()];
  }

  /** Forgets a Service (deleted, or no longer a LoadBalancer), and the Secrets only it used. */
  forget(serviceKey: string): void {
    this.#uses.delete(serviceKey);
    this.#dropUnused();
  }

  #inUse(): Set<string> {
    return new Set([...this.#uses.values()].flatMap((keys) => [...keys]));
  }

  #dropUnused(): void {
    const used = this.#inUse();
    for (const key of this.#read.keys()) if (!used.has(key)) this.#read.delete(key);
  }

  async #load(key: string): Promise<ReadSecret> {
    const slash = key.indexOf("/");
    let secret: V1Secret | undefined;
    try {
      secret = await this.#reader.read(key.slice(0, slash), key.slice(slash + 1));
    } catch (e) {
      throw new SecretsUnavailableError(`Cannot read TLS Secret ${key}`, { cause: e });
    }
    const version = secret ? `${secret.metadata?.uid}/${secret.metadata?.resourceVersion}` : null;
    const last = this.#read.get(key);
    if (last && last.version === version) return last;
    const read = { version, material: secret ? tlsMaterial(secret) : undefined };
    // A Service forgotten while this read was under way does not bring its Secret back.
    if (this.#inUse().has(key)) this.#read.set(key, read);
    return read;
  }
}
