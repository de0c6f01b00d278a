/**
 * `/healthz`, `/livez`, `/readyz`, `/metrics` and `/plan` over HTTPS on `--bind-address`:`--secure-port` (upstream
 * default 10258), like the upstream cloud-controller-manager's secure serving. `--secure-port=0`
 * disables serving (pass `port: null`).
 *
 * Scraping: the certificate is self-signed unless `--tls-cert-file`/`--tls-private-key-file` are
 * given, so tell Prometheus to skip verification (or trust the given certificate's CA):
 *
 * ```yaml
 * scrape_configs:
 *   - job_name: linode-ccm
 *     scheme: https
 *     tls_config:
 *       insecure_skip_verify: true   # or ca_file: /path/to/ca.crt with your own certificate
 *     authorization:
 *       credentials_file: /var/run/secrets/kubernetes.io/serviceaccount/token
 *     static_configs:
 *       - targets: ["<node-ip>:10258"]
 * ```
 *
 * Every path but those of `--authorization-always-allow-paths` (default `/healthz,/readyz,/livez`) needs a
 * bearer token that `auth` accepts (`server/auth.ts`: TokenReview and SubjectAccessReview, as upstream), so
 * Prometheus sends its ServiceAccount token (`bearer_token_file`; deploy/monitoring.yaml).
 *
 * Kubelet probes: `httpGet: { path: /healthz, port: 10258, scheme: HTTPS }` (probes do not verify).
 * `/readyz?verbose` lists each check and whether this instance leads; a standby is ready too. `/plan` (JSON)
 * lists what the controllers would do (`--dry-run`) and the orphaned NodeBalancers.
 *
 * Under abuse (slow or idle clients, floods of connections) every connection is bounded in time and number by
 * `server/connections.ts`; requests are routed and authorised on the request target's path alone (the `Host`
 * header is never read), and a target that is not a plain path gets 400. The certificate is renewed or re-read
 * (`server/tls.ts`) and swapped in without a restart. HTTP/1.1 only: `node:https`, whose per-connection events
 * let the bounds run on the injected clock (`Deno.serve` has no such hooks). docs/security.md compares it all
 * with upstream's secure serving.
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Clock } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { RequestAuthorizer } from "./auth.ts";
import type { Registry } from "../common/metrics.ts";
import { ConnectionGuard, type ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from "./connections.ts";
import { recordProcessMetrics } from "./process_metrics.ts";
import { ServingCertificate, type ServingCertificateOptions, type TlsSource } from "./tls.ts";

/** One named condition of `/healthz` or `/readyz`: `true` passes, `false` or a string (the reason) fails. */
export interface HealthCheck {
  name: string;
  check(): boolean | string;
}

/** Options of `startServer`. */
export interface ServerOptions {
  /** `--bind-address` (`0.0.0.0` listens everywhere). */
  hostname: string;
  /** `--secure-port`; 0 picks a free port (tests), `null` disables serving. */
  port: number | null;
  /** The flag files (re-read every minute), a fixed pair, or a self-signed certificate renewed before expiry. */
  tls: TlsSource;
  registry: Registry;
  checks: { healthz: readonly HealthCheck[]; readyz: readonly HealthCheck[] };
  /** Whether this instance holds the leader Lease (reported by `/readyz`, never a failure). */
  leading: () => boolean;
  /** The body of `GET /plan` (JSON): pending actions, orphaned NodeBalancers; `/plan` is 404 without it. */
  plan?: () => unknown;
  /** Decides who may read what (delegated authentication and authorisation); every request is served without. */
  auth?: RequestAuthorizer;
  /** Runs the connection deadlines, the certificate renewal and the file re-reads. */
  clock: Clock;
  /** Connection bounds other than upstream's (tests shorten or widen them). */
  limits?: Partial<ConnectionLimits>;
  /** Certificate renewal and re-read settings other than the defaults (tests). */
  certificate?: ServingCertificateOptions;
  log: Logger;
}

/** A listening server. */
export interface RunningServer {
  /** Base URL, e.g. `https://127.0.0.1:10258` (loopback when bound to every address). */
  readonly url: string;
  readonly port: number;
  /** The certificate served now (it changes on renewal or a re-read), for clients that want to trust it. */
  readonly certPem: string;
  /** Stops listening, closes quiet connections and waits for the answering ones to finish. */
  close(): Promise<void>;
}

/** Content type of the Prometheus text exposition format. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const TEXT = { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" };
const JSON_HEADERS = { "content-type": "application/json", "x-content-type-options": "nosniff" };

/** The upstream servers always include a `ping` check, so an empty list still answers. */
const PING: HealthCheck = { name: "ping", check: () => true };

interface CheckResult {
  name: string;
  reason: string | null;
}

