/**
 * How long an informer waits before it lists or watches again: backoff after failures (counted in
 * `ccm_informer_restarts_total` and logged), and a pause when the server keeps closing new watches at once.
 */
import { Backoff, type BackoffOptions } from "../common/backoff.ts";
import type { Clock } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Counter, Registry } from "../common/metrics.ts";

const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 30_000 };
const DEFAULT_MIN_WATCH_MS = 1000;

/** Options of a `RestartPolicy`. */
export interface RestartPolicyOptions {
  /** Resource name for logs and metrics (`nodes`). */
  resource: string;
  log: Logger;
  metrics: Registry;
  clock: Clock;
  /** Delay between restarts after failures (default 500 ms doubling to 30 s). */
  backoff?: BackoffOptions;
  /** A watch that ends sooner than this without events counts as a failure for backoff (default 1 s). */
  minWatchMs?: number;
}

/** True for errors marked `permanent` (a missing RBAC permission, `KubeForbiddenError`). */
function isPermanent(e: unknown): boolean {
  return typeof e === "object" && e !== null && (e as { permanent?: unknown }).permanent === true;
}

/** The informer's restart backoff: reset by a watch that lived or saw events, grown by every failure. */
export class RestartPolicy {
  readonly #options: RestartPolicyOptions;
  readonly #backoff: Backoff;
  readonly #restarts: Counter;

  constructor(options: RestartPolicyOptions) {
    this.#options = options;
    this.#backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
    const restartsHelp = "Informer restarts after failures";
    this.#restarts = options.metrics.counter("ccm_informer_restarts_total", restartsHelp, ["resource"]);
  }

  /** Failures since the last watch that counted as a success. */
  get failures(): number {
    return this.#backoff.failures;
  }

  /** After a watch closed by the server: resets the backoff, or sleeps when the watch died young and silent. */
  async waitAfterClose(end: { events: number; startedAt: number }, signal: AbortSignal): Promise<void> {
    const lived = this.#options.clock.monotonic() - end.startedAt;
    if (end.events > 0 || lived >= (this.#options.minWatchMs ?? DEFAULT_MIN_WATCH_MS)) {
      this.#backoff.reset();
      return;
    }
    // The server keeps closing watches at once: resume from the same version, but not in a hot loop.
    await this.#options.clock.sleep(this.#backoff.next(), signal);
  }

  /** Records a failure and sleeps; false when aborted while sleeping. */
  async waitAfterFailure(e: unknown, signal: AbortSignal): Promise<boolean> {
    const { resource, log, clock } = this.#options;
    this.#restarts.inc({ resource });
    // A permission the CCM lacks stays missing until someone grants it (reported once, by `kube/permissions.ts`):
    // retried at the longest interval, never in a hot loop.
    const delayMs = isPermanent(e) ? this.#backoff.options.maxMs : this.#backoff.next();
    log.warning("{resource} informer failed, re-listing in {delayMs} ms: {error}", {
      resource,
      delayMs,
      error: e instanceof Error ? e.message : String(e),
    });
    try {
      await clock.sleep(delayMs, signal);
      return true;
    } catch {
      return false;
    }
  }
}
