/** The store's change log: what watches replay from a resourceVersion and what old snapshots are rebuilt from. */
import type { KubeObject, ResourceDef } from "./resources.ts";

/** A watch event type as it appears on the wire. */
export type EventType = "ADDED" | "MODIFIED" | "DELETED";

/** One committed change. `prev` is the object before the change (absent for ADDED). */
export interface StoreEvent {
  readonly rv: number;
  /** Monotonic milliseconds when committed (for pruning). */
  readonly at: number;
  readonly type: EventType;
  readonly def: ResourceDef;
  readonly object: KubeObject;
  readonly prev: KubeObject | undefined;
}

/** Events kept for a time window; older ones are compacted away, like etcd compaction. */
export class History {
  #events: StoreEvent[] = [];
  #head = 0;
  #compactedRv = 0;
  readonly #windowMs: number;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** The newest resourceVersion that was compacted away: watching from below it is a 410. */
  compactedRv(nowMs: number): number {
    this.prune(nowMs);
    return this.#compactedRv;
  }

  /** Records a committed change. */
  append(event: StoreEvent): void {
    this.#events.push(event);
    this.prune(event.at);
  }

  /** Drops every event, as a compaction at the newest revision does. */
  compactAll(): void {
    const last = this.#events.at(-1);
    if (last) this.#compactedRv = Math.max(this.#compactedRv, last.rv);
    this.#events = [];
    this.#head = 0;
  }

  /** Drops events older than the window. */
  prune(nowMs: number): void {
    const cutoff = nowMs - this.#windowMs;
    while (this.#head < this.#events.length && this.#events[this.#head]!.at < cutoff) {
      this.#compactedRv = this.#events[this.#head]!.rv;
      this.#head++;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#events.length) {
      this.#events = this.#events.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Events with `rv > fromRv`, oldest first. */
  *since(fromRv: number): Generator<StoreEvent> {
    let lo = this.#head;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#events[mid]!.rv <= fromRv) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.#events.length; i++) yield this.#events[i]!;
  }

  /** Events with `rv > fromRv`, newest first (for rebuilding an old snapshot). */
  newestFirstSince(fromRv: number): StoreEvent[] {
    return [...this.since(fromRv)].reverse();
  }
}
