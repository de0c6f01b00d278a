/** Fault injection rules, programmable per route pattern and method. */
import type { Clock } from "../../common/clock.ts";
import { globToRegExp } from "../glob.ts";
import type { TransientFault } from "./fault_answers.ts";

/** Which requests a rule applies to, and how often. */
export interface FaultMatch {
  /** HTTP method; any when omitted. */
  method?: string;
  /** Route template glob, with or without the version prefix: `/linode/instances/{id}/configs*`. */
  route?: string;
  /** Trigger this many times, then remove the rule; unlimited when omitted. */
  count?: number;
  /** Chance (0..1) that a matching request triggers; 1 when omitted. */
  probability?: number;
  /** Only this page of a list (its `page` query parameter, 1 when absent): a listing failing half-way. */
  page?: number;
  /** Only requests whose `User-Agent` contains this (one CCM replica among several sharing a token). */
  agent?: string;
}

/** What a triggered rule does. */
export type FaultSpec =
  | { kind: "latency"; ms: number }
  | { kind: "error"; status?: 500 | 502 | 503 | 504 }
  | { kind: "rateLimit"; retryAfterSec?: number }
  | { kind: "hang" }
  | { kind: "outage"; durationMs: number; status?: number }
  | { kind: "truncatePage"; keep?: number }
  | { kind: "slowPages"; msPerPage: number }
  | TransientFault;

/** A fault rule: a spec plus its match. */
export type FaultRule = FaultSpec & FaultMatch;

/** A registered rule as listed. */
export interface FaultInfo {
  id: string;
  rule: FaultRule;
  hits: number;
}

/** A rule that triggered for one request. */
export interface Triggered {
  id: string;
  spec: FaultSpec;
}

interface Active extends FaultInfo {
  remaining?: number;
  untilMs?: number;
  pattern?: RegExp;
}

function checkRule(rule: FaultRule): void {
  const p = rule.probability;
  if (p !== undefined && !(p >= 0 && p <= 1)) throw new RangeError("probability must be within 0..1");
  if (rule.count !== undefined && !(Number.isInteger(rule.count) && rule.count > 0)) {
    throw new RangeError("count must be a positive integer");
  }
  if (rule.page !== undefined && !(Number.isInteger(rule.page) && rule.page > 0)) {
    throw new RangeError("page must be a positive integer");
  }
  if (rule.kind === "error" && rule.status !== undefined && ![500, 502, 503, 504].includes(rule.status)) {
    throw new RangeError("error status must be 500, 502, 503 or 504");
  }
  if (rule.kind === "htmlError" && rule.status !== undefined && ![400, 502, 503, 504].includes(rule.status)) {
    throw new RangeError("htmlError status must be 400, 502, 503 or 504");
  }
  const ms = rule.kind === "latency" ? rule.ms : rule.kind === "outage" ? rule.durationMs : 0;
  if (!(ms >= 0)) throw new RangeError("durations must be non-negative numbers");
}

/** The fault registry of one sim. Rules apply in the order they were added. */
export class Faults {
  #rules = new Map<string, Active>();
  #nextId = 1;
  #hung = new Map<string, Set<() => void>>();
  readonly #clock: Clock;
  readonly #random: () => number;

  constructor(clock: Clock, random: () => number = Math.random) {
    this.#clock = clock;
    this.#random = random;
  }

  /** Registers a rule; returns its id. Throws RangeError on a malformed rule. */
  add(rule: FaultRule): string {
    checkRule(rule);
    const id = `f${this.#nextId++}`;
    const active: Active = { id, rule: { ...rule }, hits: 0, remaining: rule.count };
    if (rule.route !== undefined) active.pattern = globToRegExp(rule.route);
    if (rule.kind === "outage") active.untilMs = this.#clock.monotonic() + rule.durationMs;
    this.#rules.set(id, active);
    return id;
  }

