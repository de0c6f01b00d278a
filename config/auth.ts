/**
 * `--authentication-*` and `--authorization-*`: the delegated authentication and authorisation of the secure
 * port (`server/auth.ts`), with upstream's flag names, defaults and path syntax.
 */
import type { DelegatedAuthConfig } from "./types.ts";

/** The flag access this section needs (`sections.ts`'s `FlagReader` has it; declared here to avoid a cycle). */
export interface AuthFlagReader {
  str(name: string): string;
  num(name: string): number;
  list(name: string): readonly string[];
}

/** TTLs above a day would keep a revoked token working for that long: refused as a likely unit mistake. */
const MAX_CACHE_TTL_MS = 24 * 3600_000;

/**
 * One `--authorization-always-allow-paths` entry as upstream's path authorizer reads it: a leading `/` is
 * optional, `*` may only end it (prefix match). pflag's CSV reading drops quotes around an entry, so the Go
 * CCM Helm chart's `--authorization-always-allow-paths="/metrics"` means `/metrics`; this does the same.
 */
export function normaliseAllowPath(entry: string): string | { problem: string } {
  const path = entry.replace(/^"(.*)"$/, "$1").trim();
  if (path === "") return { problem: "an empty path" };
  if (path.slice(0, -1).includes("*")) return { problem: `"${path}": * is only allowed at the end` };
  return path.startsWith("/") ? path : `/${path}`;
}

function ttlMs(flags: AuthFlagReader, name: string, p: string[]): number {
  const ms = flags.num(name);
  if (ms < 0 || ms > MAX_CACHE_TTL_MS) p.push(`--${name}: ${ms} ms is out of range (use 0s to 24h)`);
  return ms;
}

function allowPaths(flags: AuthFlagReader, p: string[]): string[] {
  const out: string[] = [];
  for (const entry of flags.list("authorization-always-allow-paths")) {
    const path = normaliseAllowPath(entry);
    if (typeof path === "string") out.push(path);
    else p.push(`--authorization-always-allow-paths: ${path.problem} (use e.g. /healthz,/readyz,/livez)`);
  }
  return out;
}

/** Reads the delegated authentication and authorisation flags, pushing one line per problem to `p`. */
export function delegatedAuth(flags: AuthFlagReader, p: string[]): DelegatedAuthConfig {
  const file = (name: string) => flags.str(name) || null;
  return {
    authenticationKubeconfig: file("authentication-kubeconfig"),
    authorizationKubeconfig: file("authorization-kubeconfig"),
    alwaysAllowPaths: allowPaths(flags, p),
    tokenCacheTtlMs: ttlMs(flags, "authentication-token-webhook-cache-ttl", p),
    allowCacheTtlMs: ttlMs(flags, "authorization-webhook-cache-authorized-ttl", p),
    denyCacheTtlMs: ttlMs(flags, "authorization-webhook-cache-unauthorized-ttl", p),
  };
}
