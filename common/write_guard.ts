/**
 * The write guard every client asks before it sends a write, and nothing else:
 * - the **fence**: nothing is sent once leadership is lost (the elector switches it);
 * - **shadow mode** (`--dry-run`): the Linode caller and the Kubernetes transport refuse every write, loudly.
 *   Controllers hand their writes to executors, which hold them in dry run (`controllers/loop/shadow.ts`);
 *   this guard is the safety net for a write path that bypassed them, so no code path can write in shadow mode.
 */
import type { Clock } from "./clock.ts";
import type { Logger } from "./log.ts";
import type { Registry } from "./metrics.ts";

/** Thrown by a fenced write when this process no longer leads. */
export class LeaseLostError extends Error {
  override name = "LeaseLostError";
  constructor(message = "Refusing to write: this instance is not the leader", options?: ErrorOptions) {
    super(message, options);
  }
}

/** What a writer needs to know about leadership. */
export interface Fence {
  /** True while this process holds the Lease (and its renew deadline has not passed). */
  readonly leading: boolean;
  /** Throws `LeaseLostError` unless leading. Call immediately before sending a write. */
  assertLeading(): void;
  /**
   * Aborted (with a `LeaseLostError`) the moment leadership ends, so writes in flight are cut off with it
   * (a passed deadline counts once the fence is next asked; the elector switches it off at the deadline);
   * a new signal per leadership period. Absent when leadership never ends (`--leader-elect=false`).
   */
  readonly termSignal?: AbortSignal;
  /**
   * A writer calls it as a write is sent (`atMs` on the monotonic clock) and calls the function it returns
   * once the write settled, so a leader that hands over knows whether a write may still be landing.
   */
  writeStarted?(atMs: number): () => void;
}

/** The fence used with `--leader-elect=false`: always leading. */
export const ALWAYS_LEADING: Fence = {
  leading: true,
  assertLeading(): void {},
};

/** A fence that a leader elector (or a test) switches on and off, optionally with a deadline. */
export class SwitchFence implements Fence {
  #leading = false;
  #untilMs = Infinity;
  #clock: Pick<Clock, "monotonic"> | undefined;
  #term = new AbortController();
  #writesInFlight = 0;
  #lastWriteStartMs = -Infinity;

  constructor(leading = false) {
    this.#switch(leading);
  }

  /** False once switched off or once the monotonic deadline of `leadUntil` has passed. */
  get leading(): boolean {
    this.#expire();
    return this.#leading;
  }

  get termSignal(): AbortSignal {
    this.#expire();
    return this.#term.signal;
  }

  /** Checked on every read, so a renew loop stuck in a hung request cannot keep writes open. */
  #expire(): void {
    if (this.#leading && this.#clock && this.#clock.monotonic() >= this.#untilMs) this.#switch(false);
  }

  writeStarted(atMs: number): () => void {
    this.#writesInFlight++;
    this.#lastWriteStartMs = Math.max(this.#lastWriteStartMs, atMs);
    let settled = false;
    return () => {
      if (!settled) this.#writesInFlight--;
      settled = true;
    };
  }

  /** Writes sent and not yet settled. */
  get writesInFlight(): number {
    return this.#writesInFlight;
  }

  /** When the latest write was sent (monotonic ms; -Infinity before any). */
  get lastWriteStartMs(): number {
    return this.#lastWriteStartMs;
  }

  /** Sets whether writes are allowed (no deadline). */
  set(leading: boolean): void {
    this.#switch(leading);
    this.#untilMs = Infinity;
    this.#clock = undefined;
  }

  /** Allows writes until `clock.monotonic()` reaches `deadlineMs`; each successful renew moves it on. */
  leadUntil(deadlineMs: number, clock: Pick<Clock, "monotonic">): void {
    this.#switch(true);
    this.#untilMs = deadlineMs;
    this.#clock = clock;
  }

  /** Starts a new term signal when leadership begins, aborts it when leadership ends. */
  #switch(leading: boolean): void {
    this.#leading = leading;
    if (leading && this.#term.signal.aborted) this.#term = new AbortController();
    if (!leading && !this.#term.signal.aborted) this.#term.abort(new LeaseLostError());
  }

  assertLeading(): void {
    if (!this.leading) throw new LeaseLostError();
  }
}

/** Which client refused: the Linode API or the Kubernetes API. */
export type GuardedClient = "linode" | "kubernetes";

/**
 * A write attempted in dry-run. Retrying cannot help (`permanent`): the key waits until its object changes,
 * so a forgotten write path shows as one error line per change, not a hot loop.
 */
export class DryRunWriteError extends Error {
  override name = "DryRunWriteError";
  readonly permanent = true;
  constructor(readonly client: GuardedClient, readonly call: string) {
    super(`Refusing to send ${call} to the ${client === "linode" ? "Linode" : "Kubernetes"} API: --dry-run`);
  }
}

/** Asked by a client immediately before it sends a write. */
export interface WriteGuard {
  /** Throws `DryRunWriteError` when writes are refused; `call` is `METHOD /route` (no body, no query). */
  assertWritable(client: GuardedClient, call: string): void;
}

/** The guard of `--dry-run`: refuses every write, logs it at error and counts it. */
export class DryRunGuard implements WriteGuard {
  readonly #log: Logger;
  readonly #metrics: Registry;

  constructor(options: { log: Logger; metrics: Registry }) {
    this.#log = options.log;
    this.#metrics = options.metrics;
  }

  assertWritable(client: GuardedClient, call: string): void {
    // A controller reached its client instead of recording the action: a bug worth a person's attention.
    this.#log.error("dry run: refused {client} write {call}: a write path did not record its action", {
      client,
      call,
    });
    this.#metrics.counter(
      "ccm_dry_run_refused_writes_total",
      "Writes refused by the --dry-run client guard (each one is a write path that did not record its action)",
      ["client"],
    ).inc({ client });
    throw new DryRunWriteError(client, call);
  }
}
