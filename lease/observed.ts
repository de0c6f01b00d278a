/**
 * What a candidate knows of the Lease, as client-go's observedRecord and observedTime: the last snapshot seen
 * and when, on this process's monotonic clock, its record last changed. Expiry is judged on that clock only,
 * never by comparing wall clocks across nodes.
 */
import type { Clock } from "../common/clock.ts";
import type { LeaseSnapshot } from "./lease.ts";

/** The last Lease snapshot one candidate saw, with the time its record last changed. */
export class ObservedLease {
  readonly #clock: Pick<Clock, "monotonic">;
  readonly #identity: string;
  #snapshot: LeaseSnapshot | undefined;
  #changedAtMs = 0;

  /** Observations of the candidate `identity`, timed on `clock`. */
  constructor(clock: Pick<Clock, "monotonic">, identity: string) {
    this.#clock = clock;
    this.#identity = identity;
  }

  /** The last snapshot seen or written, if any. */
  get snapshot(): LeaseSnapshot | undefined {
    return this.#snapshot;
  }

  /** True while the last snapshot names this candidate as holder. */
  get isMine(): boolean {
    return this.#snapshot?.record.holderIdentity === this.#identity;
  }

  /** Remembers `snapshot`; restarts the expiry clock only when the record changed. */
  see(snapshot: LeaseSnapshot): void {
    if (snapshot.fingerprint !== this.#snapshot?.fingerprint) this.#changedAtMs = this.#clock.monotonic();
    this.#snapshot = snapshot;
  }

  /** Monotonic time at which the last record seen expires: its duration after it was first seen. */
  get expiresAtMs(): number {
    return this.#changedAtMs + (this.#snapshot?.record.leaseDurationSec ?? 0) * 1000;
  }

  /** True while the last record seen names another holder whose Lease has not expired. */
  get isHeldByOther(): boolean {
    const holder = this.#snapshot?.record.holderIdentity ?? "";
    return holder !== "" && holder !== this.#identity && this.#clock.monotonic() < this.expiresAtMs;
  }
}
