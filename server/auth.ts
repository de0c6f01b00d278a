/**
 * Delegated authentication and authorisation of the secure port, as upstream cloud controller managers do it
 * (k8s.io/apiserver `DelegatingAuthenticationOptions` / `DelegatingAuthorizationOptions`):
 *
 * - a path of `--authorization-always-allow-paths` (default `/healthz,/readyz,/livez`) is served to anyone;
 * - otherwise the request needs `Authorization: Bearer <token>` (none: 401), which a TokenReview must
 *   authenticate (not: 401);
 * - members of `system:masters` are allowed, as upstream's always-allow groups; everyone else needs a
 *   SubjectAccessReview that allows the non-resource `path` with the lower-cased method as verb (`get`);
 *   denied: 403;
 * - answers are cached (`--authentication-token-webhook-cache-ttl`, `--authorization-webhook-cache-*-ttl`,
 *   10 s each by default), by a SHA-256 of the token, never the token itself;
 * - a review that fails (apiserver down, 5xx, timeout) is never an allow: 401 when the token could not be
 *   reviewed (upstream's authenticator does the same), 500 when the access could not be, and neither is cached.
 *
 * Unlike upstream there is no anonymous user: a request without a token gets 401, not a SubjectAccessReview
 * for `system:anonymous`. Client certificates (`--client-ca-file`) and front-proxy headers are not accepted.
 */
import type { Clock } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Counter, Registry } from "../common/metrics.ts";
import { TtlMap } from "./ttl_map.ts";

/** Who a token belongs to, as a TokenReview answers. */
export interface UserInfo {
  readonly username: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

/** The non-resource attributes of one request, as a SubjectAccessReview takes them. */
export interface RequestAttributes {
  readonly path: string;
  readonly verb: string;
}

/** Reviews a bearer token: the user, or `null` when the token authenticates nobody; throws when it cannot tell. */
export interface TokenReviewer {
  review(token: string): Promise<UserInfo | null>;
}

/** Reviews an access: whether `user` may do `request`; throws when it cannot tell. */
export interface AccessReviewer {
  allowed(user: UserInfo, request: RequestAttributes): Promise<boolean>;
}

/** Decides whether the secure port serves a request: `null` to serve it, or the refusal to send. */
export interface RequestAuthorizer {
  authorize(request: Request): Promise<Response | null>;
}

/** Options of `DelegatedAuth` (from `config.serve.auth`). */
export interface DelegatedAuthOptions {
  readonly alwaysAllowPaths: readonly string[];
  readonly tokenCacheTtlMs: number;
  readonly allowCacheTtlMs: number;
  readonly denyCacheTtlMs: number;
  /** Groups allowed without a SubjectAccessReview (upstream CCMs: `system:masters`). */
  readonly alwaysAllowGroups?: readonly string[];
}

/** What `DelegatedAuth` uses. */
export interface DelegatedAuthDeps {
  tokens: TokenReviewer;
  access: AccessReviewer;
  clock: Pick<Clock, "monotonic">;
  log: Logger;
  /** Counts decisions in `ccm_secure_port_requests_total{decision}` when given. */
  metrics?: Registry;
}

/** How a request was decided, the `decision` label of `ccm_secure_port_requests_total`. */
export type AuthDecision = "always_allowed" | "allowed" | "unauthorized" | "forbidden" | "review_failed";

/** Upstream's always-allowed group of a cloud controller manager. */
export const DEFAULT_ALWAYS_ALLOW_GROUPS: readonly string[] = Object.freeze(["system:masters"]);

const JSON_HEADERS = { "content-type": "application/json", "x-content-type-options": "nosniff" };

/** A `Status` body like the apiserver's, so clients print the same messages. */
function status(code: number, reason: string, message: string): Response {
  const body = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
  return new Response(`${JSON.stringify(body)}\n`, { status: code, headers: JSON_HEADERS });
}

/** True when `path` is one of `patterns` (exact, or by prefix for a pattern ending in `*`). */
export function isAlwaysAllowed(path: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => p.endsWith("*") ? path.startsWith(p.slice(0, -1)) : path === p);
}

