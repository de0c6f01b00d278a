/**
 * TLS Secrets for HTTPS ports: read from the Secret informer (watched, never polled), and remembered per
 * Service so that a changed Secret enqueues exactly the Services that use it. Certificates and keys stay in
 * memory: nothing here logs them or puts them in an error.
 */
import { createHash } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";
import type { TlsMaterial } from "../nodebalancer/plan.ts";

/** Secrets as the informer holds them. `Informer<V1Secret>` implements it. */
export interface SecretLister {
  get(key: string): V1Secret | undefined;
  onChange(handler: (kind: "add" | "update" | "delete", secret: V1Secret) => void): () => void;
  readonly synced: boolean;
}

/** The Secret informer has not listed yet (or cannot): whether a Secret exists is unknown, so retry. */
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

/** Which Services read which Secrets, for enqueueing on Secret changes; and the material, memoised. */
export class TlsSecrets {
  readonly #lister: SecretLister;
  /** Service key → Secret keys (`ns/name`) its last plan read. */
  readonly #uses = new Map<string, ReadonlySet<string>>();
  readonly #memo = new Map<string, { version: string; material: TlsMaterial | undefined }>();

  constructor(lister: SecretLister) {
    this.#lister = lister;
  }

  /**
   * The TLS material of `names` (Secrets in `namespace`) for Service `serviceKey`, and which it read; a missing
   * or incomplete Secret is absent from the map. Throws `SecretsUnavailableError` until the informer synced.
   */
  materialFor(serviceKey: string, namespace: string, names: readonly string[]): Map<string, TlsMaterial> {
    const keys = new Set(names.map((n) => `${namespace}/${n}`));
    if (keys.size) this.#uses.set(serviceKey, keys);
    else this.#uses.delete(serviceKey);
    const out = new Map<string, TlsMaterial>();
    if (keys.size === 0) return out;
    if (!this.#lister.synced) throw new SecretsUnavailableError("Cannot read TLS Secrets: not listed yet");
    for (const name of names) {
      const material = this.#read(`${namespace}/${name}`);
      if (material) out.set(name, material);
    }
    return out;
  }

  /** The Services whose last plan read the Secret `secretKey` (`ns/name`). */
  servicesUsing(secretKey: string): string[] {
    return [...this.#uses].filter(([, keys]) => keys.has(secretKey)).map(([svc]) => svc);
  }

  /** Forgets a Service (deleted, or no longer a LoadBalancer). */
  forget(serviceKey: string): void {
    this.#uses.delete(serviceKey);
  }

  #read(key: string): TlsMaterial | undefined {
    const secret = this.#lister.get(key);
    if (!secret) {
      this.#memo.delete(key);
      return undefined;
    }
    const version = `${secret.metadata?.uid}/${secret.metadata?.resourceVersion}`;
    const memo = this.#memo.get(key);
    if (memo?.version === version) return memo.material;
    const material = tlsMaterial(secret);
    this.#memo.set(key, { version, material });
    return material;
  }
}
