/** Small parts of the leader elector: its metrics, per-request timeouts on the injected clock, stop reasons. */
import type { Clock } from "../common/clock.ts";
import type { Counter, Gauge, Registry } from "../common/metrics.ts";

/** The elector's metrics, labelled by Lease. */
export interface ElectorMetrics {
  isLeader: Gauge;
  transitions: Counter;
  acquireFailures: Counter;
  renewFailures: Counter;
  /** The Lease's own `leaseTransitions` as last seen: one count for the cluster, whichever replica reports it. */
  leaseTransitions: Gauge;
}

/** Registers the elector's metrics. */
export function electorMetrics(metrics: Registry): ElectorMetrics {
  return {
    isLeader: metrics.gauge("ccm_leader_is_leader", "1 while this process holds the leader Lease", ["lease"]),
    transitions: metrics.counter("ccm_leader_transitions_total", "Times this process became leader", [
      "lease",
    ]),
    acquireFailures: metrics.counter(
      "ccm_leader_acquire_failures_total",
      "Failed requests while trying to take the leader Lease",
      ["lease"],
    ),
    renewFailures: metrics.counter(
      "ccm_leader_renew_failures_total",
      "Failed requests while renewing the leader Lease",
      ["lease"],
    ),
    leaseTransitions: metrics.gauge(
      "ccm_leader_lease_transitions",
      "The Lease's spec.leaseTransitions as this process last saw it (holder changes, counted by the apiserver)",
      ["lease"],
    ),
  };
}

/** A signal that aborts after `ms` on `clock` (per-request timeout); dispose it to stop the timer. */
export function timeoutAfter(clock: Clock, ms: number): { signal: AbortSignal } & Disposable {
  const timeout = new AbortController();
  const stop = new AbortController();
  clock.sleep(Math.max(0, ms), stop.signal).then(
    () => timeout.abort(new DOMException("Lease request timed out", "TimeoutError")),
    () => {},
  );
  return { signal: timeout.signal, [Symbol.dispose]: () => stop.abort() };
}

/** Why `signal` aborted, for the log: "received SIGTERM", or "stop requested". */
export function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.message !== "" ? reason.message : "stop requested";
}
