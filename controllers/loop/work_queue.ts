/**
 * The one work queue of every controller, with client-go's semantics: a key waits at most once,
 * never runs on two workers at once, and a key added while it runs runs again after `done()`.
 * Delays (`addAfter`, `addRateLimited`, `minIntervalMs`) run on the injected clock.
 */
import { backoffDelayMs } from "../../common/backoff.ts";
import { type Clock, systemClock } from "../../common/clock.ts";
import type { Counter, Gauge, Histogram, Registry } from "../../common/metrics.ts";

/** Default delay after a key's first failure (client-go's controllers use 5 ms; Linode wants calm). */
export const DEFAULT_BASE_DELAY_MS = 1_000;
/** Default upper bound of a key's failure backoff. */
export const DEFAULT_MAX_DELAY_MS = 300_000;

/** Options of a `WorkQueue`. */
export interface WorkQueueOptions {
  /** Label of this queue's metrics (`{name="service"}`). */
  name: string;
  clock?: Clock;
  /** Registry for `ccm_workqueue_*` metrics; none recorded when absent. */
  metrics?: Registry;
  /** Delay after a key's first failure (default 1 s), doubled per failure with jitter. */
  baseDelayMs?: number;
  /** Upper bound of the failure backoff (default 5 min). */
  maxDelayMs?: number;
  /**
   * Least time between two starts of the same key: adds within it coalesce into one run at its end
   * (for whole-cluster keys, like the upstream route controller's 10 s bucket). Default 0. A function is
   * asked at each start and add (an interval that grows with the cluster).
   */
  minIntervalMs?: number | (() => number);
  /** Source of jitter (tests pass a constant). */
  random?: () => number;
}

interface QueueMetrics {
  depth: Gauge;
  adds: Counter;
  retries: Counter;
  workDuration: Histogram;
}

function queueMetrics(registry: Registry): QueueMetrics {
  return {
    depth: registry.gauge("ccm_workqueue_depth", "Keys waiting to be processed.", ["name"]),
    adds: registry.counter("ccm_workqueue_adds_total", "Keys added to the queue.", ["name"]),
    retries: registry.counter("ccm_workqueue_retries_total", "Keys requeued after a failure.", ["name"]),
    workDuration: registry.histogram(
      "ccm_workqueue_work_duration_seconds",
      "Time from taking a key to marking it done.",
      ["name"],
    ),
  };
}

/** A deduplicating, delaying, rate-limiting queue of keys (client-go `TypedRateLimitingInterface`). */
export class WorkQueue<T = string> {
  readonly name: string;
  readonly #clock: Clock;
  readonly #metrics: QueueMetrics | undefined;
  readonly #labels: { name: string };
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #minIntervalMs: () => number;
  readonly #random: () => number;