  /** Adds fixed latency to matching requests. */
  latency(ms: number, match: FaultMatch = {}): string {
    return this.add({ kind: "latency", ms, ...match });
  }

  /** Answers matching requests with a 5xx. */
  error(status: 500 | 502 | 503 | 504, match: FaultMatch = {}): string {
    return this.add({ kind: "error", status, ...match });
  }

  /** Answers matching requests with 429 and `Retry-After`. */
  rateLimit(retryAfterSec: number, match: FaultMatch = {}): string {
    return this.add({ kind: "rateLimit", retryAfterSec, ...match });
  }

  /** Never answers matching requests until the rule is removed or the sim closes. */
  hang(match: FaultMatch = {}): string {
    return this.add({ kind: "hang", ...match });
  }

  /** Answers every matching request with 503 for a window starting now. */
  outage(durationMs: number, match: FaultMatch = {}): string {
    return this.add({ kind: "outage", durationMs, ...match });
  }

  /** Returns fewer items than `page_size` and a wrong `pages` on matching list calls. */
  truncatePage(match: FaultMatch = {}, keep?: number): string {
    return this.add({ kind: "truncatePage", keep, ...match });
  }

  /** Delays list pages by `msPerPage` times the page number. */
  slowPages(msPerPage: number, match: FaultMatch = {}): string {
    return this.add({ kind: "slowPages", msPerPage, ...match });
  }

  /** Answers matching requests with a transient fault (busy, 408, maintenance, HTML pages, wrong bodies). */
  transient(fault: TransientFault, match: FaultMatch = {}): string {
    return this.add({ ...fault, ...match });
  }

  /** Removes one rule and releases requests it holds. */
  remove(id: string): boolean {
    this.#release(id);
    return this.#rules.delete(id);
  }

  /** Removes every rule and releases every hung request. */
  clear(): void {
    for (const id of [...this.#hung.keys()]) this.#release(id);
    this.#rules.clear();
  }

  /** The registered rules. */
  list(): FaultInfo[] {
    this.#expire();
    return [...this.#rules.values()].map(({ id, rule, hits }) => ({ id, rule: { ...rule }, hits }));
  }

  /** Requests currently held by `hang` rules. */
  get hungCount(): number {
    let n = 0;
    for (const set of this.#hung.values()) n += set.size;
    return n;
  }

  /**
   * The rules that trigger for one request (consumes counts). Route is the path template; `page` its list
   * page, `agent` its User-Agent.
   */
  select(method: string, pathTemplate: string, page = 1, agent = ""): Triggered[] {
    this.#expire();
    const bare = pathTemplate.replace(/^\/v4(beta)?(?=\/)/, "");
    const out: Triggered[] = [];
    for (const active of this.#rules.values()) {
      const { rule } = active;
      if (rule.method !== undefined && rule.method.toUpperCase() !== method) continue;
      if (active.pattern && !active.pattern.test(pathTemplate) && !active.pattern.test(bare)) continue;
      if (rule.page !== undefined && rule.page !== page) continue;
      if (rule.agent !== undefined && !agent.includes(rule.agent)) continue;
      if (rule.probability !== undefined && this.#random() >= rule.probability) continue;
      active.hits++;
      if (active.remaining !== undefined && --active.remaining <= 0) this.#rules.delete(active.id);
      out.push({ id: active.id, spec: rule });
    }
    return out;
  }

  /** Waits until the rule `id` is removed or `signal` (the sim closing) aborts. */
  hold(id: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.#hung.get(id) ?? new Set<() => void>();
      this.#hung.set(id, waiters);
      const done = () => {
        waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  #release(id: string): void {
    const waiters = this.#hung.get(id);
    this.#hung.delete(id);
    for (const done of waiters ?? []) done();
  }

  #expire(): void {
    const now = this.#clock.monotonic();
    for (const active of this.#rules.values()) {
      if (active.untilMs !== undefined && now >= active.untilMs) this.#rules.delete(active.id);
    }
  }
}
