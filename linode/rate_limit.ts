/**
 * What holds a Linode request back before it is sent, shared by every request of one `ApiCaller` (so by
 * every controller and worker): a cap on requests in flight, the budget the `X-RateLimit-*` headers report, a
 * limiter that keeps bursts under it (a node joining 200 Services must not discover the limit through 429s),
 * and a pause of every request after a 429 (one worker's 429 slows all of them, not just its own retry).
 */
import type { Clock } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Gauge, Registry } from "../common/metrics.ts";

/** What one response said about its rate-limit window. */
export interface RateLimitHeaders {
  /** `X-RateLimit-Limit`: requests allowed per window. */
  limit?: number;
  /** `X-RateLimit-Remaining`: requests left in this window. */
  remaining?: number;
  /** `X-RateLimit-Reset`, as epoch ms: when the window starts again. */
  resetAtMs?: number;
}

/** Options of a `RateLimiter`. */
export interface RateLimiterOptions {
  clock: Clock;
  metrics: Registry;
  log: Logger;
  /** Requests per window held back for other clients of the same token (default 5 % of the limit, ≥ 1). */
  reserveFraction?: number;
  /** Pause after a 429 that carries no `Retry-After` (default 1 s). */
  defaultPauseMs?: number;
  /** Longest wait for a window reset the limiter will impose (default 60 s: Linode's windows are a minute). */
  maxWaitMs?: number;
}

/** One rate-limit window as the headers last described it, plus what we sent since. */
interface Bucket {
  limit: number;
  remaining: number;
  resetAtMs: number;
  /** Requests admitted since `remaining` was last reported. */
  spent: number;
}

const DEFAULT_RESERVE_FRACTION = 0.05;
const DEFAULT_PAUSE_MS = 1_000;
const DEFAULT_MAX_WAIT_MS = 60_000;

