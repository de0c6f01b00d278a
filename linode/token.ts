/**
 * The Linode API token: where it comes from (a fixed value, or a file that Kubernetes may rotate), and, for
 * `--enable-token-health-checker` as the Go CCM does it, whether the API still accepts it: at start
 * (`GET /profile`) and again every period; the first 401 means it was revoked or expired, and the CCM stops
 * (exit 1) so it does not act half-blind. Any other failure is "unknown", logged, and checked again later.
 */
import type { Clock } from "../common/clock.ts";
import { isAbort } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Registry } from "../common/metrics.ts";
import { LinodeApiError } from "./errors.ts";

/** Hands out the current token; asked before every request so rotation takes effect. */
export interface TokenSource {
  token(): Promise<string>;
  /** The token last handed out; `undefined` before the first successful read. */
  current(): string | undefined;
  /** Every token handed out so far, oldest first: a rotated-out token stays redacted (it may sit in an error). */
  seen(): readonly string[];
}

/** The token could not be read; the message names the file, never its content. */
export class TokenError extends Error {
  override name = "TokenError";
}

/** A token that never changes (`LINODE_API_TOKEN`, used when the token file cannot be read at start). */
export function staticToken(value: string): TokenSource {
  const token = value.trim();
  if (token === "") throw new TokenError("Linode API token is empty");
  return { token: () => Promise.resolve(token), current: () => token, seen: () => [token] };
}

/** Options of `fileToken`. */
export interface FileTokenOptions {
  clock: Clock;
  /** How long a read token is used before the file is looked at again (default 60 s, as the Go CCM). */
  minCheckIntervalMs?: number;
}

/** Default `minCheckIntervalMs` of `fileToken`. */
export const DEFAULT_TOKEN_CHECK_INTERVAL_MS = 60_000;

/**
 * A token read from `path` (a mounted Secret), re-read at most once per interval. Kubernetes rotates
 * Secrets by swapping a symlink; the file is tiny, so its content is compared rather than trusting
 * mtime (which a same-second, same-size rewrite would not change). A failed re-read keeps the last
 * good token.
 */
export function fileToken(path: string, options: FileTokenOptions): TokenSource {
  return new FileToken(path, options);
}

function errorName(e: unknown): string {
  return e instanceof Error ? e.name : "unknown error";
}

class FileToken implements TokenSource {
  readonly #path: string;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  #token: string | undefined;
  readonly #seen = new Set<string>();
  #checkedAt = -Infinity;
  #pending: Promise<string> | undefined;

  constructor(path: string, options: FileTokenOptions) {
    this.#path = path;
    this.#clock = options.clock;
    this.#intervalMs = options.minCheckIntervalMs ?? DEFAULT_TOKEN_CHECK_INTERVAL_MS;
  }

  token(): Promise<string> {
    const fresh = this.#clock.monotonic() - this.#checkedAt < this.#intervalMs;
    if (this.#token !== undefined && fresh) return Promise.resolve(this.#token);
    this.#pending ??= this.#refresh().finally(() => this.#pending = undefined);
    return this.#pending;
  }

  current(): string | undefined {
    return this.#token;
  }

  seen(): readonly string[] {
    return [...this.#seen];
  }

  async #refresh(): Promise<string> {
    try {
      this.#token = await this.#read();
      this.#seen.add(this.#token);
      this.#checkedAt = this.#clock.monotonic();
      return this.#token;
    } catch (e) {
      // A transient failure (mid-swap, I/O hiccup) keeps the last good token; retry on next call.
      if (this.#token !== undefined) return this.#token;
      throw e;
    }
  }

  async #read(): Promise<string> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.#path);
    } catch (e) {
      throw new TokenError(`Cannot read Linode token file ${this.#path}: ${errorName(e)}`);
    }
    const token = text.trim();
    if (token === "") throw new TokenError(`Linode token file ${this.#path} is empty`);
    return token;
  }
}

/** The Go CCM's period between token checks. */
export const DEFAULT_TOKEN_HEALTH_PERIOD_MS = 5 * 60_000;

/** What a check proved: the API accepted the token, or answered 401. */
export type TokenStatus = "valid" | "invalid";

/** The one call a check needs (`LinodeClient` implements it). */
export interface ProfileReader {
  getProfile(options?: { signal?: AbortSignal }): Promise<unknown>;
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
  // Shown from 0, so an alert counting failed checks sees the first one too.
  failures.inc(undefined, 0);
  valid.set(undefined, 1);
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
