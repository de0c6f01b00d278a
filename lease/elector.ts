/**
 * Leader election on a Lease with client-go's semantics: a candidate takes the Lease when it is free or
 * when its record has not changed for `leaseDurationSeconds` on the candidate's own monotonic clock
 * (never by comparing wall clocks across nodes); the leader renews every retry period and gives up, fence
 * first, when it has not renewed within the renew deadline.
 */
import { linkSignals } from "../common/abort.ts";
import { type Clock, isAbort } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Registry } from "../common/metrics.ts";
import { type ElectorMetrics, electorMetrics, reasonOf, timeoutAfter } from "./elector_parts.ts";
import type { SwitchFence } from "../common/write_guard.ts";
import { LeaderTerm } from "./term.ts";
import { ObservedLease } from "./observed.ts";
import type { LeaseChanges } from "./watch.ts";
import {
  type LeaseApi,
  LeaseApiError,
  LeaseConflictError,
  type LeaseRecord,
  type LeaseSnapshot,
} from "./lease.ts";

/** client-go's JitterFactor for the acquire retry: a candidate waits retryPeriod × [1, 2.2). */
export const ACQUIRE_JITTER_FACTOR = 1.2;

/** What a `LeaderElector` needs. Durations are milliseconds on `clock.monotonic()`. */
export interface LeaderElectorDeps {
  api: LeaseApi;
  clock: Clock;
  log: Logger;
  metrics: Registry;
  /** `<hostname>_<uuid>` (see `newIdentity`). */
  identity: string;
  namespace: string;
  name: string;
  /** How long others wait after the last change they saw; written rounded up to whole seconds. */
  leaseDurationMs: number;
  /** The leader gives up when it has not renewed for this long; must be below `leaseDurationMs`. */
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Switched on while leading; turns itself off at the renew deadline even if a request hangs. */
  fence: SwitchFence;
  /** Timeout of one Lease request (default half the renew deadline), cut to the time left before the deadline. */
  requestTimeoutMs?: number;
  /**
   * Tells a standby of every change of the Lease at once (a watch): it takes a released Lease at once and an
   * unrenewed one the moment it expires; without it, it polls.
   */
  changes?: LeaseChanges;
  /** How long a stopping term may take before `run` returns anyway (default `DEFAULT_DRAIN_MS`). */
  drainTimeoutMs?: number;
  /**
   * How long one write attempt may run (default lease duration minus renew deadline, as `wiring/parts.ts` sets
   * the Linode client's): a release waits this long after the last write sent when writes were in flight.
   */
  writeTimeoutMs?: number;
  /** Random source of the acquire jitter, 0..1 (tests). */
  random?: () => number;
}

/** What runs while this process leads. */
export interface LeaderCallbacks {
  /** Runs the controllers until `term` aborts; throwing, or returning before that, fails the term. */
  onStartedLeading(term: AbortSignal): Promise<void>;
}

/**
 * How `run` ended: "released" after its signal aborted (Lease handed back), "lost" when renewal failed,
 * "failed" when the controllers failed while leading (Lease handed back too).
 */
export type ElectionOutcome = "released" | "lost" | "failed";

/** Runs one leader election on one Lease. `run` is meant to be called once per process. */
export class LeaderElector {
  readonly #deps: LeaderElectorDeps;
  readonly #metrics: ElectorMetrics;
  readonly #labels: { lease: string };
  readonly #leaseDurationSec: number;
  readonly #requestTimeoutMs: number;
  readonly #observed: ObservedLease;
  #lastRenewMs = 0;
  /** Set when a renew finds the Lease deleted: the leader steps down at once, without re-creating it. */
  #gone = false;
  /** Releases seen by the watch; one during an attempt means "try again now". */
  #releases = 0;
  /** Wakes a sleeping candidate when the watch sees a release. */
  #wake: AbortController | undefined;

  constructor(deps: LeaderElectorDeps) {
    const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = deps;
    if (!(retryPeriodMs > 0)) throw new RangeError("retryPeriodMs must be positive");
    if (!(renewDeadlineMs > retryPeriodMs * ACQUIRE_JITTER_FACTOR)) {
      throw new RangeError("renewDeadlineMs must be greater than 1.2 × retryPeriodMs");
    }
    if (!(leaseDurationMs > renewDeadlineMs)) {
      throw new RangeError("leaseDurationMs must be greater than renewDeadlineMs");
    }
    this.#deps = deps;
    this.#observed = new ObservedLease(deps.clock, deps.identity);
    this.#metrics = electorMetrics(deps.metrics);
    this.#labels = { lease: `${deps.namespace}/${deps.name}` };
    this.#leaseDurationSec = Math.ceil(leaseDurationMs / 1000);
    this.#requestTimeoutMs = Math.min(deps.requestTimeoutMs ?? renewDeadlineMs / 2, renewDeadlineMs);
  }

