/** The Sentry settings: `SENTRY_DSN`, `SENTRY_ENVIRONMENT`, `SENTRY_RELEASE`, read as the Go CCM reads them. */
import type { Env } from "./env.ts";
import { type NetCheck, netDeniedReason, urlHostPort } from "./net_allowed.ts";
import { Secret } from "./secret.ts";

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === "" ? undefined : v;
}

/** Sentry reporting (`SENTRY_DSN`, `SENTRY_ENVIRONMENT`, `SENTRY_RELEASE`); the DSN prints as `***`. */
export interface SentryConfig {
  readonly dsn: Secret;
  readonly environment: string;
  readonly release: string;
}

/**
 * The Sentry settings, read as the Go CCM reads them: nothing without `SENTRY_DSN`; a DSN without
 * `SENTRY_ENVIRONMENT` (or one that is not a URL) only warns and reports nothing; `SENTRY_RELEASE` defaults
 * to `unknown`. A DSN whose host the net permission refuses (`checkNet`, asked at start like `LINODE_URL`) also
 * only warns: reports could never leave. Never a start failure: Sentry is optional, and a Go CCM manifest
 * that sets `SENTRY_DSN` must still start under the default net list. Warnings never print the DSN (it holds
 * a key), only its `host:port`.
 */
export function parseSentryEnv(env: Env, warnings: string[], checkNet?: NetCheck): SentryConfig | null {
  const dsn = value(env, "SENTRY_DSN");
  if (dsn === undefined) return null;
  const environment = value(env, "SENTRY_ENVIRONMENT");
  if (environment === undefined) {
    warnings.push("SENTRY_ENVIRONMENT: not set, so errors are not reported to Sentry (as the Go CCM)");
    return null;
  }
  let url: URL | undefined;
  try {
    url = new URL(dsn);
  } catch {
    url = undefined;
  }
  if (!url || !url.username || !/^https?:$/.test(url.protocol)) {
    warnings.push("SENTRY_DSN: not a Sentry DSN (https://KEY@HOST/PROJECT), so errors are not reported");
    return null;
  }
  const host = urlHostPort(`${url.protocol}//${url.host}`);
  if (checkNet && host && !checkNet(host)) {
    warnings.push(
      `SENTRY_DSN: cannot connect to ${host}: ${netDeniedReason()}; errors are not reported until then`,
    );
    return null;
  }
  return Object.freeze({
    dsn: new Secret(dsn),
    environment,
    release: value(env, "SENTRY_RELEASE") ?? "unknown",
  });
}
