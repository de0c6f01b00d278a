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

/** A request's authorization attributes, as the apiserver's `RequestInfo` has them. */
export interface RequestAttributes {
  /** get, list, watch, create, update, patch, delete, deletecollection. */
  readonly verb: string;
  /** API group, `""` for the core group. */
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  /** `""` when cluster-scoped or across all namespaces. */
  readonly namespace: string;
  readonly name: string;
}

const VERBS: Readonly<Record<string, string>> = { POST: "create", PUT: "update", PATCH: "patch" };

/** Subresources of a Namespace itself (`/namespaces/{name}/status`), not resources in it. */
const NAMESPACE_SUBRESOURCES: ReadonlySet<string> = new Set(["status", "finalize"]);

/**
 * The attributes of a request to `url` (`/api/v1/...`, `/apis/<group>/<version>/...`), as upstream's
 * RequestInfo reads them: a Namespace is in its own namespace, a list or watch narrowed to one name by
 * `fieldSelector=metadata.name` names it.
 */
export function requestAttributes(method: string, url: string): RequestAttributes {
  const parsed = new URL(url);
  const parts = parsed.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const group = parts[0] === "apis" ? parts[1] ?? "" : "";
  let rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
  const watchPath = rest[0] === "watch";
  if (watchPath) rest = rest.slice(1);
  let namespace = "";
  if (rest[0] === "namespaces" && rest.length > 1) {
    namespace = rest[1] ?? "";
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] ?? "")) rest = rest.slice(2);
  }
  const [resource = "", name = "", subresource = ""] = rest;
  const watch = parsed.searchParams.get("watch");
  let verb = VERBS[method] ?? method.toLowerCase();
  if (method === "GET" && (watchPath || (!name && watch !== null && watch !== "false" && watch !== "0"))) {
    verb = "watch";
  } else if (method === "GET") verb = name ? "get" : "list";
  else if (method === "DELETE" && !name) verb = "deletecollection";
  const selected = !name && (verb === "list" || verb === "watch") ? selectedName(parsed.searchParams) : "";
  return { verb, group, resource, subresource, namespace, name: name || selected };
}

/** The one name a list or watch is narrowed to by `fieldSelector=metadata.name=<name>`, as RequestInfo reads it. */
function selectedName(query: URLSearchParams): string {
  const names = (query.get("fieldSelector") ?? "").split(",")
    .map((t) => /^metadata\.name==?(.+)$/.exec(t.trim())?.[1])
    .filter((n): n is string => n !== undefined);
  return names.length === 1 ? names[0] ?? "" : "";
}

/** The verb and resource of a request, as client-go labels its metrics (`list`, `watch`, `nodes/status`). */
export function describeRequest(method: string, url: string): { verb: string; resource: string } {
  const { verb, resource, subresource } = requestAttributes(method, url);
  return { verb, resource: subresource ? `${resource}/${subresource}` : resource };
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

/**
 * Told what each answer says about the client's permissions (`kube/permissions.ts` implements it): a 403 may be
 * a missing RBAC permission, any other success proves one.
 */
export interface PermissionObserver {
  /**
   * A 403 to `method url`, with the Status message (undefined when no body was read, as for a watch): the error
   * to reject the call with when RBAC refused it, else undefined (an admission webhook's refusal, say).
   */
  denied(method: string, url: string, apiMessage?: string): Error | undefined;
  /** A 2xx answer to `method url`. */
  allowed(method: string, url: string): void;
}

/** Options of `makeHttpLibrary`. */
export interface HttpLibraryOptions {
  metrics: Registry;
  /** Told about every answer: a refusal for want of an RBAC permission becomes its error. */
  permissions?: PermissionObserver;
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
      let answer: { response: ResponseContext; body: Uint8Array };
      try {
        const response = await inner.send(request).toPromise();
        // Read under the same timeout: a body that stalls after the headers must not hold a relist or a stop.
        const body = await readBody(response.body, request.getSignal());
        counter.inc({ ...labels, code: String(response.httpStatusCode) });
        answer = { response, body };
      } catch (e) {
        counter.inc({ ...labels, code: "error" });
        if (outer?.aborted) throw e;
        throw networkError(e, timeout.signal.aborted, timeoutMs);
      } finally {
        linked[Symbol.dispose]();
        clearTimeout(timer);
        seconds.observe(labels, (performance.now() - started) / 1000);
      }
      const { response, body } = answer;
      observePermission(options.permissions, {
        method,
        url: request.getUrl(),
        status: response.httpStatusCode,
        body,
      });
      return new ResponseContext(response.httpStatusCode, response.headers, bufferedBody(body));
    },
  });
}

/** Tells `observer` what an answer says about permissions; throws the error of an RBAC refusal. */
function observePermission(
  observer: PermissionObserver | undefined,
  answer: { method: string; url: string; status: number; body: Uint8Array },
): void {
  if (!observer) return;
  if (answer.status >= 200 && answer.status < 300) observer.allowed(answer.method, answer.url);
  if (answer.status !== 403) return;
  const { message } = parseStatusBody(new TextDecoder().decode(answer.body));
  const refused = observer.denied(answer.method, answer.url, message ?? "");
  if (refused) throw refused;
}