/** Reads a numeric header (`X-RateLimit-Remaining: 399`). */
function numberOf(value: unknown): number | undefined {
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const n = Number(String(value).trim());
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * Parses the `X-RateLimit-*` headers. `X-RateLimit-Reset` is epoch seconds (as linodego reads it); a small
 * value is taken as seconds from now, which some proxies send. Missing or malformed headers are left out.
 */
export function parseRateLimitHeaders(get: (name: string) => unknown, nowMs: number): RateLimitHeaders {
  const out: RateLimitHeaders = {};
  const limit = numberOf(get("x-ratelimit-limit"));
  const remaining = numberOf(get("x-ratelimit-remaining"));
  const reset = numberOf(get("x-ratelimit-reset"));
  if (limit !== undefined) out.limit = limit;
  if (remaining !== undefined) out.remaining = remaining;
  if (reset !== undefined) out.resetAtMs = reset > 1e9 ? reset * 1000 : nowMs + reset * 1000;
  return out;
}

/**
 * Which window a request counts against: its method and route template. Linode documents limits per kind of
 * request (collection GETs, commands, some endpoints of their own) without saying which endpoints share a
 * window; the headers of a response describe the tightest limit that applies to it, so each route keeps the
 * budget its own responses report.
 */
export function rateLimitBucket(method: string, route: string): string {
  return `${method} ${route}`;
}

/** Admits requests within the reported budget and holds all of them during a 429 pause. */
export class RateLimiter {
  readonly #o: RateLimiterOptions;
  readonly #buckets = new Map<string, Bucket>();
  readonly #remainingGauge: Gauge;
  readonly #limitGauge: Gauge;
  readonly #waits: Gauge;
  #pausedUntil = 0;
  #waiting = 0;

  constructor(options: RateLimiterOptions) {
    this.#o = options;
    const m = options.metrics;
    this.#remainingGauge = m.gauge(
      "ccm_linode_ratelimit_remaining",
      "Requests left in the current Linode rate-limit window (X-RateLimit-Remaining, minus requests sent since)",
      ["bucket"],
    );
    this.#limitGauge = m.gauge("ccm_linode_ratelimit_limit", "Linode rate limit per window", ["bucket"]);
    this.#waits = m.gauge("ccm_linode_ratelimit_waiting", "Requests held back by the client-side limiter");
  }

  /** Requests left in `bucket`'s window by our count, or undefined before any header was seen. */
  remaining(bucket: string): number | undefined {
    const b = this.#buckets.get(bucket);
    return b ? Math.max(0, b.remaining - b.spent) : undefined;
  }

  /**
   * Waits until a request of `bucket` may be sent, then counts it against the window: first out any 429
   * pause, then, when the window's budget is down to the reserve, until the window resets.
   */
  async acquire(bucket: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    // A 429 may come back while this request waits for its window: every wait ends with the pause checked again.
    for (;;) {
      await this.#waitOutPauses(signal);
      const b = this.#buckets.get(bucket);
      if (!b) return;
      if (this.#o.clock.now() >= b.resetAtMs) this.#roll(b);
      if (!this.#exhausted(b)) {
        b.spent++;
        this.#remainingGauge.set({ bucket }, Math.max(0, b.remaining - b.spent));
        return;
      }
      const resetAtMs = b.resetAtMs;
      await this.#wait(resetAtMs - this.#o.clock.now(), signal);
      // The first waiter to wake opens the new window; the others count against it.
      if (b.resetAtMs === resetAtMs) this.#roll(b);
    }
  }

  /** Sleeps to each pause's end; a later pause (another 429 meanwhile) is waited out too. */
  async #waitOutPauses(signal?: AbortSignal): Promise<void> {
    let servedUntil = 0;
    while (this.#pausedUntil > servedUntil) {
      servedUntil = this.#pausedUntil;
      await this.#wait(servedUntil - this.#o.clock.now(), signal);
    }
  }

  /** Records the budget a response of `bucket` reported. */
  observe(bucket: string, headers: RateLimitHeaders): void {
    if (headers.remaining === undefined) return;
    const now = this.#o.clock.now();
    const old = this.#buckets.get(bucket);
    const limit = headers.limit ?? old?.limit ?? headers.remaining;
    const resetAtMs = headers.resetAtMs ?? old?.resetAtMs ?? now + DEFAULT_MAX_WAIT_MS;
    // Responses of requests admitted earlier arrive after later ones were counted: keep the lowest
    // remaining of the same window, and let only a new window raise it again.
    const sameWindow = old !== undefined && old.resetAtMs === resetAtMs;
    const spent = sameWindow ? Math.max(0, old.spent - 1) : 0;
    const remaining = sameWindow ? Math.min(old.remaining, headers.remaining) : headers.remaining;
    this.#buckets.set(bucket, { limit, remaining, resetAtMs, spent });
    this.#limitGauge.set({ bucket }, limit);
    this.#remainingGauge.set({ bucket }, Math.max(0, remaining - spent));
  }

  /** After a 429: every request waits `retryAfterMs` (or the default pause) from now. */
  pause(retryAfterMs: number | undefined): void {
    const ms = retryAfterMs ?? this.#o.defaultPauseMs ?? DEFAULT_PAUSE_MS;
    const until = this.#o.clock.now() + ms;
    if (until <= this.#pausedUntil) return;
    this.#pausedUntil = until;
    this.#o.log.warning("linode rate limit reached: holding every request for {ms} ms", { ms });
  }

  #exhausted(b: Bucket): boolean {
    const reserve = Math.max(1, Math.ceil(b.limit * (this.#o.reserveFraction ?? DEFAULT_RESERVE_FRACTION)));
    return b.remaining - b.spent <= reserve;
  }

  /**
   * Starts a new window: the full limit until a response says otherwise, so requests held for the reset
   * do not all go at once. Its end is a guess (a minute) until a header gives it.
   */
  #roll(b: Bucket): void {
    b.remaining = b.limit;
    b.spent = 0;
    b.resetAtMs = Math.max(this.#o.clock.now(), b.resetAtMs) + (this.#o.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
  }

  async #wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0) return;
    this.#waiting++;
    this.#waits.set({}, this.#waiting);
    try {
      await this.#o.clock.sleep(Math.min(ms, this.#o.maxWaitMs ?? DEFAULT_MAX_WAIT_MS), signal);
    } finally {
      this.#waiting--;
      this.#waits.set({}, this.#waiting);
    }
  }
}

/** Counts permits (requests in flight); `acquire` waits (abortably) when none is free. */
export class Semaphore {
  #free: number;
  readonly #waiters: Array<() => void> = [];
  constructor(permits: number) {
    this.#free = Math.max(1, permits);
  }

  /** Takes a permit, waiting for one when none is free; rejects with the signal's reason on abort. */
  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.#waiters.indexOf(wake);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal?.reason);
      };
      this.#waiters.push(wake);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Returns a permit, to the longest waiter first. */
  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#free++;
  }
}
