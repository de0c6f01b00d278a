/** The per-controller reconcile metrics every controller records: how many, how they ended, how long. */
import type { Clock } from "../../common/clock.ts";
import type { Registry } from "../../common/metrics.ts";

/** How a reconcile ended: `success`, the retry path its error took (see `run_queue.ts`), or `error`. */
export type ReconcileResult = "success" | "error" | "retry-after" | "rate-limited" | "permanent" | "aborted";

/** Records one reconcile: `ccm_reconciles_total{controller,result}` and `ccm_reconcile_duration_seconds`. */
export function recordReconcile(
  metrics: Registry,
  controller: string,
  result: ReconcileResult,
  seconds: number,
): void {
  metrics.counter("ccm_reconciles_total", "Reconciles by controller and result", ["controller", "result"])
    .inc({ controller, result });
  metrics.histogram("ccm_reconcile_duration_seconds", "Time spent in one reconcile", ["controller"])
    .observe({ controller }, seconds);
}

/** The gauge of keys whose reconciles keep failing, valued with the time the streak began (epoch seconds). */
function failingSince(metrics: Registry) {
  return metrics.gauge(
    "ccm_reconcile_failing_since_timestamp_seconds",
    "Keys whose last reconcile failed, by controller and key, valued with the start of the failures (Unix time)",
    ["controller", "key"],
  );
}

/**
 * Tracks a key's failure streak for alerting (a Service or Node that stays broken past the retry cap): the
 * first failure starts the series at `nowMs`, later failures keep that start, a success removes the series.
 * A quiet wait (the next cache refresh) and an abort neither start nor end a streak.
 */
export function recordKeyOutcome(
  metrics: Registry,
  controller: string,
  key: string,
  outcome: { failed: boolean; nowMs: number },
): void {
  const gauge = failingSince(metrics);
  const labels = { controller, key };
  if (!outcome.failed) gauge.remove(labels);
  else if (gauge.get(labels) === 0) gauge.set(labels, outcome.nowMs / 1000);
}

/**
 * Counts a periodic pass that decided nothing because nothing it reads changed since a pass that settled
 * (`ccm_passes_skipped_total{controller}`; the cloud-node controller counts one per Node its status resync
 * leaves alone): what keeps an idle cluster of 5,000 Nodes cheap.
 */
export function recordSkippedPass(metrics: Registry, controller: string, count = 1): void {
  metrics.counter(
    "ccm_passes_skipped_total",
    "Periodic passes skipped: nothing they read changed since a pass that settled",
    ["controller"],
  ).inc({ controller }, count);
}

/** Runs one reconcile (a periodic pass) and records it; `error` when it throws. */
export async function timedReconcile<T>(
  metrics: Registry,
  clock: Clock,
  controller: string,
  work: () => Promise<T>,
): Promise<T> {
  const started = clock.monotonic();
  let result: ReconcileResult = "error";
  try {
    const value = await work();
    result = "success";
    return value;
  } finally {
    recordReconcile(metrics, controller, result, (clock.monotonic() - started) / 1000);
  }
}
