/**
 * Upper bounds on the Linode calls a failing CCM may make, derived from its own retry settings (imported, not
 * restated), so a hot loop anywhere shows up as a count above the bound. Every loop that reads Linode state
 * backs off between failed attempts; each attempt is one call plus the API client's retries.
 */
import { DEFAULT_REFRESH_RETRY } from "../../cache/ttl_cache.ts";
import type { BackoffOptions } from "../../common/backoff.ts";
import {
  ORPHAN_CHECK_MS,
  RETRY_BASE_MS as SERVICE_RETRY_BASE_MS,
  RETRY_MAX_MS as SERVICE_RETRY_MAX_MS,
  SERVICE_RESYNC_MS,
} from "../../controllers/service/controller.ts";
import { DEFAULT_MAX_RETRIES } from "../../linode/caller.ts";

/** The share of a delay that jitter may take away (`backoffDelayMs` spreads ±jitter/2, default 0.2). */
function shortestFactor(backoff: BackoffOptions): number {
  return 1 - (backoff.jitter ?? 0.2) / 2;
}

/**
 * The most attempts a loop backing off with `backoff` can start within `windowMs`: one at once, then one
 * after each delay, every delay at its shortest (jitter taken off).
 */
export function attemptsWithin(windowMs: number, backoff: BackoffOptions): number {
  const factor = backoff.factor ?? 2;
  let attempts = 1;
  let elapsed = 0;
  for (let i = 0;; i++) {
    const delay = Math.min(backoff.maxMs, backoff.baseMs * Math.pow(factor, i)) * shortestFactor(backoff);
    if (elapsed + delay > windowMs) return attempts;
    elapsed += delay;
    attempts++;
  }
}

/** Calls one attempt may send: the request and the API client's retries of it. */
export const CALLS_PER_ATTEMPT = 1 + DEFAULT_MAX_RETRIES;

/** The calls one cached listing (instances, one VPC's IPs) may send while every refresh fails. */
export function cachedListingBound(windowMs: number, pages = 1): number {
  return attemptsWithin(windowMs, DEFAULT_REFRESH_RETRY) * CALLS_PER_ATTEMPT * pages;
}

/**
 * The calls one LoadBalancer Service may send while its syncs fail: the per-Service backoff plus the
 * resyncs that re-enqueue it; a sync stops at its first failed call.
 */
export function serviceSyncBound(windowMs: number): number {
  const retries = attemptsWithin(windowMs, { baseMs: SERVICE_RETRY_BASE_MS, maxMs: SERVICE_RETRY_MAX_MS });
  const resyncs = Math.floor(windowMs / SERVICE_RESYNC_MS) + 1;
  return (retries + resyncs) * CALLS_PER_ATTEMPT;
}

/** The calls of the service controller's orphan check (one NodeBalancer listing per period) in `windowMs`. */
export function orphanCheckBound(windowMs: number, pages = 1): number {
  return (Math.floor(windowMs / ORPHAN_CHECK_MS) + 1) * CALLS_PER_ATTEMPT * pages;
}

/** Route keys a Service sync reads or writes (its NodeBalancer, configs, nodes, firewalls). */
export function isServiceCall(key: string): boolean {
  return / \/v4(beta)?\/(nodebalancers|networking\/firewalls)/.test(key);
}
