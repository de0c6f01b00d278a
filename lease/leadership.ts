/**
 * Runs the controllers while this process may: under a leader election on a Lease, or at once with
 * `--leader-elect=false`. Either way a failed term ends the run ("failed": the process exits 1 for its
 * supervisor, and another replica takes over), and `/readyz` turns not ready the moment a term fails or a
 * stop begins.
 */
import { type Clock, isAbort } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Registry } from "../common/metrics.ts";
import { LeaderElector } from "./elector.ts";
import { type Fence, SwitchFence } from "../common/write_guard.ts";
import type { LeaseApi } from "./lease.ts";
import { LeaderTerm } from "./term.ts";
import type { LeaseChanges } from "./watch.ts";

/** How a run ended: stopped on request (exit 0), leadership lost, or a failed term (exit 1). */
export type LeadershipOutcome = "stopped" | "lost" | "failed";

/** The `--leader-elect*` settings `runLeadership` reads. */
export interface LeadershipConfig {
  readonly enabled: boolean;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly namespace: string;
  readonly name: string;
}

/** What `runLeadership` needs. */
export interface LeadershipDeps {
  /** The Lease; unused with `--leader-elect=false`. */
  api: LeaseApi;
  /** A watch of the Lease (`LeaseWatch`), run while campaigning: a release is taken at once, an expiry on time. */
  watch?: LeaseChanges & { run(signal: AbortSignal): Promise<void> };
  /** A `SwitchFence` under election; `ALWAYS_LEADING` with `--leader-elect=false`. */
  fence: Fence;
  clock: Clock;
  log: Logger;
  metrics: Registry;
  identity: string;
  /** Reports the term's failure or the stop to `/readyz`. */
  readiness: LeadershipReadiness;
  /** How long a stopping term may take (default `DEFAULT_DRAIN_MS`). */
  drainTimeoutMs?: number;
}

/** The `/readyz` check of the controllers' lifecycle: not ready once a term failed or a stop began. */
export class LeadershipReadiness {
  readonly name = "leadership";
  #problem: string | undefined;

  /** `true`, or why this process is not ready. */
  check(): boolean | string {
    return this.#problem ?? true;
  }

  /** A term failed: not ready for good (the process is about to exit). */
  failed(reason: string): void {
    this.#problem = `the leader term failed: ${reason}`;
  }

  /** A stop began (SIGTERM): not ready, unless a failure is already reported. */
  stopping(): void {
    this.#problem ??= "shutting down";
  }
}

/** Wraps `run` so that its failure reaches `/readyz` before anything else happens. */
function reportingFailure(
  run: (term: AbortSignal) => Promise<void>,
  readiness: LeadershipReadiness,
): (term: AbortSignal) => Promise<void> {
  return async (term) => {
    try {
      await run(term);
    } catch (e) {
      if (!(term.aborted && isAbort(e, term))) readiness.failed(e instanceof Error ? e.message : String(e));
      throw e;
    }
    if (!term.aborted) readiness.failed("the controllers stopped on their own");
  };
}

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** `--leader-elect=false`: one term from now until `signal` aborts or the term fails. */
async function runUnelected(
  deps: LeadershipDeps,
  run: (term: AbortSignal) => Promise<void>,
  signal: AbortSignal,
): Promise<LeadershipOutcome> {
  const { log, clock } = deps;
  log.info("leader election disabled: controllers start now");
  const term = new LeaderTerm(run);
  const end = await Promise.race([term.ended, aborted(signal).then(() => undefined)]);
  if (end?.kind === "failed") {
    log.error("the controllers failed: {reason}", { reason: end.reason });
  } else {
    log.info("stopping: controllers told to stop");
  }
  await term.stop({ clock, log, drainMs: deps.drainTimeoutMs });
  return end?.kind === "failed" ? "failed" : "stopped";
}

/** Runs `run` as leader terms until `signal` aborts ("stopped"), leadership is lost, or a term fails. */
export async function runLeadership(
  config: LeadershipConfig,
  deps: LeadershipDeps,
  run: (term: AbortSignal) => Promise<void>,
  signal: AbortSignal,
): Promise<LeadershipOutcome> {
  const { readiness, watch } = deps;
  const onStop = () => readiness.stopping();
  signal.addEventListener("abort", onStop, { once: true });
  const stopWatch = new AbortController();
  let watching: Promise<void> | undefined;
  try {
    const reported = reportingFailure(run, readiness);
    if (!(deps.fence instanceof SwitchFence)) return await runUnelected(deps, reported, signal);
    watching = watch?.run(stopWatch.signal);
    const elector = new LeaderElector({
      api: deps.api,
      changes: watch,
      clock: deps.clock,
      log: deps.log,
      metrics: deps.metrics,
      identity: deps.identity,
      namespace: config.namespace,
      name: config.name,
      leaseDurationMs: config.leaseDurationMs,
      renewDeadlineMs: config.renewDeadlineMs,
      retryPeriodMs: config.retryPeriodMs,
      fence: deps.fence,
      drainTimeoutMs: deps.drainTimeoutMs,
    });
    const onStartedLeading = (term: AbortSignal) => {
      // A leader has no use for it: it ends when this process stops leading.
      stopWatch.abort();
      return reported(term);
    };
    const outcome = await elector.run(signal, { onStartedLeading });
    return outcome === "released" ? "stopped" : outcome;
  } finally {
    signal.removeEventListener("abort", onStop);
    stopWatch.abort();
    await watching;
  }
}