  /** Keys ready to be taken, in order. */
  #queue: T[] = [];
  /** Keys that need processing: waiting in `#queue`, or running and to run again. */
  readonly #dirty = new Set<T>();
  readonly #processing = new Map<T, number>();
  /** Delayed keys and the monotonic time they become ready. */
  readonly #waiting = new Map<T, number>();
  readonly #failures = new Map<T, number>();
  /** Monotonic start time of each key's last run (kept only with `minIntervalMs`). */
  readonly #lastStart = new Map<T, number>();
  #wakers: (() => void)[] = [];
  #timer: { at: number; stop: AbortController } | undefined;
  #shuttingDown = false;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.#clock = options.clock ?? systemClock;
    this.#metrics = options.metrics ? queueMetrics(options.metrics) : undefined;
    this.#labels = { name: options.name };
    this.#baseDelayMs = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
    this.#maxDelayMs = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
    const interval = options.minIntervalMs ?? 0;
    this.#minIntervalMs = typeof interval === "number" ? () => interval : interval;
    this.#random = options.random ?? Math.random;
    this.#metrics?.depth.set(this.#labels, 0);
  }

  /** Queues `key` unless it already waits; a running key is queued again after its `done()`. */
  add(key: T): void {
    if (this.#shuttingDown) return;
    const holdMs = this.#intervalLeftMs(key);
    if (holdMs > 0) {
      this.#delay(key, holdMs);
      return;
    }
    // An immediate run supersedes a delayed one; its outcome schedules whatever comes next.
    this.#waiting.delete(key);
    if (this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.#metrics?.adds.inc(this.#labels);
    if (this.#processing.has(key)) return;
    this.#push(key);
  }

  /** Queues `key` after `delayMs`; when it is already delayed, the earlier time wins. */
  addAfter(key: T, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    this.#delay(key, delayMs);
  }

  /** Queues `key` after its next backoff delay (doubling per failure, with jitter); returns that delay. */
  addRateLimited(key: T): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    const delayMs = backoffDelayMs(
      failures,
      { baseMs: this.#baseDelayMs, maxMs: this.#maxDelayMs },
      this.#random,
    );
    this.#metrics?.retries.inc(this.#labels);
    this.addAfter(key, delayMs);
    return delayMs;
  }

  /** Resets the backoff of `key` (after a success, or when retrying is pointless). */
  forget(key: T): void {
    this.#failures.delete(key);
  }

  /** How many times `key` was requeued by `addRateLimited` since its last `forget`. */
  numRequeues(key: T): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Keys ready to be taken (not counting running or delayed ones). */
  len(): number {
    return this.#queue.length;
  }

  /** True once `shutDown()` was called. */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Waits for the next key and marks it running; the caller must call `done(key)`. Resolves to
   * `undefined` when the queue is shut down and empty, or once `signal` has aborted (even with keys queued).
   */
  async get(signal?: AbortSignal): Promise<T | undefined> {
    while (this.#queue.length === 0 || signal?.aborted) {
      if (this.#shuttingDown || signal?.aborted) return undefined;
      await this.#wait(signal);
    }
    const key = this.#queue.shift()!;
    this.#metrics?.depth.set(this.#labels, this.#queue.length);
    this.#dirty.delete(key);
    const now = this.#clock.monotonic();
    this.#processing.set(key, now);
    if (this.#minIntervalMs() > 0) this.#lastStart.set(key, now);
    return key;
  }

  /** Marks `key` finished; queues it again when it was added while running. */
  done(key: T): void {
    const startedAt = this.#processing.get(key);
    if (startedAt === undefined) return;
    this.#processing.delete(key);
    this.#metrics?.workDuration.observe(this.#labels, (this.#clock.monotonic() - startedAt) / 1000);
    if (this.#dirty.has(key)) {
      const holdMs = this.#intervalLeftMs(key);
      if (holdMs > 0) {
        this.#dirty.delete(key);
        this.#delay(key, holdMs);
      } else {
        this.#push(key);
      }
    }
    this.#wake();
  }

  /** Stops accepting keys, drops delayed ones and wakes every waiting `get()`; queued keys are still handed out. */
  shutDown(): void {
    this.#shuttingDown = true;
    this.#waiting.clear();
    this.#timer?.stop.abort();
    this.#timer = undefined;
    this.#wake();
  }

  /** `shutDown()`, then waits until every queued and running key is done (or `signal` aborts). */
  async shutDownWithDrain(signal?: AbortSignal): Promise<void> {
    this.shutDown();
    while ((this.#queue.length > 0 || this.#processing.size > 0) && !signal?.aborted) {
      await this.#wait(signal);
    }
  }

  #push(key: T): void {
    this.#queue.push(key);
    this.#metrics?.depth.set(this.#labels, this.#queue.length);
    this.#wake();
  }

  #intervalLeftMs(key: T): number {
    const last = this.#lastStart.get(key);
    if (last === undefined) return 0;
    const left = last + this.#minIntervalMs() - this.#clock.monotonic();
    if (left <= 0 && !this.#processing.has(key)) this.#lastStart.delete(key);
    return left;
  }

  #delay(key: T, delayMs: number): void {
    if (this.#shuttingDown) return;
    const at = this.#clock.monotonic() + delayMs;
    const current = this.#waiting.get(key);
    if (current !== undefined && current <= at) return;
    this.#waiting.set(key, at);
    this.#arm();
  }

  /** Keeps one clock sleep pending until the earliest delayed key; it is cancelled by `shutDown()`. */
  #arm(): void {
    let earliest = Infinity;
    for (const at of this.#waiting.values()) earliest = Math.min(earliest, at);
    if (this.#timer && this.#timer.at <= earliest) return;
    this.#timer?.stop.abort();
    this.#timer = undefined;
    if (earliest === Infinity) return;
    const timer = { at: earliest, stop: new AbortController() };
    this.#timer = timer;
    this.#clock.sleep(Math.max(0, earliest - this.#clock.monotonic()), timer.stop.signal).then(() => {
      if (this.#timer !== timer) return;
      this.#timer = undefined;
      this.#release();
    }, () => {
      // Cancelled: an earlier key re-armed the timer, or the queue shut down.
    });
  }

  /** Moves every delayed key whose time has come into the queue, then re-arms for the rest. */
  #release(): void {
    const now = this.#clock.monotonic();
    for (const [key, at] of [...this.#waiting]) {
      if (at > now) continue;
      this.#waiting.delete(key);
      this.add(key);
    }
    this.#arm();
  }

  #wait(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        signal?.removeEventListener("abort", wake);
        resolve();
      };
      this.#wakers.push(wake);
      signal?.addEventListener("abort", wake, { once: true });
    });
  }

  #wake(): void {
    const wakers = this.#wakers;
    this.#wakers = [];
    for (const wake of wakers) wake();
  }
}
