/** Fencing: every write asks the fence first, so nothing is sent once leadership is lost. */

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
}

/** The fence used with `--leader-elect=false`: always leading. */
export const ALWAYS_LEADING: Fence = {
  leading: true,
  assertLeading(): void {},
};

/** A fence that a leader elector (or a test) switches on and off. */
export class SwitchFence implements Fence {
  #leading: boolean;
  constructor(leading = false) {
    this.#leading = leading;
  }

  get leading(): boolean {
    return this.#leading;
  }

  /** Sets whether writes are allowed. */
  set(leading: boolean): void {
    this.#leading = leading;
  }

  assertLeading(): void {
    if (!this.#leading) throw new LeaseLostError();
  }
}