function runChecks(checks: readonly HealthCheck[]): CheckResult[] {
  return [PING, ...checks].map((c) => {
    let outcome: boolean | string;
    try {
      outcome = c.check();
    } catch (e) {
      outcome = e instanceof Error ? e.message : String(e);
    }
    if (outcome === true) return { name: c.name, reason: null };
    return { name: c.name, reason: outcome === false ? "not ok" : outcome };
  });
}

/**
 * Answers like the apiserver's health endpoints: `ok` when every check passes (`?verbose` lists
 * them), HTTP 500 with the list when one fails.
 */
function healthResponse(
  endpoint: "healthz" | "readyz",
  checks: readonly HealthCheck[],
  query: URLSearchParams,
  options: ServerOptions,
): Response {
  const results = runChecks(checks);
  const lines = results.map((r) =>
    r.reason === null ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.reason}`
  );
  const failed = results.filter((r) => r.reason !== null).map((r) => r.name);
  const headers: Record<string, string> = { ...TEXT };
  if (endpoint === "readyz") {
    const leading = options.leading();
    headers["x-ccm-leader"] = String(leading);
    lines.push(`[+]leader-election ok: ${leading ? "leading" : "standby"}`);
  }
  if (failed.length) {
    options.log.debug("{endpoint} check failed: {failed}", { endpoint, failed: failed.join(",") });
    return new Response(`${lines.join("\n")}\n${endpoint} check failed\n`, { status: 500, headers });
  }
  if (!query.has("verbose")) return new Response("ok", { headers });
  return new Response(`${lines.join("\n")}\n${endpoint} check passed\n`, { headers });
}

/** A request target's path and query, once `parseTarget` accepted it. */
export interface Target {
  /** Without trailing slashes; what is authorised and routed. */
  readonly path: string;
  readonly query: URLSearchParams;
}

/** The characters of a path segment, without percent-encoding (RFC 3986 `pchar` less `pct-encoded`). */
const SEGMENT = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]+$/;

/**
 * The path and query of an origin-form request target (`/metrics?x`), or null for every other form (absolute
 * `https://host/metrics`, authority, `*`) and for a path with empty, `.` or `..` segments or percent-encoding:
 * the path authorised is then the path routed, byte for byte, with nothing left to decode or normalise.
 * Trailing slashes are dropped (`/metrics/` is `/metrics`).
 */
export function parseTarget(target: string): Target | null {
  if (!target.startsWith("/")) return null;
  const q = target.indexOf("?");
  const rawPath = q < 0 ? target : target.slice(0, q);
  const rawQuery = q < 0 ? "" : target.slice(q + 1);
  if (/[^\x21-\x7e]|#/.test(rawQuery)) return null;
  const path = rawPath.replace(/\/+$/, "");
  if (path !== "" && path.slice(1).split("/").some((s) => s === "." || s === ".." || !SEGMENT.test(s))) {
    return null;
  }
  return { path: path || "/", query: new URLSearchParams(rawQuery) };
}

const ROUTES = new Set(["/healthz", "/livez", "/readyz", "/metrics", "/plan"]);

/** The answer to one request: 400 for a target that is not a plain path, then authorisation, then the route. */
async function answer(request: IncomingMessage, options: ServerOptions): Promise<Response> {
  const target = parseTarget(request.url ?? "");
  if (!target) {
    return new Response("400 bad request: the request target is not a path\n", {
      status: 400,
      headers: TEXT,
    });
  }
  const authorization = request.headers.authorization;
  const method = request.method ?? "GET";
  // Before routing, as upstream: an unknown path is no hint to someone who may not read this port.
  const refused = await options.auth?.authorize({ path: target.path, method, authorization });
  if (refused) return refused;
  return respond(method, target, options);
}

function respond(method: string, target: Target, options: ServerOptions): Response {
  const route = target.path;
  if (!ROUTES.has(route) || (route === "/plan" && !options.plan)) {
    return new Response("404 page not found\n", { status: 404, headers: TEXT });
  }
  if (method !== "GET" && method !== "HEAD") {
    return new Response("method not allowed\n", { status: 405, headers: { ...TEXT, allow: "GET, HEAD" } });
  }
  if (route === "/metrics") {
    recordProcessMetrics(options.registry);
    return new Response(options.registry.render(), { headers: { "content-type": METRICS_CONTENT_TYPE } });
  }
  if (route === "/plan" && options.plan) {
    return new Response(`${JSON.stringify(options.plan(), null, 2)}\n`, { headers: JSON_HEADERS });
  }
  // `/livez` is upstream's name for the liveness checks, which are the `/healthz` ones here.
  const endpoint = route === "/readyz" ? "readyz" : "healthz";
  return healthResponse(endpoint, options.checks[endpoint], target.query, options);
}

/** Answers one request on `node:https`'s objects; never rejects. */
async function serveRequest(
  request: IncomingMessage,
  response: ServerResponse,
  options: ServerOptions,
  guard: ConnectionGuard,
): Promise<void> {
  const socket = request.socket;
  guard.requestStarted(socket);
  response.once("close", () => guard.requestEnded(socket));
  let answered: Response;
  try {
    answered = await answer(request, options);
  } catch (e) {
    options.log.warning("secure port handler failed: {error}", {
      error: e instanceof Error ? e.message : String(e),
    });
    answered = new Response("internal error\n", { status: 500, headers: TEXT });
  }
  const body = new Uint8Array(await answered.arrayBuffer());
  if (response.destroyed || socket.destroyed) return;
  const headers = { ...Object.fromEntries(answered.headers), "content-length": String(body.byteLength) };
  // A body is never read: close rather than wait for a slow one to arrive before the next request.
  const connection = request.headers["content-length"] || request.headers["transfer-encoding"]
    ? "close"
    : undefined;
  response.writeHead(answered.status, connection ? { ...headers, connection } : headers);
  response.end(body);
}

/** Answers what the HTTP parser refuses (431 for a head over `maxHeaderBytes`, else 400) and closes. */
function refuseUnparsable(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === "HPE_HEADER_OVERFLOW"
    ? "431 Request Header Fields Too Large"
    : "400 Bad Request";
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

function urlHost(hostname: string): string {
  if (hostname === "0.0.0.0" || hostname === "") return "127.0.0.1";
  if (hostname === "::") return "[::1]";
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

/** A `node:https` server bounded by `guard`, serving `certificate` (swapped in as it changes). */
function secureServer(
  options: ServerOptions,
  guard: ConnectionGuard,
  certificate: ServingCertificate,
  limits: ConnectionLimits,
): Server {
  const server = createServer({
    cert: certificate.pem.certPem,
    key: certificate.pem.keyPem,
    minVersion: "TLSv1.2",
    maxHeaderSize: limits.maxHeaderBytes,
    // Node's own timers (real time) are off: `ConnectionGuard` runs every bound on the injected clock.
    handshakeTimeout: 0,
    headersTimeout: 0,
    requestTimeout: 0,
    keepAliveTimeout: 0,
  }, (request, response) => serveRequest(request, response, options, guard));
  guard.attach(server);
  server.on("clientError", refuseUnparsable);
  const handshakeErrors = options.registry.counter(
    "ccm_secure_port_tls_handshake_errors_total",
    "TLS handshakes of the secure port that failed (upstream: apiserver_tls_handshake_errors_total)",
  );
  server.on("tlsClientError", () => handshakeErrors.inc());
  certificate.onChange((pem) => server.setSecureContext({ cert: pem.certPem, key: pem.keyPem }));
  return server;
}

/** Node's listen errors as the `Deno.errors` that `Deno.serve` threw, so `main.ts` reports them as before. */
function listenError(e: Error & { code?: string }, hostname: string, port: number): Error {
  const where = `${hostname}:${port}`;
  if (e.code === "EADDRINUSE") return new Deno.errors.AddrInUse(`Address already in use: ${where}`);
  if (e.code === "EADDRNOTAVAIL") return new Deno.errors.AddrNotAvailable(`Address not available: ${where}`);
  if (e.code === "EACCES") return new Deno.errors.PermissionDenied(`Permission denied: ${where}`);
  return e;
}

function listen(server: Server, port: number, hostname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (e: Error) => reject(listenError(e, hostname, port));
    server.once("error", fail);
    server.listen(port, hostname, () => {
      server.off("error", fail);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

/** Starts the health and metrics server; resolves once it listens, or to `null` when `port` is `null`. */
export async function startServer(options: ServerOptions & { port: number }): Promise<RunningServer>;
/** Starts the health and metrics server; resolves once it listens, or to `null` when `port` is `null`. */
export async function startServer(options: ServerOptions): Promise<RunningServer | null>;
export async function startServer(options: ServerOptions): Promise<RunningServer | null> {
  if (options.port === null) {
    options.log.info("secure serving disabled (--secure-port=0)");
    return null;
  }
  const { clock, log } = options;
  const certificate = await ServingCertificate.start(options.tls, { clock, log }, options.certificate);
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
  const guard = new ConnectionGuard({ clock, log, metrics: options.registry }, limits);
  const server = secureServer(options, guard, certificate, limits);
  const port = await listen(server, options.port, options.hostname);
  const stop = new AbortController();
  const refreshing = certificate.run(stop.signal).catch((e: unknown) => {
    log.error("serving certificate loop failed: {error}", {
      error: e instanceof Error ? e.message : String(e),
    });
  });
  const url = `https://${urlHost(options.hostname)}:${port}`;
  log.info(
    `serving /healthz, /livez, /readyz, /metrics${
      options.plan ? ", /plan" : ""
    } on {url} ({certificate} certificate)`,
    { url, certificate: certificate.kind },
  );
  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    get certPem() {
      return certificate.pem.certPem;
    },
    close(): Promise<void> {
      closed ??= (async () => {
        stop.abort();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        guard.shutdown();
        await stopped;
        await refreshing;
      })();
      return closed;
    },
  };
}
