/**
 * A loopback TCP forwarder for fault tests: point one client (one CCM replica) at `proxy.url` and cut it
 * off from the server while every other client still reaches the server directly.
 */

/** How a cut looks to the client: connections refused, or packets silently dropped (requests hang). */
export type CutMode = "refuse" | "blackhole";

/** Where a `TcpProxy` forwards to. */
export interface ProxyTarget {
  /** Default 127.0.0.1. */
  hostname?: string;
  port: number;
}

interface Link {
  readonly client: Deno.TcpConn;
  upstream: Deno.TcpConn | undefined;
  done: Promise<void>;
}

const BUFFER_BYTES = 64 * 1024;

function closeQuietly(conn: Deno.Conn | Deno.Listener | undefined): void {
  try {
    conn?.close();
  } catch {
    // Already closed by the other side of the link.
  }
}

/** A TCP forwarder on 127.0.0.1 (random port) with `cut()` and `restore()`. */
export class TcpProxy implements AsyncDisposable {
  readonly #target: Required<ProxyTarget>;
  readonly #links = new Set<Link>();
  #listener: Deno.TcpListener | undefined;
  #accepting: Promise<void> = Promise.resolve();
  #port = 0;
  #mode: CutMode | undefined;
  #closed = false;

  /** Starts forwarding to `target` from a random loopback port. */
  constructor(target: ProxyTarget) {
    this.#target = { hostname: target.hostname ?? "127.0.0.1", port: target.port };
    this.#listen();
  }

  /** Port the proxy listens on (stays the same across cut and restore). */
  get port(): number {
    return this.#port;
  }

  /** `http://127.0.0.1:<port>`, to use in place of the server's URL. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** The current cut, or undefined while forwarding. */
  get cutMode(): CutMode | undefined {
    return this.#mode;
  }

  /** Number of client connections open through the proxy. */
  get connections(): number {
    return this.#links.size;
  }

  /**
   * Cuts the path. "refuse" (default) closes every connection and stops listening, so connects are
   * refused; "blackhole" keeps connections open but drops every byte both ways, so requests hang.
   */
  async cut(options: { mode?: CutMode } = {}): Promise<void> {
    const mode = options.mode ?? "refuse";
    this.#mode = mode;
    if (mode === "refuse") {
      closeQuietly(this.#listener);
      this.#listener = undefined;
      await this.#accepting;
      await this.#closeLinks();
    }
  }

  /** Forwards again. Blackholed connections are closed (their bytes were lost); clients reconnect. */
  async restore(): Promise<void> {
    const was = this.#mode;
    this.#mode = undefined;
    if (was === "blackhole") await this.#closeLinks();
    if (was === "refuse" && !this.#closed) this.#listen();
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    this.#closed = true;
    closeQuietly(this.#listener);
    this.#listener = undefined;
    await this.#accepting;
    await this.#closeLinks();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #listen(): void {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: this.#port });
    this.#port = listener.addr.port;
    this.#listener = listener;
    this.#accepting = this.#acceptLoop(listener);
  }

  async #acceptLoop(listener: Deno.TcpListener): Promise<void> {
    try {
      for await (const client of listener) {
        const link: Link = { client, upstream: undefined, done: Promise.resolve() };
        this.#links.add(link);
        link.done = this.#serve(link).finally(() => this.#links.delete(link));
      }
    } catch {
      // The listener was closed by cut() or close().
    }
  }

  async #serve(link: Link): Promise<void> {
    if (this.#mode !== "blackhole") {
      try {
        link.upstream = await Deno.connect(this.#target);
      } catch {
        closeQuietly(link.client);
        return;
      }
    }
    const pumps = [this.#pump(link.client, link.upstream)];
    if (link.upstream) pumps.push(this.#pump(link.upstream, link.client));
    await Promise.all(pumps);
  }

  /** Copies `from` to `to` until either side closes; while blackholed, reads and drops. */
  async #pump(from: Deno.TcpConn, to: Deno.TcpConn | undefined): Promise<void> {
    const buffer = new Uint8Array(BUFFER_BYTES);
    try {
      for (;;) {
        const n = await from.read(buffer);
        if (n === null) break;
        if (this.#mode === "blackhole" || !to) continue;
        let written = 0;
        while (written < n) written += await to.write(buffer.subarray(written, n));
      }
    } catch {
      // One side went away; the link ends below.
    }
    closeQuietly(from);
    closeQuietly(to);
  }

  async #closeLinks(): Promise<void> {
    const links = [...this.#links];
    for (const link of links) {
      closeQuietly(link.client);
      closeQuietly(link.upstream);
    }
    await Promise.all(links.map((l) => l.done));
  }
}

/** Starts a `TcpProxy` to `target` on 127.0.0.1 (random port). */
export function startProxy(target: ProxyTarget): TcpProxy {
  return new TcpProxy(target);
}
