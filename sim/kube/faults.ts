/** Fault injection and request counters for the Kubernetes emulator. */
import { globToRegExp } from "../glob.ts";
import type { KubeObject } from "./resources.ts";

/** One programmed fault: matching requests get a delay, a failure status, or both. */
export interface FaultRule {
  /** HTTP method, or `WATCH` for watch requests; omitted or `*` matches any. */
  method?: string;
  /** Route template (`/api/v1/nodes/{name}/status`); `*` in a string matches any run of characters. */
  route?: string | RegExp;
  /** Answer with this status (a Status object body); omitted: only delay, then serve normally. */
  status?: number;
  /** Sent as `Retry-After` (and `details.retryAfterSeconds`), typically with 429. */
  retryAfterSec?: number;
  /** Delay before answering. */
  latencyMs?: number;
  /**
   * Serve normally, but stall the body: the headers and the first half of the body go out, the rest is held
   * until the emulator closes (a proxy or an overloaded apiserver that stops mid-response).
   */
  stallBody?: boolean;
  /** How many requests the rule applies to; omitted: until removed. */
  times?: number;
  message?: string;
  /**
   * Per request path, every other matching request: the first one to a path gets the fault, the next one to the
   * same path passes, and so on (a 409 on every first write, each retry succeeding).
   */
  alternate?: boolean;
}

interface ActiveRule {
  rule: FaultRule;
  pattern: RegExp | undefined;
  remaining: number;
  /** Paths whose last matching request got the fault (`alternate`). */
  faulted: Set<string>;
}

/** What the fault controls act on: provided by the server. */
export interface FaultTargets {
  closeWatches(reset: boolean): number;
  /** Holds live watch events back (see `Faults.lagWatchEvents`); `undefined` sends them at once again. */
  lagWatches(lag: { ms: number; match: (obj: KubeObject) => boolean } | undefined): void;
  refuse(ms: number): Promise<void>;
  /** Listens again now, ending a `refuse` early. */
  reopen(): Promise<void>;
  whenListening(): Promise<void>;
  /** Compacts the watch history up to the current resourceVersion. */
  compact(): void;
}

/** Programmable faults: `add()` rules per method + route, drop watches, refuse connections for a while. */
export class Faults {
  #rules: ActiveRule[] = [];
  readonly #targets: FaultTargets;

  constructor(targets: FaultTargets) {
    this.#targets = targets;
  }

  /** Adds a rule; returns a function that removes it. */
  add(rule: FaultRule): () => void {
    const pattern = rule.route === undefined
      ? undefined
      : typeof rule.route === "string"
      ? globToRegExp(rule.route)
      : rule.route;
    const active: ActiveRule = { rule, pattern, remaining: rule.times ?? Infinity, faulted: new Set() };
    this.#rules.push(active);
    return () => {
      this.#rules = this.#rules.filter((r) => r !== active);
    };
  }

  /** Removes every rule and ends a watch lag. */
  clear(): void {
    this.#rules = [];
    this.#targets.lagWatches(undefined);
  }

  /** The rules still active (for the admin endpoint). */
  get rules(): readonly FaultRule[] {
    return this.#rules.map((r) => r.rule);
  }

  /** Finds and consumes the first rule matching a request (`path`: the request's own path, for `alternate`). */
  match(verb: string, route: string, path = route): FaultRule | undefined {
    for (const active of this.#rules) {
      const { rule, pattern } = active;
      if (rule.method !== undefined && rule.method !== "*" && rule.method.toUpperCase() !== verb) continue;
      if (pattern && !pattern.test(route)) continue;
      if (rule.alternate && active.faulted.delete(path)) continue;
      if (rule.alternate) active.faulted.add(path);
      active.remaining--;
      if (active.remaining <= 0) this.#rules = this.#rules.filter((r) => r !== active);
      return rule;
    }
    return undefined;
  }

  /** Ends every open watch (cleanly by default; `reset: true` errors the stream); returns how many. */
  dropWatches(options: { reset?: boolean } = {}): number {
    return this.#targets.closeWatches(options.reset ?? false);
  }

  /**
   * Makes every open and future watch lag behind the store, as an apiserver's watch cache can: from the first
   * live event whose object `match` accepts, events reach watchers `ms` late, in order (the ones after it queue
   * behind it). Writes are not delayed, so a client sees its own write answered before its watch shows it.
   * Returns a function that ends the lag for new events.
   */
  lagWatchEvents(ms: number, match: (obj: KubeObject) => boolean = () => true): () => void {
    this.#targets.lagWatches({ ms, match });
    return () => this.#targets.lagWatches(undefined);
  }

  /** Closes the listener so connections are refused; re-listens on the same port after `ms`. */
  refuseConnections(ms: number): Promise<void> {
    return this.#targets.refuse(ms);
  }

  /** Ends a `refuseConnections` now: listens again on the same port. */
  acceptConnections(): Promise<void> {
    return this.#targets.reopen();
  }

  /**
   * Compacts the watch history up to now, as etcd compaction does: a watch or list from any older
   * resourceVersion (an informer re-watching after a drop) gets 410 Expired and must list again.
   */
  expireWatchHistory(): void {
    this.#targets.compact();
  }

  /** Resolves when the server accepts connections again. */
  whenListening(): Promise<void> {
    return this.#targets.whenListening();
  }
}

/** One counted request. */
export interface CallRecord {
  /** `GET /api/v1/nodes`, `WATCH /api/v1/nodes`, `PATCH /api/v1/nodes/{name}/status`. */
  key: string;
  path: string;
  status: number;
  /** The request's `User-Agent` ("" when none): the CCM names its process there, so replicas are told apart. */
  userAgent: string;
  /** `performance.now()` when the request arrived: orders requests across the emulators of one process. */
  receivedAt: number;
  /**
   * `performance.now()` when the answer was ready (a write is committed by then): orders requests across the
   * emulators of one process. Undefined while pending.
   */
  answeredAt?: number;
}

const MAX_LOG = 10_000;

/** Request counters keyed by verb + route template; every request received is counted. */
export class Calls {
  #counts = new Map<string, number>();
  #log: CallRecord[] = [];
  readonly #listeners = new Set<(record: Readonly<CallRecord>) => void>();

  /** Counts a request as it arrives; the returned record gets its status when answered. */
  record(key: string, path: string, userAgent = ""): CallRecord {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    const rec: CallRecord = { key, path, status: 0, userAgent, receivedAt: performance.now() };
    this.#log.push(rec);
    if (this.#log.length > MAX_LOG) this.#log = this.#log.slice(-MAX_LOG / 2);
    return rec;
  }

  /** Fills in the answer of `rec` and tells every listener (the emulator calls it as it answers). */
  answered(rec: CallRecord, status: number): void {
    rec.status = status;
    rec.answeredAt = performance.now();
    for (const listener of this.#listeners) listener(rec);
  }

  /** Calls `listener` for every request as it is answered (a watch: when its stream starts). Returns the unsubscribe. */
  subscribe(listener: (record: Readonly<CallRecord>) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Requests seen for one key (`"GET /api/v1/nodes"`). */
  count(key: string): number {
    return this.#counts.get(key) ?? 0;
  }

  /** Requests seen in all. */
  total(): number {
    let sum = 0;
    for (const n of this.#counts.values()) sum += n;
    return sum;
  }

  /** All counters, by key. */
  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.#counts].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** The most recent requests, oldest first (bounded). */
  get log(): readonly CallRecord[] {
    return this.#log;
  }

  /** Zeroes every counter and clears the log. */
  reset(): void {
    this.#counts.clear();
    this.#log = [];
  }
}
