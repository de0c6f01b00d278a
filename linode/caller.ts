/**
 * One Linode call, end to end: concurrency slot, token, fence, per-attempt timeout, retries with
 * backoff and `Retry-After`, paging, body shape checks, metrics and call counts. `client.ts` declares the
 * calls; this runs them.
 *
 * Retry rule: GET, PUT and DELETE are idempotent and are retried on 429, 5xx, timeouts and network
 * errors. A POST creates something, so after a timeout, a network error or a 500/502/504 the server
 * may have acted and the POST is not repeated; only 429 and 503 (refused before acting) are retried.
 * A POST marked `idempotent` (NodeBalancer config rebuild sets the whole node list) retries like a PUT.
 * A DELETE that answers 404 after an earlier ambiguous attempt counts as done.
 *
 * Transient answers are retried quietly as linodego retries them, POSTs included (the API refused before
 * acting): 400 "Linode busy.", 408, 503, a proxy's HTML page with a 4xx. A 503 with `X-Maintenance-Mode` is
 * not retried here (as in linodego: a maintenance window outlasts any in-process backoff); the caller's
 * per-key back-off takes it. A 200 whose body has the wrong shape (`CallSpec.shape`) is retried as a 5xx is.
 *
 * Writes are bounded by leadership: each attempt asks the fence first, runs at most `writeTimeoutMs`, and is
 * aborted in flight the moment the fence's term ends.
 */
import type { Params, ResourcePage } from "@linode/api-v4";
import { backoffDelayMs, type BackoffOptions } from "../common/backoff.ts";
import { linkSignals } from "../common/abort.ts";
import type { Clock } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Counter, Histogram, Registry } from "../common/metrics.ts";
import { ALWAYS_LEADING, type Fence, LeaseLostError, type WriteGuard } from "../common/write_guard.ts";
import { isNotFound, isRecord, isRetryable, LinodeApiError } from "./errors.ts";
import { parseRateLimitHeaders, rateLimitBucket, RateLimiter, Semaphore } from "./rate_limit.ts";
import type { TokenSource } from "./token.ts";
import { type HttpMethod, type RequestContext, toLinodeApiError, withRequestContext } from "./transport.ts";

/** Options shared by `ApiCaller` and `LinodeClient`. */
export interface CallerOptions {
  /** `LINODE_URL`, ending in the API version: `https://api.linode.com/v4` or `…/v4beta`. */
  baseUrl: string;
  token: TokenSource;
  /** Per-attempt timeout (`LINODE_REQUEST_TIMEOUT_SECONDS` in ms). */
  timeoutMs: number;
  /**
   * Per-attempt timeout of writes, when shorter than `timeoutMs`: under leader election, lease duration minus
   * renew deadline, so a write sent just before the fence closed ends before a standby can take over.
   */
  writeTimeoutMs?: number;
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Asked before every non-GET attempt (default: always leading). */
  fence?: Fence;
  /** `--dry-run`: asked before every non-GET call, which it refuses (default: writes allowed). */
  writeGuard?: WriteGuard;
  metrics: Registry;
  log: Logger;
  clock: Clock;
  /** Jitter source for the backoff (default Math.random). */
  random?: () => number;
  /** Backoff between retries without `Retry-After` (default 500 ms doubling to 10 s). */
  retry?: BackoffOptions;
  /** Longest `Retry-After` slept in-process (default 30 s); longer ones go back to the caller. */
  maxRetrySleepMs?: number;
  /** `--linodego-debug`: log every request sent (method, route, status, duration; never headers or bodies). */
  logRequests?: boolean;
  /** `User-Agent` of every request (default: the fetch implementation's). */
  userAgent?: string;
  /** Shared rate-limit state (default: one per caller, built from `metrics`, `clock` and `log`). */
  rateLimiter?: RateLimiter;
}

