/** The emulator's TCP listener, which faults can close and reopen on the same port. */
import type { SimCertificates } from "./tls.ts";

/** Owns the `Deno.serve` server; `refuse()` really closes the socket so clients see connection refused. */
export class Listener {
  readonly #handler: (req: Request) => Promise<Response>;
  readonly #certs: SimCertificates | undefined;
  #server: Deno.HttpServer<Deno.NetAddr> | undefined;
  #port = 0;
  #reopenTimer: ReturnType<typeof setTimeout> | undefined;
  #listening: Promise<void> = Promise.resolve();
  #markListening: () => void = () => {};
  #closed = false;

  constructor(handler: (req: Request) => Promise<Response>, certs: SimCertificates | undefined) {
    this.#handler = handler;
    this.#certs = certs;
  }

  /** The bound port (stable across `refuse()`). */
  get port(): number {
    return this.#port;
  }

  /** Binds 127.0.0.1 (a random port the first time, the same port afterwards). */
  listen(): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    const tls = this.#certs ? { cert: this.#certs.certPem, key: this.#certs.keyPem } : {};
    this.#server = Deno.serve({
      hostname: "127.0.0.1",
      port: this.#port,
      ...tls,
      onListen: () => resolve(),
      onError: (e) => new Response(String(e), { status: 500 }),
    }, this.#handler);
    this.#port = this.#server.addr.port;
    return promise;
  }

  /** Resolves when the listener accepts connections. */
  whenListening(): Promise<void> {
    return this.#listening;
  }

  /** Ends open streams (via `endStreams`), closes the socket, and re-listens after `ms`. */
  async refuse(ms: number, endStreams: () => void): Promise<void> {
    if (this.#closed || this.#reopenTimer !== undefined) return;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#listening = promise;
    this.#markListening = resolve;
    endStreams();
    await this.#server?.shutdown();
    this.#server = undefined;
    this.#reopenTimer = setTimeout(() => {
      this.#reopenTimer = undefined;
      if (this.#closed) return;
      this.listen().then(() => this.#markListening());
    }, ms);
  }

  /** Listens again at once when a `refuse` is under way; nothing otherwise. */
  async reopen(): Promise<void> {
    if (this.#closed || this.#reopenTimer === undefined) return;
    clearTimeout(this.#reopenTimer);
    this.#reopenTimer = undefined;
    await this.listen();
    this.#markListening();
  }

  /** Stops for good. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#reopenTimer !== undefined) clearTimeout(this.#reopenTimer);
    this.#reopenTimer = undefined;
    this.#markListening();
    await this.#server?.shutdown();
    this.#server = undefined;
  }
}
