/**
 * Where the Linode API token comes from, as the Go CCM decides it: the token file (`LINODE_API_TOKEN_FILE`,
 * else `/var/run/secrets/linode/api-token`) when it can be read at start, else `LINODE_API_TOKEN`;
 * `LINODE_API_TOKEN_CACHE_TTL_SECONDS` sets how long a token read from the file is used. Pure.
 */
import { Secret } from "./secret.ts";

/** Reads one variable, trimmed; `undefined` when unset or blank. */
export type ReadVar = (name: string) => string | undefined;

/** Where the Linode API token comes from. */
export type TokenSource =
  | { readonly kind: "env"; readonly token: Secret }
  | { readonly kind: "file"; readonly path: string; readonly cacheTtlMs: number };

/** Where the Go CCM looks for the token when `LINODE_API_TOKEN_FILE` is not set. */
export const DEFAULT_TOKEN_FILE = "/var/run/secrets/linode/api-token";

/** How long a token read from the file is used (the Go CCM's default, one minute). */
export const DEFAULT_TOKEN_CACHE_TTL_MS = 60_000;

/** Checks a token file at start: returns why it cannot be used, or `undefined` when it can. */
export type TokenFileCheck = (path: string) => string | undefined;

/** How `parseLinodeEnv` finds the token. */
export interface TokenOptions {
  /** Checks the token file at start (`readConfig` reads it once); without it a named file is taken as usable. */
  checkTokenFile?: TokenFileCheck;
  /** The file tried when `LINODE_API_TOKEN_FILE` is unset (`null` in `--dev`); default `DEFAULT_TOKEN_FILE`. */
  defaultTokenFile?: string | null;
  /** Receives lines worth a warning at start (a token file passed over, a cache TTL ignored). */
  warnings?: string[];
}

/** `LINODE_API_TOKEN_CACHE_TTL_SECONDS`, read as leniently as the Go CCM: anything but a positive integer is the default. */
function tokenCacheTtlMs(read: ReadVar, warnings: string[]): number {
  const text = read("LINODE_API_TOKEN_CACHE_TTL_SECONDS");
  if (text === undefined) return DEFAULT_TOKEN_CACHE_TTL_MS;
  const seconds = /^[+-]?\d+$/.test(text) ? Number(text) : NaN;
  if (Number.isSafeInteger(seconds) && seconds > 0) return seconds * 1000;
  warnings.push(
    `LINODE_API_TOKEN_CACHE_TTL_SECONDS: "${text}" is not a positive whole number of seconds; using 60 (as the Go CCM)`,
  );
  return DEFAULT_TOKEN_CACHE_TTL_MS;
}

/**
 * The Go CCM's order: the token file (`LINODE_API_TOKEN_FILE`, else `DEFAULT_TOKEN_FILE`) when it can be read at
 * start, else `LINODE_API_TOKEN`; neither usable is a problem naming both.
 */
export function tokenSource(read: ReadVar, options: TokenOptions, problems: string[]): TokenSource {
  const warnings = options.warnings ?? [];
  const token = read("LINODE_API_TOKEN");
  const named = read("LINODE_API_TOKEN_FILE");
  const defaultFile = options.defaultTokenFile === undefined ? DEFAULT_TOKEN_FILE : options.defaultTokenFile;
  const path = named ?? defaultFile ?? undefined;
  const cacheTtlMs = tokenCacheTtlMs(read, warnings);
  // Without a checker only a file the user named is assumed readable; the default path is a guess.
  const why = path === undefined
    ? "not set"
    : options.checkTokenFile
    ? options.checkTokenFile(path)
    : named === undefined
    ? "not checked"
    : undefined;
  if (path !== undefined && why === undefined) return Object.freeze({ kind: "file", path, cacheTtlMs });
  if (token !== undefined) {
    if (named !== undefined) {
      warnings.push(
        `LINODE_API_TOKEN_FILE: cannot use ${named}: ${why}; using LINODE_API_TOKEN instead (as the Go CCM)`,
      );
    }
    return Object.freeze({ kind: "env", token: new Secret(token) });
  }
  if (named !== undefined) {
    problems.push(
      `LINODE_API_TOKEN_FILE: cannot use ${named}: ${why} (and LINODE_API_TOKEN, the fallback, is not set)`,
    );
  } else {
    const file = path === undefined ? "" : `, and the token file ${path} cannot be used` +
      (why === "not checked" ? "" : `: ${why}`);
    problems.push(`LINODE_API_TOKEN: not set${file} (set LINODE_API_TOKEN or LINODE_API_TOKEN_FILE)`);
  }
  return Object.freeze({ kind: "env", token: new Secret("") });
}