/** One call as `client.ts` declares it, with the arguments and options of this call. */
export interface CallSpec {
  method: HttpMethod;
  /** Route template: `/linode/instances/{id}`. */
  route: string;
  /** The linodego method the Go CCM calls for this request, counted in `GO_CLIENT_METRIC`. */
  goMethod: string;
  /** What the answer (or each item of a page) must look like. DELETEs are not checked. */
  shape: ShapeCheck;
  /** For messages: "list linode instances" → "Cannot list linode instances: HTTP 503". */
  action: string;
  /** A POST that may be repeated safely. */
  idempotent?: boolean;
  /** One page of a paged list: each item of its `data` is checked. */
  paged?: boolean;
  signal?: AbortSignal | undefined;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call, including its retry sleeps; the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Default `maxRetries`. */
export const DEFAULT_MAX_RETRIES = 3;
/** Default `concurrency`. */
export const DEFAULT_CONCURRENCY = 8;
/** Default retry backoff. */
export const DEFAULT_RETRY: BackoffOptions = { baseMs: 500, maxMs: 10_000 };
const DEFAULT_MAX_RETRY_SLEEP_MS = 30_000;
// Sanity bound of a parsed Retry-After handed back to callers (an HTTP date far ahead, a typo).
const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The Go CCM's Linode client metric: one count per client call (a paged listing counts once, retries do not
 * count), `method` being the linodego method the Go CCM calls for that request (its generated
 * `ClientWithPrometheus` wrapper), `result` `ok` or `error`. Operators' alerts on the Go name keep working;
 * `ccm_linode_requests_total` (per request) stays beside it.
 */
export const GO_CLIENT_METRIC = "ccm_linode_client_requests_total";

/**
 * Says what is wrong with a body, or undefined when it has the expected shape: a 200 whose body is an HTML page
 * (a proxy's) or JSON of another shape must never pass for the object asked for, nor reach a cache.
 */
export type ShapeCheck = (body: unknown) => string | undefined;

/** What is wrong with an answer (a page of a list when `paged`), or undefined. */
function shapeProblem(check: ShapeCheck, body: unknown, paged: boolean): string | undefined {
  if (!paged) return check(body);
  if (!isRecord(body) || !Array.isArray(body.data)) return "the body is not a page of a list";
  for (const item of body.data) {
    const problem = check(item);
    if (problem) return problem.replace("the body is", "an item is");
  }
  return undefined;
}

/** Items per page requested on every list (the API maximum). */
export const PAGE_SIZE = 500;

/** Why a walk of pages was abandoned; the message says what moved, never any item content. */
export class PagingError extends Error {
  override name = "PagingError";
}

function checkPage<T>(got: ResourcePage<T>, want: number, first: ResourcePage<T>): void {
  const ok = Number.isInteger(got.pages) && Number.isInteger(got.results) && Array.isArray(got.data);
  if (!ok) throw new PagingError("page without data, pages or results");
  if (got.page !== want) throw new PagingError(`asked for page ${want}, got page ${got.page}`);
  if (got.pages !== first.pages) {
    throw new PagingError(`page count changed from ${first.pages} to ${got.pages}`);
  }
  if (got.results !== first.results) {
    throw new PagingError(`result count changed from ${first.results} to ${got.results}`);
  }
}

/**
 * Every item of a Linode list, in order, stopping at `page >= pages`. A partial list must never look complete
 * (controllers delete what is absent), so any sign that the listing moved under us fails the whole walk with
 * `PagingError`: a page number, `pages` or `results` that changes mid-walk, a non-final page short or long,
 * or an item count that does not add up to `results`.
 */
export async function collectPages<T>(fetchPage: (page: number) => Promise<ResourcePage<T>>): Promise<T[]> {
  const first = await fetchPage(1);
  checkPage(first, 1, first);
  const items = [...first.data];
  // The server may cap page_size below what we asked; the first full page tells us what it uses.
  const pageSize = first.pages > 1 ? first.data.length : PAGE_SIZE;
  if (first.pages > 1 && pageSize === 0) throw new PagingError("page 1 is empty but more pages follow");
  for (let page = 2; page <= first.pages; page++) {
    const got = await fetchPage(page);
    checkPage(got, page, first);
    if (page < first.pages && got.data.length !== pageSize) {
      throw new PagingError(`page ${page} of ${first.pages} held ${got.data.length} of ${pageSize} items`);
    }
    items.push(...got.data);
  }
  if (items.length !== first.results) {
    throw new PagingError(`collected ${items.length} items, expected ${first.results}`);
  }
  return items;
}

