/**
 * One leader term: the controllers running while this process leads. A term that fails (its controllers or
 * their setup throw, or they stop without being asked) is reported at once, so the leader can give up instead
 * of renewing a Lease while running no controller. Stopping a term is bounded: the caller waits at most a
 * drain deadline for busy controllers (a hung Linode request must not hold up a shutdown).
 */
import { type Clock, isAbort } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";

/** How long `stop` waits for the controllers by default. */
export const DEFAULT_DRAIN_MS = 5_000;

/** How a term ended: stopped when asked, or failed on its own (with the reason). */
export type TermEnd = { readonly kind: "stopped" } | { readonly kind: "failed"; readonly reason: string };

/** Runs `run(signal)` as one term; `ended` settles when it returns or throws, never rejects. */
export class LeaderTerm {
  readonly #abort = new AbortController();
  readonly #ended = new AbortController();
  /** How the term ended, once it has. */
  readonly ended: Promise<TermEnd>;

  /** Starts `run` at once. */
  constructor(run: (term: AbortSignal) => Promise<void>) {
    this.ended = this.#watch(run);
  }

  /** Aborted once the controllers have returned or thrown, whether asked to or not. */
  get endedSignal(): AbortSignal {
    return this.#ended.signal;
  }

  async #watch(run: (term: AbortSignal) => Promise<void>): Promise<TermEnd> {
    const signal = this.#abort.signal;
    let end: TermEnd;
    try {
      await run(signal);
      end = signal.aborted
        ? { kind: "stopped" }
        : { kind: "failed", reason: "the controllers stopped on their own" };
    } catch (e) {
      end = signal.aborted && isAbort(e, signal)
        ? { kind: "stopped" }
        : { kind: "failed", reason: e instanceof Error ? e.message : String(e) };
    }
    this.#ended.abort();
    return end;
  }

  /**
   * Tells the controllers to stop and waits for them up to `drainMs` on `clock`. Resolves true when they
   * stopped in time; otherwise logs, leaves them to finish on their own (their writes are fenced off by
   * now) and resolves false.
   */
  async stop(deps: { clock: Clock; log: Logger; drainMs?: number }): Promise<boolean> {
    const { clock, log, drainMs = DEFAULT_DRAIN_MS } = deps;
    this.#abort.abort(new DOMException("leader term stopped", "AbortError"));
    if (this.#ended.signal.aborted) return true;
    const timer = new AbortController();
    const startedMs = clock.monotonic();
    const inTime = await Promise.race([
      this.ended.then(() => true),
      clock.sleep(drainMs, timer.signal).then(() => false, () => true),
    ]);
    timer.abort();
    if (inTime) {
      log.info("controllers stopped");
      return true;
    }
    log.warning("controllers still busy {drainMs} ms after the stop: not waiting for them any longer", {
      drainMs,
    });
    // Not awaited on purpose: the process goes on with its shutdown; this only reports when they are done.
    this.ended.then(() => {
      log.info("controllers stopped {lateMs} ms after the stop", { lateMs: clock.monotonic() - startedMs });
    });
    return false;
  }
}
