/**
 * The apiservers of the kubeconfig files, checked against the net permission once the files are loaded (the
 * servers the flags and environment name are checked while parsing, `config/net_allowed.ts`).
 */
import type { KubeConfig } from "@kubernetes/client-node";
import type { Config } from "../config/config.ts";
import { checkNet, kubeConfigTarget, type NetCheck, refusedServers } from "../config/net_allowed.ts";
import { KubeConfigError } from "../kube/config.ts";

function fileTargets(setting: string, kc: KubeConfig) {
  return kubeConfigTarget(setting, kc.getCurrentCluster()?.server ?? "");
}

/**
 * Throws `KubeConfigError` (exit 2) naming each kubeconfig whose server this process may not connect to:
 * `--kubeconfig`/`KUBECONFIG` (unless `--master` overrides its server) and the review kubeconfigs.
 */
export function assertKubeServersAllowed(
  config: Config,
  kcs: { main: KubeConfig; authn: KubeConfig; authz: KubeConfig },
  check: NetCheck = checkNet,
): void {
  const k = config.kube;
  const a = config.serve.auth;
  const targets = [
    ...(k.kind === "kubeconfig" && !k.master
      ? fileTargets(`${k.from === "flag" ? "--kubeconfig" : "KUBECONFIG"} ${k.kubeconfig}`, kcs.main)
      : []),
    ...(a.authenticationKubeconfig && kcs.authn !== kcs.main
      ? fileTargets(`--authentication-kubeconfig ${a.authenticationKubeconfig}`, kcs.authn)
      : []),
    ...(a.authorizationKubeconfig && kcs.authz !== kcs.main
      ? fileTargets(`--authorization-kubeconfig ${a.authorizationKubeconfig}`, kcs.authz)
      : []),
  ];
  const problems = refusedServers(targets, check);
  if (problems.length) throw new KubeConfigError(problems.join("\n"));
}
