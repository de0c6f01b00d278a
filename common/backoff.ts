/** Exponential backoff with jitter, shared by every retry loop (API retries, informer restarts, refreshes). */

/** Parameters of an exponential backoff. */
export interface BackoffOptions {
  /** Delay after the first failure. */
  baseMs: number;
  /** Upper bound of any delay. */
  maxMs: number;
  /** Growth per failure (default 2). */
  factor?: number;
  /** Share of the delay that is randomised, 0..1 (default 0.2: ±10 %). */
  jitter?: number;
}

/**
 * Delay before retry number `attempt` (0 = after the first failure): `baseMs * factor^attempt`,
 * capped at `maxMs`, spread by `jitter` so replicas do not retry in lockstep.
 */
export function backoffDelayMs(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? 0.2;
  const raw = Math.min(options.maxMs, options.baseMs * Math.pow(factor, Math.max(0, attempt)));
  const spread = raw * jitter * (random() - 0.5);
  return Math.max(0, Math.min(options.maxMs, Math.round(raw + spread)));
}

/** Counts consecutive failures and hands out the next delay; `reset()` after a success. */
export class Backoff {
  #failures = 0;
  constructor(readonly options: BackoffOptions, readonly random: () => number = Math.random) {}

  /** Consecutive failures since the last reset. */
  get failures(): number {
    return this.#failures;
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    return backoffDelayMs(this.#failures++, this.options, this.random);
  }

  /** Forgets past failures. */
  reset(): void {
    this.#failures = 0;
  }
}
