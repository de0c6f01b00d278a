/**
 * TokenReview (authentication.k8s.io/v1) and SubjectAccessReview (authorization.k8s.io/v1) calls for the
 * secure port's delegated authentication and authorisation (`server/auth.ts` declares what it needs).
 */
import type { V1SubjectAccessReview, V1TokenReview } from "@kubernetes/client-node";
import type { AccessReviewer, RequestAttributes, TokenReviewer, UserInfo } from "../server/auth.ts";
import type { ReviewApis } from "./clients.ts";

function userOf(review: V1TokenReview): UserInfo | null {
  const status = review.status;
  if (status?.authenticated !== true || !status.user?.username) return null;
  return {
    username: status.user.username,
    uid: status.user.uid ?? "",
    groups: status.user.groups ?? [],
    extra: status.user.extra ?? {},
  };
}

/** Asks the apiserver who a bearer token belongs to; `null` when it authenticates nobody. Throws on failure. */
export function kubeTokenReviewer(apis: ReviewApis): TokenReviewer {
  return {
    async review(token: string): Promise<UserInfo | null> {
      const body: V1TokenReview = {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        // No audiences: the apiserver's own, as upstream's delegated authenticator sends by default.
        spec: { token },
      };
      return userOf(await apis.authentication.createTokenReview({ body }));
    },
  };
}

/** Asks the apiserver whether a user may `verb` a non-resource `path`. Throws on failure. */
export function kubeAccessReviewer(apis: ReviewApis): AccessReviewer {
  return {
    async allowed(user: UserInfo, request: RequestAttributes): Promise<boolean> {
      const body: V1SubjectAccessReview = {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: user.username,
          uid: user.uid || undefined,
          groups: [...user.groups],
          extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])),
          nonResourceAttributes: { path: request.path, verb: request.verb },
        },
      };
      const review = await apis.authorization.createSubjectAccessReview({ body });
      return review.status?.allowed === true && review.status.denied !== true;
    },
  };
}
