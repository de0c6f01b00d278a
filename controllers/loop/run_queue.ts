/**
 * The worker loop every controller runs on its `WorkQueue`: take a key, reconcile it, and turn the
 * outcome into the queue's next step (the upstream service controller's `processNextWorkItem`).
 */
import { type Clock, isAbort, systemClock } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import { LeaseLostError } from "../../common/write_guard.ts";
import type { Registry } from "../../common/metrics.ts";
import { recordKeyOutcome, recordReconcile } from "./reconcile_metrics.ts";
import type { WorkQueue } from "./work_queue.ts";

/** Thrown by a reconcile that must wait a known time before retrying (Linode's `Retry-After`). */
export class RetryAfterError extends Error {
  override name = "RetryAfterError";
  constructor(message: string, readonly retryAfterMs: number, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * Thrown for a bad user input (an invalid annotation): retrying cannot help, so the key is not
 * requeued until its object changes. Other error classes opt in with `permanent = true`.
 */
export class InvalidInputError extends Error {
  override name = "InvalidInputError";
  readonly permanent = true;
}

/** What the worker loop did with a key after its handler returned or threw. */
export type Outcome = "success" | "retry-after" | "rate-limited" | "permanent" | "aborted";

/** True for errors that say retrying will not help (`InvalidInputError` or `permanent: true`). */
export function isPermanentError(error: unknown): boolean {
  return error instanceof InvalidInputError ||
    (typeof error === "object" && error !== null && (error as { permanent?: unknown }).permanent === true);
}

/** The wait an error asks for (`RetryAfterError`, or any error with a numeric `retryAfterMs`), if any. */
export function retryAfterMsOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const ms = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** Options of `runWorkers`. */
export interface RunWorkersOptions<T> {
  /** Number of keys handled at once (distinct keys only: a key never runs twice at once). */
  concurrency: number;
  /** Stops taking keys when aborted; running handlers finish first. */
  signal: AbortSignal;
  /** Reconciles one key; throws to be requeued. Receives the loop's signal to cut waits short. */
  handle: (key: T, signal: AbortSignal) => Promise<void>;
  log: Logger;
  /** Receives `ccm_reconciles_total` and `ccm_reconcile_duration_seconds`, labelled with the queue's name. */
  metrics?: Registry;
  /** Times reconciles (default: the system clock). */
  clock?: Clock;
  /** Called after a handler throws, unless aborted (e.g. to record a Warning Event); its errors are logged. */
  onError?: (key: T, error: unknown, outcome: Outcome) => void | Promise<void>;
}

/** An error as `Name: message` for logs (a thrown non-Error as its string). */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** True for an expected wait that is not worth a warning (`quiet: true`, e.g. for the next cache refresh). */
function isQuiet(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { quiet?: unknown }).quiet === true;
}

/** Applies one handler failure to the queue; returns what was done. */
function requeue<T>(queue: WorkQueue<T>, key: T, error: unknown, options: RunWorkersOptions<T>): Outcome {
  const { log, signal } = options;
  const props = { queue: queue.name, key: String(key), error: describeError(error) };
  // A stopping leader closes its fence before it tells the controllers to stop: a write refused then is part
  // of the stop, not a failure worth a warning or an Event.
  if (signal.aborted && (isAbort(error, signal) || error instanceof LeaseLostError)) {
    // Cut short by the end of this run (e.g. lost leadership): the next run picks it up again.
    queue.add(key);
    log.debug("{queue} {key} aborted", props);
    return "aborted";
  }
  // `reportable`: a failed sync, which the Go CCM reports to Sentry (common/sentry.ts picks the queues).
  if (isPermanentError(error)) {
    queue.forget(key);
    log.warning("{queue} {key} not retried until it changes: {error}", { ...props, reportable: true });
    return "permanent";
  }
  const retryAfterMs = retryAfterMsOf(error);
  if (retryAfterMs !== undefined) {
    queue.addAfter(key, retryAfterMs);
    // An expected wait (`quiet: true`, e.g. for the next cache refresh) is not worth a warning.
    const level = isQuiet(error) ? "debug" : "warning";
    log[level]("{queue} {key} retrying in {delayMs} ms as asked: {error}", {
      ...props,
      delayMs: retryAfterMs,
      reportable: level === "warning",
    });
    return "retry-after";
  }
  const delayMs = queue.addRateLimited(key);
  const attempt = queue.numRequeues(key);
  log.warning("{queue} {key} failed (attempt {attempt}), retrying in {delayMs} ms: {error}", {
    ...props,
    attempt,
    delayMs,
    reportable: true,
  });
  return "rate-limited";
}

async function processKey<T>(queue: WorkQueue<T>, key: T, options: RunWorkersOptions<T>): Promise<void> {
  const clock = options.clock ?? systemClock;
  const started = clock.monotonic();
  let result: Outcome = "success";
  // A failure streak is an error the loop retries or gives up on; not an abort, nor a quiet, expected wait.
  let failed = false;
  try {
    await options.handle(key, options.signal);
    queue.forget(key);
    return;
  } catch (error) {
    result = requeue(queue, key, error, options);
    failed = result !== "aborted" && !(result === "retry-after" && isQuiet(error));
    if (options.onError && result !== "aborted") await notify(options, key, error, result);
  } finally {
    queue.done(key);
    if (options.metrics) {
      recordReconcile(options.metrics, queue.name, result, (clock.monotonic() - started) / 1000);
      if (result === "success" || failed) {
        recordKeyOutcome(options.metrics, queue.name, String(key), { failed, nowMs: clock.now() });
      }
    }
  }
}

async function notify<T>(
  options: RunWorkersOptions<T>,
  key: T,
  error: unknown,
  outcome: Outcome,
): Promise<void> {
  try {
    await options.onError?.(key, error, outcome);
  } catch (e) {
    options.log.error("error hook failed for {key}: {error}", { key: String(key), error: describeError(e) });
  }
}

async function worker<T>(queue: WorkQueue<T>, options: RunWorkersOptions<T>): Promise<void> {
  for (;;) {
    const key = await queue.get(options.signal);
    if (key === undefined) return;
    await processKey(queue, key, options);
  }
}

/**
 * Runs `concurrency` workers on `queue` until `signal` aborts (or the queue shuts down and
 * empties), then waits for running handlers. The queue stays usable for a later run.
 */
export async function runWorkers<T>(queue: WorkQueue<T>, options: RunWorkersOptions<T>): Promise<void> {
  const count = Math.max(1, Math.floor(options.concurrency));
  await Promise.all(Array.from({ length: count }, () => worker(queue, options)));
}