/** Runs Linode calls with the policies above. */
export class ApiCaller {
  readonly #o: CallerOptions;
  readonly #slots: Semaphore;
  readonly #requests: Counter;
  readonly #retries: Counter;
  readonly #goCalls: Counter;
  readonly #duration: Histogram;
  readonly #counts: Map<string, number>;
  readonly #limiter: RateLimiter;
  /** Aborts every call of this caller (see `bind`). */
  readonly #bound: AbortSignal | undefined;

  constructor(options: CallerOptions, shared?: { from: ApiCaller; signal: AbortSignal }) {
    this.#o = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, "") };
    this.#bound = shared?.signal;
    this.#counts = shared ? shared.from.#counts : new Map();
    this.#slots = shared ? shared.from.#slots : new Semaphore(options.concurrency ?? DEFAULT_CONCURRENCY);
    const m = options.metrics;
    this.#limiter = shared
      ? shared.from.#limiter
      : options.rateLimiter ?? new RateLimiter({ clock: options.clock, metrics: m, log: options.log });
    this.#requests = m.counter(
      "ccm_linode_requests_total",
      "Linode API requests sent, by method, route template and status",
      ["method", "route", "status"],
    );
    this.#retries = m.counter("ccm_linode_retries_total", "Linode API retries", ["method", "route"]);
    this.#goCalls = m.counter(GO_CLIENT_METRIC, "client counters for each operation and its result", [
      "method",
      "result",
    ]);
    this.#duration = m.histogram(
      "ccm_linode_request_duration_seconds",
      "Linode API request duration",
      ["method", "route"],
    );
  }

  /**
   * This caller with `signal` added to every call (requests in flight and retry sleeps abort with it); slots,
   * rate limits and call counts stay shared. A leadership term's controllers call through one bound to it.
   */
  bind(signal: AbortSignal): ApiCaller {
    const bound = this.#bound ? AbortSignal.any([this.#bound, signal]) : signal;
    return new ApiCaller(this.#o, { from: this, signal: bound });
  }

  /** The rate-limit state every request of this caller shares. */
  get rateLimiter(): RateLimiter {
    return this.#limiter;
  }

  /** Requests sent by this caller, keyed `"GET /linode/instances"` (every attempt counts). */
  callCounts(): Record<string, number> {
    return Object.fromEntries(this.#counts);
  }

  /** Every item of a paged list, each page fetched (with retries) at `PAGE_SIZE`. */
  list<T>(spec: CallSpec, fetchPage: (params: Params) => Promise<ResourcePage<T>>): Promise<T[]> {
    // One count for the whole listing, as linodego's List* call walks every page.
    return this.#withBound(spec, (s) => this.#counted(s, () => this.#listPages(s, fetchPage)));
  }

  async #listPages<T>(spec: CallSpec, fetchPage: (params: Params) => Promise<ResourcePage<T>>): Promise<T[]> {
    try {
      const paged = { ...spec, paged: true };
      return await collectPages((page) =>
        this.#retrying(paged, () => fetchPage({ page, page_size: PAGE_SIZE }))
      );
    } catch (e) {
      if (!(e instanceof PagingError)) throw e;
      // Retryable ("server"): the listing moved while we walked it; a later walk will be consistent.
      const reasons = [{ reason: e.message }];
      throw new LinodeApiError(spec.action, {
        status: 0,
        kind: "server",
        method: spec.method,
        route: spec.route,
        reasons,
      });
    }
  }

  /** A DELETE; a retry that finds the object gone (after an ambiguous failure) counts as done. */
  async remove(spec: CallSpec, send: () => Promise<unknown>): Promise<void> {
    await this.run(spec, async () => {
      await send();
    }, () => undefined);
  }

  /** Runs `send` with retries; `onGone` answers a DELETE whose retry found the object gone. */
  run<T>(spec: CallSpec, send: () => Promise<T>, onGone?: () => T): Promise<T> {
    return this.#withBound(spec, (s) => this.#counted(s, () => this.#retrying(s, send, onGone)));
  }

  /** Runs `call` with this caller's bound signal (see `bind`) linked into the spec's. */
  async #withBound<T>(spec: CallSpec, call: (spec: CallSpec) => Promise<T>): Promise<T> {
    if (!this.#bound) return await call(spec);
    using linked = linkSignals(spec.signal, this.#bound);
    return await call({ ...spec, signal: linked.signal });
  }

  /** Counts one client call in the Go CCM's metric once it is done (a write refused in dry run is not a call). */
  async #counted<T>(spec: CallSpec, call: () => Promise<T>): Promise<T> {
    // Before anything else (slot, rate limit, token): in dry-run a write must not even queue.
    if (spec.method !== "GET") this.#o.writeGuard?.assertWritable("linode", `${spec.method} ${spec.route}`);
    let result = "error";
    try {
      const value = await call();
      result = "ok";
      return value;
    } finally {
      this.#goCalls.inc({ method: spec.goMethod, result });
    }
  }

  async #retrying<T>(spec: CallSpec, send: () => Promise<T>, onGone?: () => T): Promise<T> {
    const maxRetries = this.#o.maxRetries ?? DEFAULT_MAX_RETRIES;
    let ambiguous = false;
    for (let attempt = 0;; attempt++) {
      try {
        return this.#checked(spec, await this.#attempt(spec, send));
      } catch (e) {
        if (!(e instanceof LinodeApiError)) throw e;
        if (onGone && ambiguous && isNotFound(e)) return onGone();
        const delayMs = this.#retryDelayMs(spec, e, attempt, maxRetries);
        // One worker's 429 holds every request of every worker, this one's retry included (its next
        // attempt waits in the limiter).
        if (e.kind === "rate_limited") this.#limiter.pause(delayMs ?? e.retryAfterMs);
        if (delayMs === undefined) throw e;
        ambiguous ||= e.kind !== "rate_limited";
        this.#retries.inc({ method: spec.method, route: spec.route });
        // Quiet for the answers the API gives in passing (busy, 408, a proxy's page): counted, logged at info.
        const level = e.transient && e.transient !== "unavailable" ? "info" : "warning";
        this.#o.log[level]("retrying {method} {route} in {delayMs} ms after {kind} (status {status})", {
          method: spec.method,
          route: spec.route,
          delayMs,
          kind: e.transient ?? e.kind,
          status: e.status,
          attempt: attempt + 1,
        });
        if (e.kind !== "rate_limited") await this.#o.clock.sleep(delayMs, spec.signal);
      }
    }
  }

  /** The body as sent back, or a retryable `LinodeApiError` when its shape is wrong (never cached). */
  #checked<T>(spec: CallSpec, body: T): T {
    if (spec.method === "DELETE") return body;
    const problem = shapeProblem(spec.shape, body, spec.paged === true);
    if (problem === undefined) return body;
    throw new LinodeApiError(spec.action, {
      status: 0,
      kind: "server",
      method: spec.method,
      route: spec.route,
      reasons: [{ reason: problem }],
      transient: "bad_body",
    });
  }

  #retryDelayMs(spec: CallSpec, e: LinodeApiError, attempt: number, maxRetries: number): number | undefined {
    if (attempt >= maxRetries || !isRetryable(e) || spec.signal?.aborted) return undefined;
    if (e.transient === "maintenance") return undefined;
    // Refused before the API acted: safe to repeat, POSTs included.
    const refused = e.status === 429 || e.status === 503 || e.transient === "busy" ||
      e.transient === "request_timeout" || (e.transient === "proxy_page" && e.status < 500);
    const repeatable = spec.method !== "POST" || spec.idempotent === true || refused;
    if (!repeatable) return undefined;
    if (e.retryAfterMs !== undefined) {
      const cap = this.#o.maxRetrySleepMs ?? DEFAULT_MAX_RETRY_SLEEP_MS;
      return e.retryAfterMs <= cap ? e.retryAfterMs : undefined;
    }
    return backoffDelayMs(attempt, this.#o.retry ?? DEFAULT_RETRY, this.#o.random);
  }

  async #attempt<T>(spec: CallSpec, send: () => Promise<T>): Promise<T> {
    await this.#slots.acquire(spec.signal);
    try {
      // Within the slot: at most `concurrency` requests are admitted before the first response reports
      // the budget.
      await this.#limiter.acquire(rateLimitBucket(spec.method, spec.route), spec.signal);
      const token = await this.#token(spec);
      if (spec.method !== "GET") (this.#o.fence ?? ALWAYS_LEADING).assertLeading();
      return await this.#send(spec, token, send);
    } finally {
      this.#slots.release();
    }
  }

  async #token(spec: CallSpec): Promise<string> {
    try {
      return await this.#o.token.token();
    } catch (e) {
      // The token source's errors name the file, never the content.
      throw new LinodeApiError(spec.action, {
        status: 0,
        kind: "auth",
        method: spec.method,
        route: spec.route,
        cause: e,
      });
    }
  }

  async #send<T>(spec: CallSpec, token: string, send: () => Promise<T>): Promise<T> {
    const write = spec.method !== "GET";
    const timeout = new AbortController();
    const timeoutMs = write
      ? Math.min(this.#o.timeoutMs, this.#o.writeTimeoutMs ?? Infinity)
      : this.#o.timeoutMs;
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    // A write in flight ends with the leadership term that sent it.
    const term = write ? this.#o.fence?.termSignal : undefined;
    // Not AbortSignal.any: the term's signal lives for the whole term (see common/abort.ts).
    using linked = linkSignals(timeout.signal, spec.signal, term);
    const signal = linked.signal;
    const ctx: RequestContext = {
      baseUrl: this.#o.baseUrl,
      token,
      signal,
      userAgent: this.#o.userAgent,
      sent: false,
    };
    const started = this.#o.clock.monotonic();
    const settled = write ? this.#o.fence?.writeStarted?.(started) : undefined;
    let status = "200";
    try {
      return await withRequestContext(ctx, send);
    } catch (e) {
      if (spec.signal?.aborted) {
        status = "aborted";
        throw spec.signal.reason;
      }
      if (term?.aborted) {
        status = "aborted";
        throw term.reason instanceof LeaseLostError ? term.reason : new LeaseLostError();
      }
      const err = toLinodeApiError(e, {
        action: spec.action,
        method: spec.method,
        route: spec.route,
        timedOut: timeout.signal.aborted,
        nowMs: this.#o.clock.now(),
        maxRetryAfterMs: MAX_RETRY_AFTER_MS,
      });
      status = err.status > 0 ? String(err.status) : err.kind;
      throw err;
    } finally {
      settled?.();
      clearTimeout(timer);
      if (ctx.sent) this.#record(spec, status, started);
      const read = ctx.responseHeader;
      if (read) {
        const headers = parseRateLimitHeaders(read, this.#o.clock.now());
        this.#limiter.observe(rateLimitBucket(spec.method, spec.route), headers);
      }
    }
  }

  #record(spec: CallSpec, status: string, startedMs: number): void {
    const labels = { method: spec.method, route: spec.route };
    const seconds = (this.#o.clock.monotonic() - startedMs) / 1000;
    this.#requests.inc({ ...labels, status });
    this.#duration.observe(labels, seconds);
    if (this.#o.logRequests) {
      this.#o.log.info("linode {method} {route}: {status} in {ms} ms", {
        ...labels,
        status,
        ms: seconds * 1000,
      });
    }
    const key = `${spec.method} ${spec.route}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }
}
