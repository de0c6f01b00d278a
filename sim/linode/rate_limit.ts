/**
 * Rate limits with the API's headers. The reference's "Rate limits" page (techdocs, updated 2026-09): "Every
 * Linode API operation applies a rate limit on a per-user basis"; paginated GET collections 200 per minute,
 * every other operation 1600 per minute, and dedicated limits (Create a Linode 20 per 15 s, Create a volume
 * 100/min, List images 20/min, List StackScripts 60/min, `/stats` 50/min, support tickets and service
 * transfer accepts 2/min). The 2023 text's "800 general API requests every two minutes" is gone from it. Some
 * operations report a tighter limit of their own in `X-RateLimit-Limit` that the page does not list: the
 * reserved IP operations answer with a limit of 10; the page gives no window for it, so the sim takes a
 * minute, like the other per-operation limits. Every response carries `X-RateLimit-Limit`,
 * `X-RateLimit-Remaining` and `X-RateLimit-Reset` (epoch seconds), and a 429 carries `Retry-After`, the seconds
 * until the window resets. The reference does not say how windows align or which limit the headers report
 * when several apply: the sim uses fixed windows opened by a bucket's first request and reports the
 * applicable limit with the fewest requests left. The 429 reason is the one recorded from the API in
 * linodego's fixtures ("Too many requests").
 */
import type { Clock } from "../../common/clock.ts";
import { globToRegExp } from "../glob.ts";

/** One limit: which requests it counts and how many fit in a window. */
export interface RateLimitRule {
  name: string;
  /** HTTP method; any when omitted. */
  method?: string;
  /** Route template glob, with or without the version prefix: `/nodebalancers*`. */
  route?: string;
  /** Only GETs of paginated collections. */
  list?: boolean;
  limit: number;
  windowMs: number;
  /** Count each route template apart ("route", the default: per endpoint) or all matching requests together. */
  per?: "route" | "all";
}

/** The limits the reference documents, per operation, plus those the API reports for its reserved IP calls. */
export const DOCUMENTED_RATE_LIMITS: readonly RateLimitRule[] = [
  { name: "operation", limit: 1600, windowMs: 60_000 },
  { name: "list", method: "GET", list: true, limit: 200, windowMs: 60_000 },
  { name: "linode-create", method: "POST", route: "/linode/instances", limit: 20, windowMs: 15_000 },
  { name: "volume-create", method: "POST", route: "/volumes", limit: 100, windowMs: 60_000 },
  { name: "image-list", method: "GET", route: "/images", limit: 20, windowMs: 60_000 },
  { name: "stackscript-list", method: "GET", route: "/linode/stackscripts", limit: 60, windowMs: 60_000 },
  { name: "stats", route: "*/stats*", limit: 50, windowMs: 60_000 },
  { name: "support-ticket", method: "POST", route: "/support/tickets", limit: 2, windowMs: 60_000 },
  {
    name: "transfer-accept",
    method: "POST",
    route: "/account/service-transfers/*/accept",
    limit: 2,
    windowMs: 60_000,
  },
  { name: "reserved-ip", route: "/networking/reserved/ips*", limit: 10, windowMs: 60_000 },
];

/** The default: headers on every response, a limit no test reaches. */
export const GENEROUS_RATE_LIMITS: readonly RateLimitRule[] = [
  { name: "general", limit: 1_000_000, windowMs: 60_000, per: "all" },
];

/** GET endpoints that answer one object, not a paginated collection, though their path ends in a word. */
const OBJECT_GETS = [
  /\/profile$/,
  /\/account$/,
  /\/account\/settings$/,
  /\/networking\/firewalls\/\{id\}\/rules$/,
  /\/linode\/instances\/\{id\}\/ips$/,
];

/** True for a GET of a paginated collection, judged from its route template. */
export function isCollection(method: string, template: string): boolean {
  if (method !== "GET" || /\{(id|address)\}$/.test(template)) return false;
  return !OBJECT_GETS.some((p) => p.test(template));
}

