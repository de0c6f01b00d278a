/**
 * The secure port's delegated authentication and authorisation, built from `config.serve.auth`: the review
 * kubeconfigs (`--authentication-kubeconfig`, `--authorization-kubeconfig`, each defaulting to the CCM's own
 * kubeconfig, in-cluster or `--kubeconfig`, like upstream's in-cluster fallback) and the cached reviewer.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import type { Clock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import type { Config } from "../config/config.ts";
import { makeReviewApis } from "../kube/clients.ts";
import { loadKubeConfig } from "../kube/config.ts";
import type { PermissionObserver } from "../kube/requests.ts";
import { kubeAccessReviewer, kubeTokenReviewer } from "../kube/reviews.ts";
import { DelegatedAuth } from "../server/auth.ts";
import type { Registry } from "../common/metrics.ts";

/** The kubeconfigs the reviews use: the flag's file, or the CCM's own `kc`. Loading may throw `KubeConfigError`. */
export function reviewKubeConfigs(config: Config, kc: KubeConfig): { authn: KubeConfig; authz: KubeConfig } {
  const a = config.serve.auth;
  // Nothing is served with --secure-port=0: a review kubeconfig is then not even loaded.
  if (config.serve.securePort === null) return { authn: kc, authz: kc };
  return {
    authn: a.authenticationKubeconfig ? loadKubeConfig({ kubeconfig: a.authenticationKubeconfig }) : kc,
    authz: a.authorizationKubeconfig ? loadKubeConfig({ kubeconfig: a.authorizationKubeconfig }) : kc,
  };
}

/** The secure port's authoriser over the review kubeconfigs `kcs`. */
export function delegatedAuth(
  config: Config,
  kcs: { authn: KubeConfig; authz: KubeConfig },
  deps: { clock: Clock; metrics: Registry; userAgent: string; permissions?: PermissionObserver },
): DelegatedAuth {
  const apis = makeReviewApis(kcs, deps);
  return new DelegatedAuth(
    {
      tokens: kubeTokenReviewer(apis),
      access: kubeAccessReviewer(apis),
      clock: deps.clock,
      log: componentLogger("serve-auth"),
      metrics: deps.metrics,
    },
    config.serve.auth,
  );
}
