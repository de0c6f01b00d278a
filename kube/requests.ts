/**
 * How every Kubernetes API request leaves the process: counted, timed out, fenced (writes only) and, when it
 * fails, turned into a `KubeApiError` that carries no credentials.
 */
import {
  ApiException,
  type HttpLibrary,
  IsomorphicFetchHttpLibrary,
  type RequestContext,
  type ResponseContext,
  wrapHttpLibrary,
} from "@kubernetes/client-node";
import type { WriteGuard } from "../common/dry_run.ts";
import type { Fence } from "../lease/fence.ts";
import type { Counter, Histogram, Registry } from "../server/metrics.ts";

/** A failed Kubernetes API call: HTTP status (0 when no response came back), Status `reason`, message. */
export class KubeApiError extends Error {
  override name = "KubeApiError";
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly retryAfterSec?: number,
  ) {
    super(message);
  }
}

/** True for HTTP 409 (a precondition or resourceVersion conflict, or AlreadyExists). */
export function isConflict(e: unknown): boolean {
  return statusOf(e) === 409;
}

/** True for HTTP 422 (Invalid: the object would break a validation rule, e.g. an immutable field). */
export function isInvalid(e: unknown): boolean {
  return statusOf(e) === 422;
}

/** True for HTTP 404. */
export function isNotFound(e: unknown): boolean {
  return statusOf(e) === 404;
}

function statusOf(e: unknown): number | undefined {
  if (e instanceof KubeApiError) return e.status;
  if (e instanceof ApiException) return e.code;
  return undefined;
}

function parseStatusBody(body: unknown): { reason?: string; message?: string } {
  let value = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      return {};
    }
  }
  if (typeof value !== "object" || value === null) return {};
  const { reason, message } = value as Record<string, unknown>;
  return {
    reason: typeof reason === "string" ? reason : undefined,
    message: typeof message === "string" ? message : undefined,
  };
}

/**
 * Turns client-node's `ApiException` into a `KubeApiError`; anything else is returned unchanged. The
 * exception is not kept as `cause`: its text embeds whole response bodies and headers.
 */
export function toKubeApiError(e: unknown): unknown {
  if (!(e instanceof ApiException)) return e;
  const status = parseStatusBody(e.body);
  const reason = status.reason ?? `HTTP${e.code}`;
  const retryAfter = Number(e.headers?.["retry-after"]);
  return new KubeApiError(
    e.code,
    reason,
    `Kubernetes API returned HTTP ${e.code} ${reason}${status.message ? `: ${status.message}` : ""}`,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

/** The verb and resource of a request, as client-go labels its metrics (`list`, `watch`, `nodes/status`). */
export function describeRequest(method: string, url: string): { verb: string; resource: string } {
  const parsed = new URL(url);
  const parts = parsed.pathname.split("/").filter(Boolean);
  // /api/v1/... or /apis/<group>/<version>/...
  let rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
  if (rest[0] === "namespaces" && rest.length >= 3) rest = rest.slice(2);
  const [resource = "", name, sub] = rest;
  const fullResource = sub ? `${resource}/${sub}` : resource;
  const verbs: Record<string, string> = { POST: "create", PUT: "update", PATCH: "patch" };
  let verb = verbs[method] ?? method.toLowerCase();
  if (method === "GET") {
    if (parsed.searchParams.get("watch") === "true") verb = "watch";
    else if (!name) verb = "list";
    else verb = "get";
  } else if (method === "DELETE" && !name) verb = "deletecollection";
  return { verb, resource: fullResource };
}

/** The request counter `ccm_kube_requests_total{verb,resource,code}` in `metrics`. */
export function kubeRequestsCounter(metrics: Registry): Counter {
  return metrics.counter("ccm_kube_requests_total", "Kubernetes API requests by verb, resource and code", [
    "verb",
    "resource",
    "code",
  ]);
}

function kubeRequestSeconds(metrics: Registry): Histogram {
  return metrics.histogram("ccm_kube_request_duration_seconds", "Kubernetes API request latency", [
    "verb",
    "resource",
  ]);
}

/** Options of `makeHttpLibrary`. */
export interface HttpLibraryOptions {
  metrics: Registry;
  /** Asked immediately before every write (POST, PUT, PATCH, DELETE) is sent. */
  fence?: Fence;
  /** `--dry-run`: asked before every write of every client, the Lease's included, and refuses it. */
  writeGuard?: WriteGuard;
  /** Abandons a request that has not answered in this time (default 30 s). */
  requestTimeoutMs?: number;
}

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function networkError(e: unknown, timedOut: boolean, timeoutMs: number): KubeApiError {
  if (timedOut) return new KubeApiError(0, "Timeout", `Kubernetes API did not answer within ${timeoutMs} ms`);
  const cause = e instanceof Error ? e.cause : undefined;
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "";
  return new KubeApiError(0, "Unreachable", `Cannot reach the Kubernetes API${code ? `: ${code}` : ""}`);
}

/** The transport for generated API clients: undici fetch plus counting, a timeout and the write fence. */
export function makeHttpLibrary(options: HttpLibraryOptions): HttpLibrary {
  const inner = new IsomorphicFetchHttpLibrary();
  const counter = kubeRequestsCounter(options.metrics);
  const seconds = kubeRequestSeconds(options.metrics);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  return wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      const method = request.getHttpMethod().toString();
      const labels = describeRequest(method, request.getUrl());
      if (!READ_METHODS.has(method)) {
        options.writeGuard?.assertWritable("kubernetes", `${method} ${new URL(request.getUrl()).pathname}`);
        options.fence?.assertLeading();
      }
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), timeoutMs);
      const outer = request.getSignal();
      request.setSignal(outer ? AbortSignal.any([outer, timeout.signal]) : timeout.signal);
      const started = performance.now();
      try {
        const response = await inner.send(request).toPromise();
        counter.inc({ ...labels, code: String(response.httpStatusCode) });
        return response;
      } catch (e) {
        counter.inc({ ...labels, code: "error" });
        if (outer?.aborted) throw e;
        throw networkError(e, timeout.signal.aborted, timeoutMs);
      } finally {
        clearTimeout(timer);
        seconds.observe(labels, (performance.now() - started) / 1000);
      }
    },
  });
}
