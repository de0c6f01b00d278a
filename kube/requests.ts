/**
 * How every Kubernetes API request leaves the process: counted, timed out, fenced (writes only) and, when it
 * fails, turned into a `KubeApiError` that carries no credentials.
 */
import { Buffer } from "node:buffer";
import {
  ApiException,
  type ConfigurationOptions,
  type HttpLibrary,
  IsomorphicFetchHttpLibrary,
  Observable,
  type RequestContext,
  ResponseContext,
  wrapHttpLibrary,
} from "@kubernetes/client-node";
import { linkSignals } from "../common/abort.ts";
import type { WriteGuard } from "../common/write_guard.ts";
import type { Fence } from "../common/write_guard.ts";
import type { Counter, Histogram, Registry } from "../common/metrics.ts";

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
  /** Abandons a request that has not answered, its whole body included, in this time (default 30 s). */
  requestTimeoutMs?: number;
}

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function networkError(e: unknown, timedOut: boolean, timeoutMs: number): KubeApiError {
  if (timedOut) return new KubeApiError(0, "Timeout", `Kubernetes API did not answer within ${timeoutMs} ms`);
  const cause = e instanceof Error ? e.cause : undefined;
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "";
  return new KubeApiError(0, "Unreachable", `Cannot reach the Kubernetes API${code ? `: ${code}` : ""}`);
}

/**
 * Reads a whole body, giving up when `signal` aborts: the body stream does not always end with the request's
 * signal. (client-node's own `binary()` calls a method undici's Response lacks.)
 */
async function readBody(body: ResponseContext["body"], signal: AbortSignal | undefined): Promise<Uint8Array> {
  const stream = body.stream();
  if (!stream) return new TextEncoder().encode(await body.text());
  const reader = stream.getReader();
  const onAbort = () => reader.cancel(signal?.reason).catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const chunks: Uint8Array[] = [];
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) break;
      chunks.push(value);
    }
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** A response body read in full. */
function bufferedBody(bytes: Uint8Array): ResponseContext["body"] {
  return {
    text: () => Promise.resolve(new TextDecoder().decode(bytes)),
    binary: () => Promise.resolve(Buffer.from(bytes)),
    stream: () =>
      new ReadableStream({
        start(controller) {
          controller.enqueue(bytes.slice());
          controller.close();
        },
      }),
  };
}

/** Per-call options of a generated client that make the request abort with `signal` (none without one). */
export function signalOptions(signal: AbortSignal | undefined): ConfigurationOptions | undefined {
  if (!signal) return undefined;
  return {
    middlewareMergeStrategy: "append",
    middleware: [{
      pre(context) {
        context.setSignal(signal);
        return new Observable(Promise.resolve(context));
      },
      post: (response) => new Observable(Promise.resolve(response)),
    }],
  };
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
      // Not AbortSignal.any: an informer's stop signal lives as long as the process (see common/abort.ts).
      const linked = linkSignals(outer, timeout.signal);
      request.setSignal(linked.signal);
      const started = performance.now();
      try {
        const response = await inner.send(request).toPromise();
        // Read under the same timeout: a body that stalls after the headers must not hold a relist or a stop.
        const body = await readBody(response.body, request.getSignal());
        counter.inc({ ...labels, code: String(response.httpStatusCode) });
        return new ResponseContext(response.httpStatusCode, response.headers, bufferedBody(body));
      } catch (e) {
        counter.inc({ ...labels, code: "error" });
        if (outer?.aborted) throw e;
        throw networkError(e, timeout.signal.aborted, timeoutMs);
      } finally {
        linked[Symbol.dispose]();
        clearTimeout(timer);
        seconds.observe(labels, (performance.now() - started) / 1000);
      }
    },
  });
}
