/** Kubeconfig YAML for clients of the emulator. */
import * as yaml from "js-yaml";

/** What goes into the kubeconfig. */
export interface KubeconfigParts {
  server: string;
  token: string;
  /** CA PEM for HTTPS; absent for HTTP (then `insecure-skip-tls-verify`, which client-node requires). */
  caPem?: string;
}

/** Renders a single-context kubeconfig named `kube-sim`. */
export function kubeconfigYaml(parts: KubeconfigParts): string {
  const cluster: Record<string, unknown> = { server: parts.server };
  if (parts.caPem) cluster["certificate-authority-data"] = btoa(parts.caPem);
  else cluster["insecure-skip-tls-verify"] = true;
  return yaml.dump({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "kube-sim", cluster }],
    users: [{ name: "kube-sim", user: { token: parts.token } }],
    contexts: [{
      name: "kube-sim",
      context: { cluster: "kube-sim", user: "kube-sim", namespace: "default" },
    }],
    "current-context": "kube-sim",
    preferences: {},
  }, { lineWidth: -1 });
}
