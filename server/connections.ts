/**
 * The secure port's connections under abuse: every phase of a connection has a deadline on the injected clock,
 * and the number of open connections is capped, overall and per client address.
 *
 * Upstream (k8s.io/apiserver `SecureServingInfo.Serve`) sets Go's `http.Server` to `ReadHeaderTimeout` 32 s
 * (which Go also applies to the TLS handshake), `IdleTimeout` 90 s and `MaxHeaderBytes` 1 MiB, and caps neither
 * connections nor the time a response may take. Here:
 *
 * | phase       | from                              | until                        | bound (default)           |
 * | ----------- | --------------------------------- | ---------------------------- | ------------------------- |
 * | `handshake` | the TCP accept                    | the TLS handshake's end      | 32 s (as upstream)        |
 * | `headers`   | the handshake's end               | the first request's headers  | 32 s (as upstream)        |
 * | `active`    | a request's headers               | its response is sent         | 60 s (upstream: none)     |
 * | `idle`      | a response is sent                | the next request's headers   | 90 s (as upstream)        |
 *
 * A connection past its bound is destroyed. Over `maxConnectionsPerAddress` from one address a new connection
 * is refused; over `maxConnections` in all, the oldest connection not answering a request (handshaking, sending
 * headers or idle) is closed to make room, and the new one is refused only when every connection is answering
 * one. So slow clients cannot starve a kubelet probe: its connection answers within milliseconds.
 */
import type { Server } from "node:https";
import type { Socket } from "node:net";
import type { Clock } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Counter, Gauge, Registry } from "../common/metrics.ts";

/** The bounds of the secure port's connections; the defaults are `DEFAULT_CONNECTION_LIMITS`. */
export interface ConnectionLimits {
  /** From accept to the end of the TLS handshake. */
  readonly handshakeTimeoutMs: number;
  /** From the handshake's end to the end of the first request's headers. */
  readonly headerTimeoutMs: number;
  /** From a request's headers to the end of its response. */
  readonly responseTimeoutMs: number;
  /** From the end of a response to the next request's headers. */
  readonly idleTimeoutMs: number;
  /** The largest request head (request line and headers) read; a larger one gets 431. */
  readonly maxHeaderBytes: number;
  /** Open connections in all. */
  readonly maxConnections: number;
  /** Open connections from one client address. */
  readonly maxConnectionsPerAddress: number;
}

/**
 * Upstream's timeouts; the response bound and the caps are this CCM's (upstream has none). The head limit is
 * smaller than upstream's 1 MiB: a bearer token and a few headers fit in 64 KiB, and a flood of capped
 * connections then buffers at most 8 MiB.
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  handshakeTimeoutMs: 32_000,
  headerTimeoutMs: 32_000,
  responseTimeoutMs: 60_000,
  idleTimeoutMs: 90_000,
  maxHeaderBytes: 64 * 1024,
  maxConnections: 128,
  maxConnectionsPerAddress: 32,
});

/** Where a connection is in its life. */
export type ConnectionPhase = "handshake" | "headers" | "active" | "idle";

/** Why a connection was closed by the server, the `reason` label of `ccm_secure_port_connections_dropped_total`. */
export type DropReason =
  | "handshake_timeout"
  | "header_timeout"
  | "response_timeout"
  | "idle_timeout"
  | "evicted"
  | "over_address_limit"
  | "over_limit";

const TIMEOUT_OF: Readonly<Record<ConnectionPhase, DropReason>> = {
  handshake: "handshake_timeout",
  headers: "header_timeout",
  active: "response_timeout",
  idle: "idle_timeout",
};

interface Connection {
  readonly socket: Socket;
  readonly address: string;
  readonly key: string;
  phase: ConnectionPhase | null;
  /** Requests whose response is not sent yet (HTTP/1.1 pipelining may queue several). */
  pending: number;
  timer: AbortController | null;
}

/** What `ConnectionGuard` uses. */
export interface ConnectionGuardDeps {
  clock: Pick<Clock, "sleep">;
  log: Logger;
  metrics: Registry;
}

/** A socket's `address:port`, the same for the TCP socket and the TLS socket over it. */
function peerKey(socket: Socket): string {
  return `${socket.remoteAddress ?? "?"}:${socket.remotePort ?? "?"}`;
}

/** Tracks the connections of one `node:https` server and enforces `ConnectionLimits` on them. */
export class ConnectionGuard {
  readonly #deps: ConnectionGuardDeps;
  readonly #limits: ConnectionLimits;
  /** By peer key, oldest first (Map order is insertion order). */
  readonly #connections = new Map<string, Connection>();
  readonly #perAddress = new Map<string, number>();
  readonly #open: Gauge;
  readonly #dropped: Counter;
  #closing = false;

