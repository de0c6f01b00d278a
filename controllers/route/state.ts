/**
 * What the route controller remembers between passes of a term: Linodes of deleted Nodes, per-interface write
 * backoff, the controller-wide pause after a 429, which one-time reports were made, and what it read of Nodes.
 */
import { backoffDelayMs, type BackoffOptions } from "../../common/backoff.ts";
import { Fingerprints } from "../loop/runtime.ts";
import { CidrMemo } from "./plan.ts";

/** Default per-interface backoff after a failed write: 1 s doubling to 5 min. */
export const DEFAULT_WRITE_RETRY: BackoffOptions = { baseMs: 1_000, maxMs: 300_000 };
/** Default controller-wide pause after a 429 without `Retry-After`: 5 s doubling to 2 min. */
export const DEFAULT_RATE_LIMIT_PAUSE: BackoffOptions = { baseMs: 5_000, maxMs: 120_000 };
/**
 * Default wait before a Linode whose interfaces were read and had none in a configured VPC is read again:
 * 2 s doubling to 5 min (a Linode still provisioning gets its interface soon; one never in the VPC costs one
 * read per 5 min).
 */
export const DEFAULT_RELEARN: BackoffOptions = { baseMs: 2_000, maxMs: 300_000 };

interface Learned {
  /** Reads that found no interface in a configured VPC (or failed). */
  misses: number;
  retryAtMs: number;
}

interface Failure {
  attempts: number;
  retryAtMs: number;
  /** The list that failed: a different plan for the interface is tried at once. */
  ranges: string;
}

/** Options of `RouteState`. */
export interface RouteStateOptions {
  writeRetry?: BackoffOptions;
  rateLimitPause?: BackoffOptions;
  relearn?: BackoffOptions;
}

/** Mutable memory of one route controller run. All times are the clock's monotonic milliseconds. */
export class RouteState {
  /** Linode id → name of the deleted Node it belonged to. */
  readonly released = new Map<number, string>();
  /** Pod CIDR and range parses, kept across passes. */
  readonly cidrs = new CidrMemo();
  /** What a pass reads of each Node (routes, Ready, condition): the Node part of a pass's inputs. */
  readonly nodes = new Fingerprints();
  /** Each Node's routes (providerID, pod CIDRs), by name: a change starts a pass at once. */
  readonly routeFingerprints = new Map<string, string>();
  readonly #failures = new Map<string, Failure>();
  readonly #reported = new Set<string>();
  readonly #conditions = new Map<string, string>();
  readonly #learned = new Map<number, Learned>();
  readonly #o: RouteStateOptions;
  #pausedUntilMs = 0;
  #pauses = 0;

  constructor(options: RouteStateOptions = {}) {
    this.#o = options;
  }

  /** How long writes still wait after a 429 (0 when they may go). */
  pausedForMs(nowMs: number): number {
    return Math.max(0, this.#pausedUntilMs - nowMs);
  }

  /** Pauses every write after a 429: for `Retry-After` when given, else a growing backoff. */
  pause(nowMs: number, retryAfterMs: number | undefined): number {
    const ms = retryAfterMs ?? backoffDelayMs(this.#pauses, this.#pauseOptions());
    this.#pauses++;
    this.#pausedUntilMs = Math.max(this.#pausedUntilMs, nowMs + ms);
    return ms;
  }

  /** True while the interface backs off from a failed write of exactly `ranges`. */
  isBackingOff(key: string, ranges: readonly string[], nowMs: number): boolean {
    const f = this.#failures.get(key);
    return f !== undefined && f.ranges === ranges.join(",") && nowMs < f.retryAtMs;
  }

  /** Records a failed write; returns the delay before the interface is tried again. */
  failed(key: string, ranges: readonly string[], nowMs: number): number {
    const attempts = (this.#failures.get(key)?.attempts ?? 0) + 1;
    const delayMs = backoffDelayMs(attempts - 1, this.#o.writeRetry ?? DEFAULT_WRITE_RETRY);
    this.#failures.set(key, { attempts, retryAtMs: nowMs + delayMs, ranges: ranges.join(",") });
    return delayMs;
  }

  /** Records a successful write: the interface's backoff and the rate-limit backoff start over. */
  succeeded(key: string): void {
    this.#failures.delete(key);
    this.#pauses = 0;
  }

  /** Forgets the backoff of interfaces that no longer need a write (fixed elsewhere, or gone). */
  keepFailures(planned: ReadonlySet<string>): void {
    for (const key of this.#failures.keys()) if (!planned.has(key)) this.#failures.delete(key);
  }

  /** True while some interface's last write failed (the listing is then refreshed sooner). */
  hasFailedWrites(): boolean {
    return this.#failures.size > 0;
  }

  /** True when the Linode's interfaces should be read now: never read, or its wait after a miss is over. */
  needsLearning(linodeId: number, nowMs: number): boolean {
    const l = this.#learned.get(linodeId);
    return l === undefined || (l.misses > 0 && nowMs >= l.retryAtMs);
  }

  /** Records a read of the Linode's interfaces: `found` false (none in a configured VPC, or failed) waits longer each time. */
  learned(linodeId: number, nowMs: number, found: boolean): void {
    const misses = found ? 0 : (this.#learned.get(linodeId)?.misses ?? 0) + 1;
    const delayMs = misses === 0 ? Infinity : backoffDelayMs(misses - 1, this.#o.relearn ?? DEFAULT_RELEARN);
    this.#learned.set(linodeId, { misses, retryAtMs: nowMs + delayMs });
  }

  /** Forgets what was read of a Linode (its Node changed or left): the next pass reads it again if needed. */
  forgetLearned(linodeId: number): void {
    this.#learned.delete(linodeId);
  }

  /** Keeps read records only for Linodes that still lack an interface (the others are in the cache). */
  keepLearned(missing: ReadonlySet<number>): void {
    for (const id of this.#learned.keys()) if (!missing.has(id)) this.#learned.delete(id);
  }

  /** Milliseconds until the next backed-off write, re-read or the end of the pause; undefined when nothing waits. */
  nextRetryInMs(nowMs: number): number | undefined {
    let at = this.#pausedUntilMs > nowMs ? this.#pausedUntilMs : Infinity;
    for (const f of this.#failures.values()) at = Math.min(at, f.retryAtMs);
    for (const l of this.#learned.values()) at = Math.min(at, l.retryAtMs);
    return at === Infinity ? undefined : Math.max(0, at - nowMs);
  }

  /** True the first time `key` is seen: for reports made once, not every pass. */
  firstReport(key: string): boolean {
    if (this.#reported.has(key)) return false;
    this.#reported.add(key);
    return true;
  }

  /** Forgets one-time reports whose key starts with `prefix` (the condition they report has ended). */
  forgetReports(prefix: string): void {
    for (const key of this.#reported) if (key.startsWith(prefix)) this.#reported.delete(key);
  }

  /** The NetworkUnavailable state last written for a Node (`True/NoRouteCreated`), if any. */
  writtenCondition(node: string): string | undefined {
    return this.#conditions.get(node);
  }

  /** Remembers the state written for a Node, so a lagging informer does not cause a second patch. */
  recordCondition(node: string, state: string | undefined): void {
    if (state === undefined) this.#conditions.delete(node);
    else this.#conditions.set(node, state);
  }

  #pauseOptions(): BackoffOptions {
    return this.#o.rateLimitPause ?? DEFAULT_RATE_LIMIT_PAUSE;
  }
}