  /** Remembers a snapshot seen or written, and reports the Lease's transition count from it. */
  #see(lease: LeaseSnapshot): void {
    this.#observed.see(lease);
    this.#metrics.leaseTransitions.set(this.#labels, lease.record.leaseTransitions);
  }

  /** True while the last record this process saw or wrote names it as holder. */
  get isLeader(): boolean {
    return this.#observed.isMine;
  }

  /**
   * Campaigns until leading, runs `onStartedLeading` as one term and renews until `signal` aborts
   * ("released"), the renew deadline passes ("lost") or the term fails ("failed"). Then, in this order: the
   * fence closes (no more writes), the controllers are told to stop, the Lease is released (not when lost),
   * and the controllers get at most `drainTimeoutMs` to finish: a busy controller never holds up a hand-over.
   */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<ElectionOutcome> {
    this.#deps.fence.set(false);
    if (!(await this.#acquire(signal))) return "released";
    const { fence, log, clock, identity } = this.#deps;
    if (signal.aborted) {
      // The stop came while the acquiring write was in flight: hand the Lease back, start nothing.
      log.info("stop requested while taking lease {lease}: releasing it without leading", this.#labels);
      await this.#release();
      return "released";
    }
    fence.leadUntil(this.#lastRenewMs + this.#deps.renewDeadlineMs, clock);
    this.#metrics.isLeader.set(this.#labels, 1);
    this.#metrics.transitions.inc(this.#labels);
    log.info("became leader of lease {lease} as {identity}", { ...this.#labels, identity });

    const term = new LeaderTerm((t) => callbacks.onStartedLeading(t));
    const renewed = await this.#renewLoop(AbortSignal.any([signal, term.endedSignal]));
    const end = term.endedSignal.aborted && !signal.aborted ? await term.ended : undefined;
    if (renewed === "lost") return await this.#stepDown("lost", "leadership lost", term);
    if (end?.kind === "failed") {
      return await this.#stepDown("failed", `the leader term failed: ${end.reason}`, term);
    }
    return await this.#stepDown("released", reasonOf(signal), term);
  }

  /** Ends a term: fence first, then the stop, the release (unless lost), and a bounded wait for the controllers. */
  async #stepDown(outcome: ElectionOutcome, why: string, term: LeaderTerm): Promise<ElectionOutcome> {
    const { fence, log, clock, identity } = this.#deps;
    // A write in flight may land after its abort: the release waits until it can no longer be running.
    const { leaseDurationMs, renewDeadlineMs, writeTimeoutMs = leaseDurationMs - renewDeadlineMs } =
      this.#deps;
    const landedByMs = fence.writesInFlight > 0 ? fence.lastWriteStartMs + writeTimeoutMs : -Infinity;
    // Writes stop first: before the Lease can expire for the others, and before it is handed over.
    fence.set(false);
    this.#metrics.isLeader.set(this.#labels, 0);
    const level = outcome === "released" ? "info" : "error";
    log[level]("stopping the leader term ({why}): writes fenced off, controllers told to stop", {
      ...this.#labels,
      why,
    });
    const drained = term.stop({ clock, log, drainMs: this.#deps.drainTimeoutMs });
    if (outcome !== "lost") {
      const waitMs = landedByMs - clock.monotonic();
      if (waitMs > 0) {
        log.info("waiting {waitMs} ms for writes in flight before releasing lease {lease}", {
          ...this.#labels,
          waitMs,
        });
        await clock.sleep(waitMs);
      }
      await this.#release();
    }
    const verb = outcome === "lost" ? "lost" : "released";
    log.info(`${verb} leadership of lease {lease} as {identity}`, { ...this.#labels, identity });
    await drained;
    return outcome;
  }

  /**
   * Tries until this process holds the Lease (true) or `signal` aborts (false). One sleep per attempt, cut
   * short when the watch sees the Lease released and ending when the observed holder's Lease expires; a
   * release seen during an attempt means another at once.
   */
  async #acquire(signal: AbortSignal): Promise<boolean> {
    const { clock, changes } = this.#deps;
    const stopWatching = changes?.onChange((lease) => this.#onChange(lease));
    try {
      for (;;) {
        if (signal.aborted) return false;
        const releasesBefore = this.#releases;
        const startedMs = clock.monotonic();
        if (await this.#attempt("acquire", this.#requestTimeoutMs, signal)) {
          this.#lastRenewMs = startedMs;
          return true;
        }
        if (this.#releases !== releasesBefore) continue;
        if (!(await this.#waitForRetry(this.#retryWaitMs(), signal))) return false;
      }
    } finally {
      stopWatching?.();
    }
  }

  /**
   * A change the watch saw while campaigning. Only a release (holder cleared) frees the Lease at once. A
   * deletion frees nothing early: the holder may lead until its renew meets the 404, so the Lease is taken
   * only once the duration of the last record seen has passed (the next attempt then finds it gone and
   * creates it).
   */
  #onChange(lease: LeaseSnapshot | undefined): void {
    if (!lease) {
      this.#deps.log.info(
        "lease {lease} was deleted: waiting for its last holder's term to expire",
        this.#labels,
      );
      return;
    }
    this.#see(lease);
    if (lease.record.holderIdentity !== "") return;
    // Logged here, not when the sleep wakes: a release seen while an attempt is in flight starts the next one
    // at once without sleeping.
    this.#deps.log.info("lease {lease} was released: trying to take it now", this.#labels);
    this.#releases++;
    this.#wake?.abort();
  }

  /** client-go's jittered retry period, cut short to the moment the observed holder's Lease expires. */
  #retryWaitMs(): number {
    const { clock, retryPeriodMs, random = Math.random } = this.#deps;
    const jitteredMs = retryPeriodMs * (1 + random() * ACQUIRE_JITTER_FACTOR);
    if (!this.#observed.isHeldByOther) return jitteredMs;
    const untilExpiryMs = this.#observed.expiresAtMs - clock.monotonic();
    return untilExpiryMs > 0 ? Math.min(jitteredMs, untilExpiryMs) : jitteredMs;
  }

  /** Sleeps `waitMs`, or less when the Lease is seen released; false when `signal` aborts. */
  async #waitForRetry(waitMs: number, signal: AbortSignal): Promise<boolean> {
    const { clock } = this.#deps;
    const wake = new AbortController();
    this.#wake = wake;
    try {
      // Not AbortSignal.any: `signal` lives as long as the process (see common/abort.ts).
      using linked = linkSignals(signal, wake.signal);
      await clock.sleep(waitMs, linked.signal);
      return true;
    } catch (e) {
      if (signal.aborted) return false;
      if (wake.signal.aborted) return true;
      throw e;
    } finally {
      this.#wake = undefined;
    }
  }

  /** Renews every retry period; one sleep per attempt, never past the renew deadline. */
  async #renewLoop(signal: AbortSignal): Promise<ElectionOutcome> {
    const { clock, fence, retryPeriodMs, renewDeadlineMs, identity, log } = this.#deps;
    for (;;) {
      const leftMs = this.#lastRenewMs + renewDeadlineMs - clock.monotonic();
      try {
        await clock.sleep(Math.min(retryPeriodMs, Math.max(0, leftMs)), signal);
      } catch (e) {
        if (isAbort(e, signal)) return "released";
        throw e;
      }
      const startedMs = clock.monotonic();
      // The fence checks the same deadline; the loop does not rely on it to notice.
      if (!fence.leading || startedMs >= this.#lastRenewMs + renewDeadlineMs) return "lost";
      const timeoutMs = Math.min(this.#requestTimeoutMs, this.#lastRenewMs + renewDeadlineMs - startedMs);
      if (await this.#attempt("renew", timeoutMs, signal)) {
        // Measured from when the request was sent: others saw the change no earlier than that.
        this.#lastRenewMs = startedMs;
        fence.leadUntil(startedMs + renewDeadlineMs, clock);
      } else if (this.#gone) {
        log.warning("lease {lease} was deleted: stepping down now", { ...this.#labels, identity });
        return "lost";
      } else if (this.#observed.snapshot && !this.isLeader) {
        log.warning("lease {lease} is now held by {holder}", {
          ...this.#labels,
          holder: this.#observed.snapshot.record.holderIdentity,
          identity,
        });
        return "lost";
      }
    }
  }

  /** One acquire-or-renew with its own timeout; failures are counted and logged, never thrown. */
  async #attempt(phase: "acquire" | "renew", timeoutMs: number, stop: AbortSignal): Promise<boolean> {
    using timeout = timeoutAfter(this.#deps.clock, timeoutMs);
    // A stop cuts a renew short: the release must not wait for a slow request. (A renew cut short after it
    // committed makes the release meet a 409, re-read, and release again.) An acquire is never cut short: one
    // that committed must be released, not left to expire; but it writes nothing once the stop has come.
    const renewing = phase === "renew";
    using linked = linkSignals(timeout.signal, renewing ? stop : undefined);
    const signal = linked.signal;
    try {
      return await this.#tryAcquireOrRenew(signal, renewing, stop);
    } catch (e) {
      if (stop.aborted) return false;
      const failures = phase === "acquire" ? this.#metrics.acquireFailures : this.#metrics.renewFailures;
      failures.inc(this.#labels);
      const level = phase === "renew" || !(e instanceof LeaseConflictError) ? "warning" : "debug";
      this.#deps.log[level]("cannot {phase} lease {lease}: {error}", {
        ...this.#labels,
        phase,
        error: String(e),
      });
      if (e instanceof LeaseConflictError && !this.#gone) await this.#reread(signal);
      return false;
    }
  }

  /**
   * client-go's tryAcquireOrRenew: fast path for the leader, then read, decide and write. While renewing,
   * every write asks the fence first: after a 409 and a re-read, the renew deadline may have passed. While
   * acquiring, every write asks `stop` first. A renew that finds the Lease deleted never re-creates it.
   */
  async #tryAcquireOrRenew(signal: AbortSignal, renewing: boolean, stop: AbortSignal): Promise<boolean> {
    const { api, clock, identity, namespace, name, fence } = this.#deps;
    const mayWrite = () => {
      if (renewing) fence.assertLeading();
      else stop.throwIfAborted();
    };
    const nowMs = clock.now();
    const observed = this.#observed.snapshot;
    if (observed && this.isLeader) {
      try {
        mayWrite();
        this.#see(await api.replace(observed, this.#renewal(observed.record, nowMs), { signal }));
        return true;
      } catch (e) {
        // 404: deleted (a real apiserver answers a replace of a deleted Lease 409, UID precondition: the read
        // below then finds it gone).
        if (renewing && e instanceof LeaseApiError && e.status === 404) this.#gone = true;
        // 409: someone else wrote since our last write; re-read below before writing again.
        if (!(e instanceof LeaseConflictError)) throw e;
      }
    }
    const current = await api.get({ namespace, name }, { signal });
    if (!current) {
      if (renewing) {
        this.#gone = true;
        throw new LeaseApiError(`Lease ${namespace}/${name} was deleted`, 404);
      }
      // Deleted while held: its holder may lead until its renew meets the 404; wait out the last record seen.
      if (this.#observed.isHeldByOther) return false;
      const fresh = { ...this.#renewal(undefined, nowMs), acquireTimeMs: nowMs, leaseTransitions: 0 };
      mayWrite();
      this.#see(await api.create({ namespace, name }, fresh, { signal }));
      return true;
    }
    this.#see(current);
    const holder = current.record.holderIdentity;
    if (this.#observed.isHeldByOther) return false;
    // A poll can find a release before the watch tells of it.
    if (holder === "" && !renewing) {
      this.#deps.log.info("lease {lease} found released: taking it", this.#labels);
    }
    const record = holder === identity ? this.#renewal(current.record, nowMs) : {
      ...this.#renewal(undefined, nowMs),
      acquireTimeMs: nowMs,
      leaseTransitions: current.record.leaseTransitions + 1,
    };
    mayWrite();
    this.#see(await api.replace(current, record, { signal }));
    return true;
  }

  /** The record this process writes to renew, keeping acquireTime and transitions of `previous`. */
  #renewal(previous: LeaseRecord | undefined, nowMs: number): LeaseRecord {
    return {
      holderIdentity: this.#deps.identity,
      leaseDurationSec: this.#leaseDurationSec,
      acquireTimeMs: previous?.acquireTimeMs ?? nowMs,
      renewTimeMs: nowMs,
      leaseTransitions: previous?.leaseTransitions ?? 0,
    };
  }

  /** After a conflict: read the Lease again so the next write starts from its current version. */
  async #reread(signal: AbortSignal): Promise<void> {
    const { api, namespace, name } = this.#deps;
    try {
      const current = await api.get({ namespace, name }, { signal });
      if (current) this.#see(current);
    } catch {
      // The next attempt reads again anyway.
    }
  }

  /** Hands the Lease back (no holder, 1 s duration) so a standby takes over at once. */
  async #release(): Promise<void> {
    const { api, clock, log } = this.#deps;
    using timeout = timeoutAfter(clock, this.#deps.renewDeadlineMs);
    const signal = timeout.signal;
    for (let tries = 0; tries < 2 && this.isLeader; tries++) {
      const base = this.#observed.snapshot;
      if (!base) return;
      const nowMs = clock.now();
      const record: LeaseRecord = {
        holderIdentity: "",
        leaseDurationSec: 1,
        acquireTimeMs: nowMs,
        renewTimeMs: nowMs,
        leaseTransitions: base.record.leaseTransitions,
      };
      try {
        this.#see(await api.replace(base, record, { signal }));
        return;
      } catch (e) {
        log.warning("cannot release lease {lease}: {error}", { ...this.#labels, error: String(e) });
        if (!(e instanceof LeaseConflictError)) return;
        await this.#reread(signal);
      }
    }
  }
}