  constructor(deps: ConnectionGuardDeps, limits: ConnectionLimits) {
    this.#deps = deps;
    this.#limits = limits;
    this.#open = deps.metrics.gauge(
      "ccm_secure_port_connections",
      "Open connections of the secure port, by phase (handshake, headers, active, idle)",
      ["phase"],
    );
    for (const phase of Object.keys(TIMEOUT_OF)) this.#open.set({ phase }, 0);
    this.#dropped = deps.metrics.counter(
      "ccm_secure_port_connections_dropped_total",
      "Connections of the secure port closed or refused by the server, by reason",
      ["reason"],
    );
  }

  /** Watches `server`'s connections from accept to close. Call before it listens. */
  attach(server: Server): void {
    server.on("connection", (socket: Socket) => this.#accept(socket));
    server.on("secureConnection", (socket: Socket) => {
      const connection = this.#connections.get(peerKey(socket));
      if (connection?.phase === "handshake") this.#enter(connection, "headers");
    });
  }

  /** Marks the start of a request on `socket` (its headers are read). */
  requestStarted(socket: Socket): void {
    const connection = this.#connections.get(peerKey(socket));
    if (!connection) return;
    connection.pending++;
    if (connection.phase !== "active") this.#enter(connection, "active");
  }

  /** Marks the end of a request's response on `socket`. */
  requestEnded(socket: Socket): void {
    const connection = this.#connections.get(peerKey(socket));
    if (!connection || connection.pending === 0) return;
    connection.pending--;
    if (connection.pending > 0) return;
    if (this.#closing) connection.socket.destroy();
    else this.#enter(connection, "idle");
  }

  /** Closes every connection that is not answering a request now, and each other one once it has answered. */
  shutdown(): void {
    this.#closing = true;
    for (const c of [...this.#connections.values()]) if (c.phase !== "active") c.socket.destroy();
  }

  #accept(socket: Socket): void {
    const address = socket.remoteAddress ?? "?";
    if ((this.#perAddress.get(address) ?? 0) >= this.#limits.maxConnectionsPerAddress) {
      return this.#refuse(socket, "over_address_limit");
    }
    if (this.#connections.size >= this.#limits.maxConnections) {
      const victim = [...this.#connections.values()].find((c) => c.phase !== "active");
      if (!victim) return this.#refuse(socket, "over_limit");
      this.#drop(victim, "evicted");
    }
    const connection: Connection = {
      socket,
      address,
      key: peerKey(socket),
      phase: null,
      pending: 0,
      timer: null,
    };
    this.#connections.set(connection.key, connection);
    this.#perAddress.set(address, (this.#perAddress.get(address) ?? 0) + 1);
    socket.once("close", () => this.#forget(connection));
    this.#enter(connection, "handshake");
  }

  /** Moves `connection` to `phase` and arms that phase's deadline. */
  #enter(connection: Connection, phase: ConnectionPhase): void {
    if (connection.phase) this.#open.dec({ phase: connection.phase });
    this.#open.inc({ phase });
    connection.phase = phase;
    connection.timer?.abort();
    const timer = new AbortController();
    connection.timer = timer;
    const bound = {
      handshake: this.#limits.handshakeTimeoutMs,
      headers: this.#limits.headerTimeoutMs,
      active: this.#limits.responseTimeoutMs,
      idle: this.#limits.idleTimeoutMs,
    }[phase];
    this.#deps.clock.sleep(bound, timer.signal).then(
      () => this.#drop(connection, TIMEOUT_OF[phase]),
      () => {}, // the phase ended first
    );
  }

  #drop(connection: Connection, reason: DropReason): void {
    this.#dropped.inc({ reason });
    this.#deps.log.debug("closing a secure port connection from {address}: {reason}", {
      address: connection.address,
      reason,
    });
    this.#forget(connection);
    connection.socket.destroy();
  }

  #refuse(socket: Socket, reason: DropReason): void {
    this.#dropped.inc({ reason });
    this.#deps.log.debug("refusing a secure port connection from {address}: {reason}", {
      address: socket.remoteAddress ?? "?",
      reason,
    });
    socket.destroy();
  }

  #forget(connection: Connection): void {
    connection.timer?.abort();
    connection.timer = null;
    if (this.#connections.get(connection.key) !== connection) return;
    this.#connections.delete(connection.key);
    if (connection.phase) this.#open.dec({ phase: connection.phase });
    const left = (this.#perAddress.get(connection.address) ?? 1) - 1;
    if (left > 0) this.#perAddress.set(connection.address, left);
    else this.#perAddress.delete(connection.address);
  }
}