/** What one request got: headers to send, and `retryAfterSec` when it is refused. */
export interface RateDecision {
  headers: Record<string, string>;
  retryAfterSec?: number;
}

interface Compiled {
  rule: RateLimitRule;
  pattern?: RegExp;
}

interface Window {
  startMs: number;
  count: number;
}

function checkRule(rule: RateLimitRule): void {
  if (!rule.name) throw new RangeError("a rate limit needs a name");
  if (!(Number.isInteger(rule.limit) && rule.limit > 0)) {
    throw new RangeError("limit must be a positive integer");
  }
  if (!(Number.isFinite(rule.windowMs) && rule.windowMs > 0)) {
    throw new RangeError("windowMs must be positive");
  }
}

/** Counts requests per rule and bucket on the sim's clock. */
export class RateLimiter {
  #rules: Compiled[] = [];
  #windows = new Map<string, Window>();
  readonly #clock: Clock;

  constructor(clock: Clock, rules: readonly RateLimitRule[] = GENEROUS_RATE_LIMITS) {
    this.#clock = clock;
    this.configure(rules);
  }

  /** Replaces the rules and forgets every window; RangeError on a malformed rule. */
  configure(rules: readonly RateLimitRule[]): void {
    rules.forEach(checkRule);
    this.#rules = rules.map((rule) => ({
      rule: { ...rule },
      ...(rule.route ? { pattern: globToRegExp(rule.route) } : {}),
    }));
    this.#windows.clear();
  }

  /** The rules in force. */
  rules(): RateLimitRule[] {
    return this.#rules.map((c) => ({ ...c.rule }));
  }

  #applies(c: Compiled, method: string, template: string): boolean {
    const { rule } = c;
    if (rule.method !== undefined && rule.method.toUpperCase() !== method) return false;
    if (rule.list && !isCollection(method, template)) return false;
    const bare = template.replace(/^\/v4(beta)?(?=\/)/, "");
    return !c.pattern || c.pattern.test(template) || c.pattern.test(bare);
  }

  #window(c: Compiled, method: string, template: string, nowMs: number): Window {
    const key = c.rule.per === "all"
      ? c.rule.name
      : `${c.rule.name} ${method} ${template.replace(/^\/v4(beta)?/, "")}`;
    let w = this.#windows.get(key);
    if (!w || nowMs >= w.startMs + c.rule.windowMs) {
      w = { startMs: nowMs, count: 0 };
      this.#windows.set(key, w);
    }
    return w;
  }

  /** Counts one request (unless refused) and says what to answer; `template` is its route template. */
  check(method: string, template: string): RateDecision {
    const nowMs = this.#clock.now();
    const hits = this.#rules.filter((c) => this.#applies(c, method, template))
      .map((c) => ({ c, w: this.#window(c, method, template, nowMs) }));
    const full = hits.filter(({ c, w }) => w.count >= c.rule.limit);
    if (full.length === 0) { for (const { w } of hits) w.count++; }
    const tightest = hits.sort((a, b) =>
      (a.c.rule.limit - a.w.count) - (b.c.rule.limit - b.w.count) ||
      (a.w.startMs + a.c.rule.windowMs) - (b.w.startMs + b.c.rule.windowMs)
    )[0];
    if (!tightest) return { headers: {} };
    const resetMs = tightest.w.startMs + tightest.c.rule.windowMs;
    const headers = {
      "x-ratelimit-limit": String(tightest.c.rule.limit),
      "x-ratelimit-remaining": String(Math.max(0, tightest.c.rule.limit - tightest.w.count)),
      "x-ratelimit-reset": String(Math.ceil(resetMs / 1000)),
    };
    if (full.length === 0) return { headers };
    const latestReset = Math.max(...full.map(({ c, w }) => w.startMs + c.rule.windowMs));
    return { headers, retryAfterSec: Math.max(1, Math.ceil((latestReset - nowMs) / 1000)) };
  }
}