/** The bearer token of `Authorization`, or undefined (none, another scheme, or empty). */
export function bearerToken(request: Request): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
  return m?.[1];
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The secure port's authenticator and authoriser: TokenReview, then SubjectAccessReview, both cached. */
export class DelegatedAuth implements RequestAuthorizer {
  readonly #deps: DelegatedAuthDeps;
  readonly #options: DelegatedAuthOptions;
  readonly #groups: ReadonlySet<string>;
  readonly #users: TtlMap<UserInfo | null>;
  readonly #decisions: TtlMap<boolean>;
  readonly #counter: Counter | undefined;

  constructor(deps: DelegatedAuthDeps, options: DelegatedAuthOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#groups = new Set(options.alwaysAllowGroups ?? DEFAULT_ALWAYS_ALLOW_GROUPS);
    this.#users = new TtlMap(deps.clock);
    this.#decisions = new TtlMap(deps.clock);
    this.#counter = deps.metrics?.counter(
      "ccm_secure_port_requests_total",
      "Requests to the secure port by authentication and authorisation decision",
      ["decision"],
    );
  }

  async authorize(request: Request): Promise<Response | null> {
    const { decision, response } = await this.#decide(request);
    this.#counter?.inc({ decision });
    return response;
  }

  async #decide(request: Request): Promise<{ decision: AuthDecision; response: Response | null }> {
    const path = new URL(request.url).pathname;
    if (isAlwaysAllowed(path, this.#options.alwaysAllowPaths)) {
      return { decision: "always_allowed", response: null };
    }
    const unauthorized = {
      decision: "unauthorized",
      response: status(401, "Unauthorized", "Unauthorized"),
    } as const;
    const token = bearerToken(request);
    if (token === undefined) return unauthorized;
    const user = await this.#authenticate(token);
    if (user === "failed") return { ...unauthorized, decision: "review_failed" };
    if (user === undefined) return unauthorized;
    const attributes = { path, verb: request.method.toLowerCase() };
    if (user.groups.some((g) => this.#groups.has(g))) return { decision: "allowed", response: null };
    const allowed = await this.#authorizeUser(user, attributes);
    if (allowed === undefined) {
      const message = `Internal Server Error: "${path}": authorization check failed`;
      return { decision: "review_failed", response: status(500, "InternalError", message) };
    }
    if (allowed) return { decision: "allowed", response: null };
    return { decision: "forbidden", response: this.#forbidden(user, attributes) };
  }

  #forbidden(user: UserInfo, attributes: RequestAttributes): Response {
    const { verb, path } = attributes;
    return status(
      403,
      "Forbidden",
      `forbidden: User "${user.username}" cannot ${verb} path "${path}"`,
    );
  }

  /** The token's user; undefined when it authenticates nobody, "failed" when it could not be reviewed. */
  async #authenticate(token: string): Promise<UserInfo | undefined | "failed"> {
    const key = await sha256(token);
    const cached = this.#users.get(key);
    if (cached !== undefined) return cached ?? undefined;
    let user: UserInfo | null;
    try {
      user = await this.#deps.tokens.review(token);
    } catch (e) {
      this.#deps.log.warning("cannot review a bearer token of the secure port: {error}", {
        error: errorText(e),
      });
      return "failed";
    }
    this.#users.set(key, user, this.#options.tokenCacheTtlMs);
    return user ?? undefined;
  }

  /** Whether the review allows it; undefined when it could not be reviewed. */
  async #authorizeUser(user: UserInfo, attributes: RequestAttributes): Promise<boolean | undefined> {
    const key = JSON.stringify([user.username, user.uid, [...user.groups].sort(), user.extra, attributes]);
    const cached = this.#decisions.get(key);
    if (cached !== undefined) return cached;
    let allowed: boolean;
    try {
      allowed = await this.#deps.access.allowed(user, attributes);
    } catch (e) {
      this.#deps.log.warning("cannot review access of {user} to {path}: {error}", {
        user: user.username,
        path: attributes.path,
        error: errorText(e),
      });
      return undefined;
    }
    const o = this.#options;
    this.#decisions.set(key, allowed, allowed ? o.allowCacheTtlMs : o.denyCacheTtlMs);
    return allowed;
  }
}
