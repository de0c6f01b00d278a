/**
 * The resync every queue-driven controller runs beside its workers: each period, enqueue every key again
 * (read fresh), as a safety net for missed events and drift. The route, service and cloud-node controllers
 * share it; only their keys and periods differ.
 */
import { type Clock, isAbort } from "../../common/clock.ts";
import type { WorkQueue } from "./work_queue.ts";

/** What `runResync` enqueues, and when. */
export interface ResyncOptions {
  /** Waits `periodMs` between passes (the FakeClock in tests). */
  clock: Clock;
  /** Time from the start (and from each pass) to the next pass; the first pass is one period in. */
  periodMs: number;
  /** Ends the loop; an abort while waiting or while reading keys returns quietly. */
  signal: AbortSignal;
  /** The keys of one pass, read at that pass. A throw other than an abort ends the loop with that error. */
  keys: () => Iterable<string> | Promise<Iterable<string>>;
  /** Leaves a key that waits for its retry backoff alone, so the resync does not cut that backoff short. */
  keepBackoff?: boolean;
}

/** Enqueues `keys()` every `periodMs` until the signal aborts. */
export async function runResync(queue: WorkQueue<string>, options: ResyncOptions): Promise<void> {
  const { clock, periodMs, signal } = options;
  while (!signal.aborted) {
    let keys: Iterable<string>;
    try {
      await clock.sleep(periodMs, signal);
      keys = await options.keys();
    } catch (error) {
      if (isAbort(error, signal) || signal.aborted) return;
      throw error;
    }
    if (signal.aborted) return;
    for (const key of keys) {
      if (!options.keepBackoff || queue.numRequeues(key) === 0) queue.add(key);
    }
  }
}
