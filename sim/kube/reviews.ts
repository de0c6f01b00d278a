/**
 * TokenReview (authentication.k8s.io/v1) and SubjectAccessReview (authorization.k8s.io/v1): create-only
 * resources that store nothing and answer with the review's `status` (HTTP 201, as the apiserver).
 *
 * TokenReview knows the emulator's own token and the ones a test adds with `identities.add`; an unknown token
 * is `authenticated: false` with an error, never a failure status. SubjectAccessReview evaluates the stored
 * RBAC objects (`rbac_eval.ts`). Validation follows upstream `pkg/apis/authorization/validation` and the
 * TokenReview REST storage (`token is required`).
 */
import { isRecord, type ResourceDef } from "./resources.ts";
import type { ResourceRoute } from "./routing.ts";
import { evaluateRbac, type RbacRequest } from "./rbac_eval.ts";
import { badRequest, fieldError, invalid, type StatusCause, StatusError } from "./status.ts";
import type { KubeStore } from "./store.ts";

/** Who a token authenticates as. */
export interface SimUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
}

/** The audience of the emulator's tokens, the default of a kubeadm apiserver (`--api-audiences`). */
export const SIM_AUDIENCE = "https://kubernetes.default.svc.cluster.local";

/**
 * The tokens TokenReview knows. API requests need the emulator's own token, unless it enforces RBAC: then every
 * token here authenticates, and what its user may do is what the stored RBAC objects grant.
 */
export class SimIdentities {
  readonly #byToken = new Map<string, SimUser>();

  /** Makes `token` authenticate as `user`. */
  add(token: string, user: SimUser): void {
    this.#byToken.set(token, user);
  }

  /**
   * A new token of the ServiceAccount `namespace/name`, authenticating as the apiserver's service-account
   * authenticator does: user `system:serviceaccount:<namespace>:<name>`, groups `system:serviceaccounts` and
   * `system:serviceaccounts:<namespace>`.
   */
  addServiceAccount(namespace: string, name: string): string {
    const token = `sa-${namespace}-${name}-${crypto.randomUUID()}`;
    this.add(token, {
      username: `system:serviceaccount:${namespace}:${name}`,
      uid: crypto.randomUUID(),
      groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`],
    });
    return token;
  }

  /** Forgets `token` (a revoked or expired token). */
  remove(token: string): void {
    this.#byToken.delete(token);
  }

  /** The user of `token`, or undefined. */
  lookup(token: string): SimUser | undefined {
    return this.#byToken.get(token);
  }
}

/** The review resources' store keys. */
export const REVIEW_RESOURCES: ReadonlySet<string> = new Set([
  "authentication.k8s.io/tokenreviews",
  "authorization.k8s.io/subjectaccessreviews",
]);

function specOf(body: unknown, kind: string): Record<string, unknown> {
  if (!isRecord(body)) throw badRequest("the body of the request could not be decoded");
  if (body.kind !== undefined && body.kind !== kind) {
    throw badRequest(`the kind "${String(body.kind)}" of the body does not match ${kind}`);
  }
  return isRecord(body.spec) ? body.spec : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** The TokenReview answer for `body`. */
export function reviewToken(identities: SimIdentities, body: unknown): Record<string, unknown> {
  const spec = specOf(body, "TokenReview");
  const token = typeof spec.token === "string" ? spec.token : "";
  if (token === "") throw badRequest("token is required for TokenReview in authentication.k8s.io");
  const user = identities.lookup(token);
  const audiences = strings(spec.audiences);
  // A token is good for the apiserver's audience only; a review that asks for others does not authenticate it.
  const audienceOk = audiences.length === 0 || audiences.includes(SIM_AUDIENCE);
  const status = user && audienceOk
    ? {
      authenticated: true,
      user: {
        username: user.username,
        uid: user.uid ?? "",
        groups: [...new Set([...(user.groups ?? []), "system:authenticated"])],
      },
      audiences: [SIM_AUDIENCE],
    }
    : { authenticated: false, user: {}, error: user ? "token audiences is invalid" : "invalid bearer token" };
  return { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", metadata: {}, spec, status };
}

function accessRequest(spec: Record<string, unknown>, causes: StatusCause[]): RbacRequest | undefined {
  const nonResource = isRecord(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  const resource = isRecord(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  if ((nonResource === undefined) === (resource === undefined)) {
    const message = "exactly one of nonResourceAttributes or resourceAttributes must be specified";
    causes.push(fieldError("spec.resourceAttributes", "Invalid", message, null));
    return undefined;
  }
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  if (nonResource) {
    return { kind: "nonResource", path: text(nonResource.path), verb: text(nonResource.verb) };
  }
  const r = resource ?? {};
  return {
    kind: "resource",
    verb: text(r.verb),
    group: text(r.group),
    resource: text(r.resource),
    subresource: text(r.subresource),
    namespace: text(r.namespace),
    name: text(r.name),
  };
}

/** The SubjectAccessReview answer for `body`; 422 for a spec the apiserver refuses. */
export function reviewAccess(store: KubeStore, body: unknown, def: ResourceDef): Record<string, unknown> {
  const spec = specOf(body, "SubjectAccessReview");
  const causes: StatusCause[] = [];
  const user = typeof spec.user === "string" ? spec.user : "";
  const groups = strings(spec.groups);
  const request = accessRequest(spec, causes);
  if (user === "" && groups.length === 0) {
    causes.push(fieldError("spec.user", "Invalid", "at least one of user or group must be specified", ""));
  }
  if (!request || causes.length) {
    throw invalid(def, "", causes);
  }
  const decision = evaluateRbac(store, { user, groups }, request);
  // A denial's reason is left out when empty (`omitempty`), as upstream's.
  const status = decision.allowed || decision.reason
    ? { allowed: decision.allowed, reason: decision.reason }
    : { allowed: false };
  return { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", metadata: {}, spec, status };
}

/** Serves a request to a review resource: POST to the collection only. */
export function handleReview(
  ctx: { store: KubeStore; identities: SimIdentities },
  method: string,
  route: ResourceRoute,
  body: unknown,
): Record<string, unknown> {
  if (method !== "POST" || route.name !== undefined) {
    throw new StatusError(
      405,
      "MethodNotAllowed",
      "the server does not allow this method on the requested resource",
    );
  }
  return route.def.key === "authentication.k8s.io/tokenreviews"
    ? reviewToken(ctx.identities, body)
    : reviewAccess(ctx.store, body, route.def);
}
