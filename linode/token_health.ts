/**
 * `--enable-token-health-checker`, as the Go CCM does it: the token must be accepted at start (`GET /profile`),
 * and is checked again every period; the first 401 means it was revoked or expired, and the CCM stops
 * (exit 1) so it does not act half-blind. Any other failure is "unknown", logged, and checked again later.
 */
import type { Clock } from "../common/clock.ts";
import { isAbort } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Registry } from "../common/metrics.ts";
import type { CallOptions } from "./caller.ts";
import { LinodeApiError } from "./errors.ts";

/** The Go CCM's period between token checks. */
export const DEFAULT_TOKEN_HEALTH_PERIOD_MS = 5 * 60_000;

/** What a check proved: the API accepted the token, or answered 401. */
export type TokenStatus = "valid" | "invalid";

/** The one call a check needs (`LinodeClient` implements it). */
export interface ProfileReader {
  getProfile(options?: CallOptions): Promise<unknown>;
}

/** Asks the API who the token belongs to; throws on anything but success or 401 (status unknown). */
export async function checkToken(client: ProfileReader, signal?: AbortSignal): Promise<TokenStatus> {
  try {
    await client.getProfile({ signal });
    return "valid";
  } catch (e) {
    if (e instanceof LinodeApiError && e.status === 401) return "invalid";
    throw e;
  }
}

/** Options of `watchTokenHealth`. */
export interface TokenHealthOptions {
  client: ProfileReader;
  clock: Clock;
  log: Logger;
  metrics: Registry;
  /** Time between checks (default 5 min). */
  periodMs?: number;
}

/**
 * Checks the token every period until `signal` aborts ("stopped") or the API answers 401 ("invalid").
 * The first check happens one period after the call: the caller checks once at start.
 */
export async function watchTokenHealth(
  options: TokenHealthOptions,
  signal: AbortSignal,
): Promise<"invalid" | "stopped"> {
  const { client, clock, log, metrics } = options;
  const valid = metrics.gauge("ccm_linode_token_valid", "1 while the last token check passed, 0 after a 401");
  const failures = metrics.counter("ccm_linode_token_check_errors_total", "Token checks that ended unknown");
  valid.set(undefined, 1);
  // Shown from 0, so an alert counting failed checks sees the first one too.
  failures.inc(undefined, 0);
  const periodMs = options.periodMs ?? DEFAULT_TOKEN_HEALTH_PERIOD_MS;
  for (;;) {
    try {
      await clock.sleep(periodMs, signal);
      if ((await checkToken(client, signal)) === "invalid") {
        valid.set(undefined, 0);
        return "invalid";
      }
      log.debug("linode api token is healthy");
    } catch (e) {
      if (signal.aborted && isAbort(e, signal)) return "stopped";
      failures.inc();
      log.warning("cannot tell whether the linode api token is valid: {error}", {
        error: e instanceof Error ? e.message : String(e),
      });
    }
  }
}
