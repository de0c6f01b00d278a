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
 */
import type { Logger } from "../common/log.ts";
import type { RequestAuthorizer } from "./auth.ts";
import type { Registry } from "../common/metrics.ts";
import { recordProcessMetrics } from "./process_metrics.ts";
import { generateSelfSignedCert, type TlsPem } from "./tls.ts";

/** One named condition of `/healthz` or `/readyz`: `true` passes, `false` or a string (the reason) fails. */
export interface HealthCheck {
  name: string;
  check(): boolean | string;
}

/** Where the serving certificate comes from: a PEM pair (read from the flag files) or made at start. */
export type TlsSource = TlsPem | "self-signed";

/** Options of `startServer`. */
export interface ServerOptions {
  /** `--bind-address` (`0.0.0.0` listens everywhere). */
  hostname: string;
  /** `--secure-port`; 0 picks a free port (tests), `null` disables serving. */
  port: number | null;
  tls: TlsSource;
  registry: Registry;
  checks: { healthz: readonly HealthCheck[]; readyz: readonly HealthCheck[] };
  /** Whether this instance holds the leader Lease (reported by `/readyz`, never a failure). */
  leading: () => boolean;
  /** The body of `GET /plan` (JSON): pending actions, orphaned NodeBalancers; `/plan` is 404 without it. */
  plan?: () => unknown;
  /** Decides who may read what (delegated authentication and authorisation); every request is served without. */
  auth?: RequestAuthorizer;
  log: Logger;
}

/** A listening server. */
export interface RunningServer {
  /** Base URL, e.g. `https://127.0.0.1:10258` (loopback when bound to every address). */
  readonly url: string;
  readonly port: number;
  /** The certificate served, for clients that want to trust it. */
  readonly certPem: string;
  /** Stops listening and waits for open connections to finish. */
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
  url: URL,
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
  if (!url.searchParams.has("verbose")) return new Response("ok", { headers });
  return new Response(`${lines.join("\n")}\n${endpoint} check passed\n`, { headers });
}

const ROUTES = new Set(["/healthz", "/livez", "/readyz", "/metrics", "/plan"]);

async function handle(request: Request, options: ServerOptions): Promise<Response> {
  // Before routing, as upstream: an unknown path is no hint to someone who may not read this port.
  const refused = await options.auth?.authorize(request);
  if (refused) return refused;
  return respond(request, options);
}

function respond(request: Request, options: ServerOptions): Response {
  const url = new URL(request.url);
  const route = url.pathname.replace(/\/+$/, "") || "/";
  if (!ROUTES.has(route) || (route === "/plan" && !options.plan)) {
    return new Response("404 page not found\n", { status: 404, headers: TEXT });
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
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
  return healthResponse(endpoint, options.checks[endpoint], url, options);
}

function urlHost(hostname: string): string {
  if (hostname === "0.0.0.0" || hostname === "") return "127.0.0.1";
  if (hostname === "::") return "[::1]";
  return hostname.includes(":") ? `[${hostname}]` : hostname;
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
  const tls = options.tls === "self-signed" ? await generateSelfSignedCert() : options.tls;
  const stop = new AbortController();
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    cert: tls.certPem,
    key: tls.keyPem,
    signal: stop.signal,
    onListen: () => {},
    onError: (e) => {
      options.log.warning("health server handler failed: {error}", { error: String(e) });
      return new Response("internal error\n", { status: 500, headers: TEXT });
    },
  }, (request) => handle(request, options));
  const port = server.addr.port;
  const url = `https://${urlHost(options.hostname)}:${port}`;
  options.log.info(
    `serving /healthz, /livez, /readyz, /metrics${
      options.plan ? ", /plan" : ""
    } on {url} ({certificate} certificate)`,
    {
      url,
      certificate: options.tls === "self-signed" ? "self-signed" : "given",
    },
  );
  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    certPem: tls.certPem,
    close(): Promise<void> {
      closed ??= (async () => {
        stop.abort();
        await server.finished;
      })();
      return closed;
    },
  };
}
