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
 *   reviewed (upstream's authenticator does the same), 500 when the access could not be, and neither is cached;
 * - concurrent requests with one token share one TokenReview, and concurrent identical accesses one
 *   SubjectAccessReview (upstream's token cache coalesces the same way, with a singleflight group);
 * - TokenReviews of tokens not known to be good are bounded by a token bucket on the injected clock
 *   (`unknownTokenBurst`, `unknownTokenPerSecond`): a review spends a token and one that authenticates gives it
 *   back, so only unauthenticated and failed reviews use the budget; once it is spent, such a token gets 401
 *   without a review. A token that authenticated within `knownTokenTtlMs` is reviewed whatever the budget, so a
 *   flood of made-up tokens does not lock Prometheus out. Upstream has no such bound (the apiserver's priority
 *   and fairness throttles the reviews there).
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

/** What the authoriser reads of a request: the path of its request target, its method and `Authorization`. */
export interface SecureRequest {
  readonly path: string;
  readonly method: string;
  readonly authorization: string | undefined;
}

/** Decides whether the secure port serves a request: `null` to serve it, or the refusal to send. */
export interface RequestAuthorizer {
  authorize(request: SecureRequest): Promise<Response | null>;
}

/** Options of `DelegatedAuth` (from `config.serve.auth`). */
export interface DelegatedAuthOptions {
  readonly alwaysAllowPaths: readonly string[];
  readonly tokenCacheTtlMs: number;
  readonly allowCacheTtlMs: number;
  readonly denyCacheTtlMs: number;
  /** Groups allowed without a SubjectAccessReview (upstream CCMs: `system:masters`). */
  readonly alwaysAllowGroups?: readonly string[];
  /** TokenReviews of unknown tokens that may be spent at once (default `UNKNOWN_TOKEN_BUDGET.burst`). */
  readonly unknownTokenBurst?: number;
  /** The rate the budget refills at (default `UNKNOWN_TOKEN_BUDGET.perSecond`). */
  readonly unknownTokenPerSecond?: number;
  /** How long a token that authenticated bypasses the budget (default `UNKNOWN_TOKEN_BUDGET.knownTtlMs`). */
  readonly knownTokenTtlMs?: number;
}

/** The default bound on TokenReviews of unknown tokens: 10 at once, then one a second; known for 10 minutes. */
export const UNKNOWN_TOKEN_BUDGET = Object.freeze({ burst: 10, perSecond: 1, knownTtlMs: 600_000 });

/** What `DelegatedAuth` uses. */
export interface DelegatedAuthDeps {
  tokens: TokenReviewer;
  access: AccessReviewer;
  clock: Pick<Clock, "monotonic">;
  log: Logger;
  /** Counts decisions in `ccm_secure_port_requests_total{decision}` and reviews, when given. */
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

/** The bearer token of an `Authorization` value, or undefined (none, another scheme, or empty). */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  return m?.[1];
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A token bucket on the monotonic clock: `burst` at once, refilled at `perSecond`. */
class Budget {
  #tokens: number;
  #at: number;

  constructor(
    readonly burst: number,
    readonly perSecond: number,
    readonly clock: Pick<Clock, "monotonic">,
  ) {
    this.#tokens = burst;
    this.#at = clock.monotonic();
  }

  /** Spends one token; false when none is left. */
  take(): boolean {
    const now = this.clock.monotonic();
    this.#tokens = Math.min(this.burst, this.#tokens + (now - this.#at) / 1000 * this.perSecond);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Returns a token spent on something that turned out fine. */
  giveBack(): void {
    this.#tokens = Math.min(this.burst, this.#tokens + 1);
  }
}

/** A review's outcome: the user (or undefined: nobody), or "failed" when it could not be reviewed. */
type Authenticated = UserInfo | undefined | "failed";

/** The secure port's authenticator and authoriser: TokenReview, then SubjectAccessReview, both cached. */
export class DelegatedAuth implements RequestAuthorizer {
  readonly #deps: DelegatedAuthDeps;
  readonly #options: DelegatedAuthOptions;
  readonly #groups: ReadonlySet<string>;
  readonly #users: TtlMap<UserInfo | null>;
  readonly #decisions: TtlMap<boolean>;
  /** Hashes of tokens that authenticated lately: reviewed whatever the budget. */
  readonly #known: TtlMap<true>;
  readonly #budget: Budget;
  readonly #tokenReviews = new Map<string, Promise<Authenticated>>();
  readonly #accessReviews = new Map<string, Promise<boolean | undefined>>();
  readonly #counter: Counter | undefined;
  readonly #reviews: Counter | undefined;
  readonly #avoided: Counter | undefined;
  #limitLoggedAt = -Infinity;

  constructor(deps: DelegatedAuthDeps, options: DelegatedAuthOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#groups = new Set(options.alwaysAllowGroups ?? DEFAULT_ALWAYS_ALLOW_GROUPS);
    this.#users = new TtlMap(deps.clock);
    this.#decisions = new TtlMap(deps.clock);
    this.#known = new TtlMap(deps.clock);
    this.#budget = new Budget(
      options.unknownTokenBurst ?? UNKNOWN_TOKEN_BUDGET.burst,
      options.unknownTokenPerSecond ?? UNKNOWN_TOKEN_BUDGET.perSecond,
      deps.clock,
    );
    const m = deps.metrics;
    this.#counter = m?.counter(
      "ccm_secure_port_requests_total",
      "Requests to the secure port by authentication and authorisation decision",
      ["decision"],
    );
    this.#reviews = m?.counter(
      "ccm_secure_port_token_reviews_total",
      "TokenReviews sent for bearer tokens of the secure port, by result",
      ["result"],
    );
    this.#avoided = m?.counter(
      "ccm_secure_port_token_reviews_avoided_total",
      "Bearer tokens of the secure port answered without a TokenReview of their own: cached, coalesced with " +
        "one in flight, or limited (401 once the budget for unknown tokens is spent)",
      ["reason"],
    );
  }

  async authorize(request: SecureRequest): Promise<Response | null> {
    const { decision, response } = await this.#decide(request);
    this.#counter?.inc({ decision });
    return response;
  }

  async #decide(request: SecureRequest): Promise<{ decision: AuthDecision; response: Response | null }> {
    const path = request.path;
    if (isAlwaysAllowed(path, this.#options.alwaysAllowPaths)) {
      return { decision: "always_allowed", response: null };
    }
    const unauthorized = {
      decision: "unauthorized",
      response: status(401, "Unauthorized", "Unauthorized"),
    } as const;
    const token = bearerToken(request.authorization);
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

  /** The token's user from the cache, a review in flight, or a new review the budget allows. */
  async #authenticate(token: string): Promise<Authenticated> {
    const key = await sha256(token);
    const cached = this.#users.get(key);
    if (cached !== undefined) {
      this.#avoided?.inc({ reason: "cached" });
      return cached ?? undefined;
    }
    const inFlight = this.#tokenReviews.get(key);
    if (inFlight) {
      this.#avoided?.inc({ reason: "coalesced" });
      return await inFlight;
    }
    const known = this.#known.get(key) === true;
    if (!known && !this.#budget.take()) {
      this.#avoided?.inc({ reason: "limited" });
      this.#logLimited();
      return undefined;
    }
    const review = this.#reviewToken(token, key, known).finally(() => this.#tokenReviews.delete(key));
    this.#tokenReviews.set(key, review);
    return await review;
  }

  async #reviewToken(token: string, key: string, known: boolean): Promise<Authenticated> {
    let user: UserInfo | null;
    try {
      user = await this.#deps.tokens.review(token);
    } catch (e) {
      this.#reviews?.inc({ result: "failed" });
      this.#deps.log.warning("cannot review a bearer token of the secure port: {error}", {
        error: errorText(e),
      });
      return "failed";
    }
    this.#reviews?.inc({ result: user ? "authenticated" : "unauthenticated" });
    if (user) {
      if (!known) this.#budget.giveBack();
      this.#known.set(key, true, this.#options.knownTokenTtlMs ?? UNKNOWN_TOKEN_BUDGET.knownTtlMs);
    }
    this.#users.set(key, user, this.#options.tokenCacheTtlMs);
    return user ?? undefined;
  }

  /** A warning when unknown tokens start being refused unreviewed, then at most one a minute. */
  #logLimited(): void {
    const now = this.#deps.clock.monotonic();
    if (now - this.#limitLoggedAt < 60_000) return;
    this.#limitLoggedAt = now;
    this.#deps.log.warning(
      "secure port: too many bearer tokens that do not authenticate; answering 401 without a TokenReview " +
        "(counted in ccm_secure_port_token_reviews_avoided_total, reason limited)",
    );
  }

  /** Whether the review allows it; undefined when it could not be reviewed. Identical reviews in flight are one. */
  async #authorizeUser(user: UserInfo, attributes: RequestAttributes): Promise<boolean | undefined> {
    const key = JSON.stringify([user.username, user.uid, [...user.groups].sort(), user.extra, attributes]);
    const cached = this.#decisions.get(key);
    if (cached !== undefined) return cached;
    const inFlight = this.#accessReviews.get(key);
    if (inFlight) return await inFlight;
    const review = this.#reviewAccess(user, attributes, key).finally(() => this.#accessReviews.delete(key));
    this.#accessReviews.set(key, review);
    return await review;
  }

  async #reviewAccess(
    user: UserInfo,
    attributes: RequestAttributes,
    key: string,
  ): Promise<boolean | undefined> {
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
