/**
 * TLS Secrets for HTTPS ports: read from the Secret informer (watched, never polled), and remembered per
 * Service so that a changed Secret enqueues exactly the Services that use it. Certificates and keys stay in
 * memory: nothing here logs them or puts them in an error.
 */
import type { V1Secret } from "@kubernetes/client-node";
import type { TlsLookup, TlsMaterial } from "./contracts.ts";

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

/** Decodes a Secret's `data` value (base64, as the API sends it; client-node keeps it so). */
function decode(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    const bytes = Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
    return new TextDecoder().decode(bytes);
  } catch {
    return undefined;
  }
}

/** `tls.crt` and `tls.key` of a Secret, trimmed as the Go CCM does, or undefined when either is missing. */
export function tlsMaterial(secret: V1Secret): TlsMaterial | undefined {
  const cert = decode(secret.data?.["tls.crt"])?.trim() ?? secret.stringData?.["tls.crt"]?.trim();
  const key = decode(secret.data?.["tls.key"])?.trim() ?? secret.stringData?.["tls.key"]?.trim();
  return cert && key ? { cert, key } : undefined;
}

/** Which Services read which Secrets, for enqueueing on Secret changes. */
export class TlsSecrets {
  readonly #lister: SecretLister;
  /** Service key → Secret keys (`ns/name`) it read at its last plan. */
  readonly #uses = new Map<string, ReadonlySet<string>>();

  constructor(lister: SecretLister) {
    this.#lister = lister;
  }

  /**
   * A lookup for one plan of Service `serviceKey` in `namespace`; call `done()` after planning to remember
   * which Secrets it read. Throws `SecretsUnavailableError` while the informer has not synced.
   */
  lookupFor(serviceKey: string, namespace: string): { lookup: TlsLookup; done: () => void } {
    const read = new Set<string>();
    const lookup: TlsLookup = (name) => {
      const key = `${namespace}/${name}`;
      read.add(key);
      if (!this.#lister.synced) throw new SecretsUnavailableError("Secrets are not listed yet");
      const secret = this.#lister.get(key);
      return secret ? tlsMaterial(secret) : undefined;
    };
    return { lookup, done: () => this.#remember(serviceKey, read) };
  }

  /** The Services that read the Secret `secretKey` (`ns/name`) at their last plan. */
  servicesUsing(secretKey: string): string[] {
    return [...this.#uses].filter(([, keys]) => keys.has(secretKey)).map(([svc]) => svc);
  }

  /** Forgets a Service (deleted). */
  forget(serviceKey: string): void {
    this.#uses.delete(serviceKey);
  }

  #remember(serviceKey: string, read: ReadonlySet<string>): void {
    if (read.size) this.#uses.set(serviceKey, read);
    else this.#uses.delete(serviceKey);
  }
}
