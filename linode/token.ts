/** Where the Linode API token comes from: a fixed value, or a file that Kubernetes may rotate. */
import type { Clock } from "../common/clock.ts";

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
