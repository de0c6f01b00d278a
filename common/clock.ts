/** Time as every loop sees it: passed in as a dependency so tests control it. */
export interface Clock {
  /** Wall-clock time in epoch milliseconds (for timestamps written to APIs). */
  now(): number;
  /** Monotonic milliseconds since an arbitrary origin (for durations, deadlines, expiry). */
  monotonic(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Rejects with the signal's reason, or an AbortError DOMException. */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("Aborted", "AbortError");
}

/** The real clock: Date.now, performance.now and setTimeout. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};

/** True when `e` is the rejection of an aborted signal (a normal way for a loop to end). */
export function isAbort(e: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted && e === signal.reason) return true;
  return e instanceof DOMException && e.name === "AbortError";
}

interface Sleeper {
  at: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** A manual clock for tests: time moves only when `advance()` is called. */
export class FakeClock implements Clock {
  #now: number;
  #mono = 0;
  #sleepers: Sleeper[] = [];

  constructor(startEpochMs = Date.UTC(2026, 0, 1)) {
    this.#now = startEpochMs;
  }

  now(): number {
    return this.#now + this.#mono;
  }

  monotonic(): number {
    return this.#mono;
  }

  /** Number of pending sleeps (lets tests wait until a loop is parked). */
  get pendingSleeps(): number {
    return this.#sleepers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = { at: this.#mono + Math.max(0, ms), resolve, reject };
      this.#sleepers.push(sleeper);
      if (!signal) return;
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(abortReason(signal));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      // The listener goes with the sleep: a long-lived signal would otherwise keep every finished sleep alive.
      sleeper.resolve = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
    });
  }

  /** Moves time forward, waking sleepers in order and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const target = this.#mono + ms;
    for (;;) {
      const next = this.#sleepers.filter((s) => s.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.#mono = Math.max(this.#mono, next.at);
      this.#sleepers = this.#sleepers.filter((s) => s !== next);
      next.resolve();
      for (let i = 0; i < 10; i++) await Promise.resolve();
    }
    this.#mono = target;
  }
}
