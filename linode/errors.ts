/**
 * The one error type that leaves `linode/`. Built from axios errors, api-v4 validation arrays and
 * paging checks, and never carrying the axios error itself: its config holds the token.
 */

/** What a caller does about a failed Linode call. */
export type LinodeErrorKind =
  | "not_found"
  | "rate_limited"
  | "server"
  | "timeout"
  | "network"
  | "client"
  | "auth";

/**
 * A transient answer the API (or a proxy in front of it) gives, as linodego's retry conditions name them: the
 * Linode is busy (400 "Linode busy."), 408, 503 (in a maintenance window when `X-Maintenance-Mode` is set), an
 * HTML page instead of the API's JSON (`proxy_page`), a 200 whose body has the wrong shape (`bad_body`).
 */
export type TransientCause =
  | "busy"
  | "request_timeout"
  | "unavailable"
  | "maintenance"
  | "proxy_page"
  | "bad_body";

/** One reason from a Linode error body (`{"errors":[{"reason","field"}]}`). */
export interface LinodeReason {
  readonly reason: string;
  readonly field?: string;
}

/** The request a `LinodeApiError` belongs to. */
export interface LinodeErrorInit {
  /** HTTP status, or 0 when no response arrived (network, timeout, not sent). */
  status: number;
  kind: LinodeErrorKind;
  method: string;
  /** Route template with `{id}` for numeric segments, e.g. `/linode/instances/{id}`. */
  route: string;
  reasons?: readonly LinodeReason[];
  /** The server's `Retry-After`, in ms, when it sent one. */
  retryAfterMs?: number;
  /** Set for the transient answers that linodego retries (and for maintenance, which it does not). */
  transient?: TransientCause;
  cause?: unknown;
}

const MAX_REASONS_IN_MESSAGE = 3;

// What a failure without an HTTP status says in the message.
const STATUSLESS: Record<LinodeErrorKind, string> = {
  timeout: "timed out",
  network: "network error",
  auth: "no usable API token",
  client: "invalid request",
  server: "inconsistent response",
  not_found: "not found",
  rate_limited: "rate limited",
};

// What linodego says for a failed answer without the API's reasons (an HTML page from a proxy, an empty body).
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

function describe(init: LinodeErrorInit): string {
  const head = init.status > 0 ? `HTTP ${init.status}` : STATUSLESS[init.kind];
  const reasons = (init.reasons ?? []).slice(0, MAX_REASONS_IN_MESSAGE)
    .map((r) => r.field ? `${r.field}: ${r.reason}` : r.reason);
  return reasons.length ? `${head} (${reasons.join("; ")})` : head;
}

/** A failed Linode API call: "Cannot list linode instances: HTTP 503". */
export class LinodeApiError extends Error {
  override name = "LinodeApiError";
  /** HTTP status, or 0 for network errors, timeouts and requests refused before sending. */
  readonly status: number;
  readonly kind: LinodeErrorKind;
  readonly method: string;
  readonly route: string;
  readonly reasons: readonly LinodeReason[];
  readonly retryAfterMs: number | undefined;
  readonly transient: TransientCause | undefined;

  constructor(action: string, init: LinodeErrorInit) {
    super(
      `Cannot ${action}: ${describe(init)}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.status = init.status;
    this.kind = init.kind;
    this.method = init.method;
    this.route = init.route;
    this.reasons = init.reasons ?? [];
    this.retryAfterMs = init.retryAfterMs;
    this.transient = init.transient;
  }

  /**
   * The error as linodego prints it, which the Go CCM's Events carry (`[400] IPv4 address is not reserved`,
   * `[400] [label] Label must be unique`): the status in three digits and every reason, its field in brackets.
   * No response: linodego's code for a Go error (2) and what failed.
   */
  get goText(): string {
    if (this.status === 0) return `[002] ${STATUSLESS[this.kind]}`;
    const reasons = this.reasons.map((r) => r.field ? `[${r.field}] ${r.reason}` : r.reason);
    const text = reasons.length ? reasons.join("; ") : STATUS_TEXT[this.status] ?? `HTTP ${this.status}`;
    return `[${String(this.status).padStart(3, "0")}] ${text}`;
  }

  /** Safe fields only (no headers, token or body), so `JSON.stringify(error)` is useful. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      status: this.status,
      kind: this.kind,
      method: this.method,
      route: this.route,
      reasons: this.reasons,
      retryAfterMs: this.retryAfterMs,
      transient: this.transient,
    };
  }
}

/** True when `e` is a Linode 404 (the object is gone). */
export function isNotFound(e: unknown): boolean {
  return e instanceof LinodeApiError && e.kind === "not_found";
}

/** True when trying again later may succeed: 429, 5xx, timeouts, network errors. */
export function isRetryable(e: unknown): boolean {
  return e instanceof LinodeApiError &&
    (e.kind === "rate_limited" || e.kind === "server" || e.kind === "timeout" || e.kind === "network");
}

/** The kind of an HTTP failure status. */
export function kindForStatus(status: number): LinodeErrorKind {
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limited";
  if (status === 401 || status === 403) return "auth";
  if (status >= 500) return "server";
  return "client";
}

/** The reason linodego looks for in a 400 it retries. */
export const LINODE_BUSY = "Linode busy.";

/**
 * The transient cause of an HTTP failure, if any. `headerOf` reads a response header; `body` is the parsed
 * body (a string when it was not JSON, as an HTML page).
 */
export function transientCause(
  status: number,
  body: unknown,
  headerOf: (name: string) => unknown,
): TransientCause | undefined {
  const contentType = String(headerOf("content-type") ?? "");
  const page = typeof body === "string" && (contentType.includes("text/html") || /^\s*</.test(body));
  if (status === 503 && headerOf("x-maintenance-mode") != null) return "maintenance";
  if (status === 400 && parseReasons(body).some((r) => r.reason === LINODE_BUSY)) return "busy";
  if (status === 408) return "request_timeout";
  if (page) return "proxy_page";
  if (status === 503) return "unavailable";
  return undefined;
}

/**
 * The kind of an HTTP failure from its status and body. A 404 is proof that an object is gone only when it
 * carries the Linode API's own error body (`{"errors":[{"reason":"Not found"}]}`): an HTML or empty 404 comes
 * from a proxy or load balancer in front of the API and says nothing about the object, so it is an unknown
 * (`server`: retried, never acted on).
 */
export function kindForResponse(status: number, body: unknown): LinodeErrorKind {
  if (status === 404 && parseReasons(body).length === 0) return "server";
  return kindForStatus(status);
}

/** Parses `Retry-After` (delay in seconds or an HTTP date) into ms, capped at `maxMs`. */
export function parseRetryAfterMs(value: unknown, nowMs: number, maxMs: number): number | undefined {
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const text = String(value).trim();
  if (text === "") return undefined;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(maxMs, Math.max(0, Math.round(ms)));
}

/** Reads `{"errors":[{reason, field}]}` out of an unknown body, keeping only strings. */
export function parseReasons(body: unknown): LinodeReason[] {
  const errors = Array.isArray(body) ? body : isRecord(body) ? body.errors : undefined;
  if (!Array.isArray(errors)) return [];
  const out: LinodeReason[] = [];
  for (const item of errors) {
    if (!isRecord(item) || typeof item.reason !== "string") continue;
    out.push(
      typeof item.field === "string" ? { reason: item.reason, field: item.field } : { reason: item.reason },
    );
  }
  return out;
}

/** True for a plain object-like value. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}
