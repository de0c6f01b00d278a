/** Request counters keyed by method + route template (`GET /v4/linode/instances/{id}`). */

/** One received request. `status` is filled in when the answer is sent (0 while pending or hung). */
export interface CallRecord {
  key: string;
  method: string;
  path: string;
  status: number;
  fault?: string;
  atMs: number;
  /** The request's `User-Agent` ("" when none): the CCM names its process there, so replicas are told apart. */
  userAgent: string;
  /** `performance.now()` when the request arrived: orders requests across the emulators of one process. */
  receivedAt: number;
  /**
   * `performance.now()` when the answer was ready (the world already changed): orders requests across the
   * emulators of one process. Undefined while pending.
   */
  answeredAt?: number;
  /** The `Retry-After` of a 429, in seconds. */
  retryAfterSec?: number;
  /** The parsed JSON body of a POST or PUT (undefined when none or not JSON): what the client sent. */
  body?: unknown;
  /** The request's `X-Filter` header as sent, when it had one: tells a targeted read from a listing. */
  filter?: string;
}

/** Called once per request, synchronously, when its answer is ready. */
export type CallListener = (record: Readonly<CallRecord>) => void;

/** A point-in-time copy of the counters. */
export interface CallSnapshot {
  total: number;
  counts: Record<string, number>;
}

/** Turns a request path into its route template: numeric segments become `{id}`, IP addresses `{address}`. */
function routeTemplate(method: string, path: string): string {
  const template = path
    .replace(/\/(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F.%]*:[0-9a-fA-F:.%]*)(?=\/|$)/g, "/{address}")
    .replace(/\/\d+(?=\/|$)/g, "/{id}");
  return `${method.toUpperCase()} ${template}`;
}

/** Counts every request received, including failed and faulted ones. */
export class CallCounter {
  #counts = new Map<string, number>();
  #total = 0;
  #log: CallRecord[] = [];
  readonly #listeners = new Set<CallListener>();
  readonly #logLimit: number;

  constructor(logLimit = 10_000) {
    this.#logLimit = logLimit;
  }

  /** Records a request and returns its log entry (mutated later with the status). */
  record(method: string, path: string, atMs: number, userAgent = ""): CallRecord {
    const key = routeTemplate(method, path);
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    this.#total++;
    const entry: CallRecord = {
      key,
      method: method.toUpperCase(),
      path,
      status: 0,
      atMs,
      userAgent,
      receivedAt: performance.now(),
    };
    this.#log.push(entry);
    // Keep memory bounded in long benchmarks: drop the oldest half when full.
    if (this.#log.length > this.#logLimit) this.#log = this.#log.slice(this.#log.length >> 1);
    return entry;
  }

  /** Fills in the answer of `entry` and tells every listener (the emulator calls it as it answers). */
  answered(entry: CallRecord, status: number, retryAfter?: string | null): void {
    entry.status = status;
    const seconds = Number(retryAfter ?? NaN);
    if (Number.isFinite(seconds)) entry.retryAfterSec = seconds;
    entry.answeredAt = performance.now();
    for (const listener of this.#listeners) listener(entry);
  }

  /**
   * Calls `listener` for every request as it is answered, after the world changed and before the client reads
   * the answer (fault suites check invariants there, so nothing transient escapes them). Returns the unsubscribe.
   */
  subscribe(listener: CallListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Requests received for a key such as `"GET /v4/linode/instances"`. */
  count(key: string): number {
    return this.#counts.get(key) ?? 0;
  }

  /** All requests received since start or the last reset. */
  total(): number {
    return this.#total;
  }

  /** Zeroes the counters and empties the log. */
  reset(): void {
    this.#counts.clear();
    this.#total = 0;
    this.#log = [];
  }

  /** Copy of the counters. */
  snapshot(): CallSnapshot {
    return { total: this.#total, counts: Object.fromEntries(this.#counts) };
  }

  /** The most recent requests, oldest first (bounded). */
  get log(): readonly CallRecord[] {
    return this.#log;
  }
}
