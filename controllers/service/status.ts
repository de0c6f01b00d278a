/** The `status.loadBalancer` a Service gets from its NodeBalancer, as the Go CCM reports it. */
import type { V1LoadBalancerIngress, V1Service } from "@kubernetes/client-node";
import type { NodeBalancerSummary } from "../../cache/types.ts";

/** Which addresses to report. */
export interface IngressOptions {
  /** Only the hostname (`hostname-only-ingress`, `LINODE_HOSTNAME_ONLY_INGRESS`). */
  hostnameOnlyIngress: boolean;
  /** IPv6 as a second entry (`enable-ipv6-ingress`, `--enable-ipv6-for-loadbalancers`). */
  ipv6Ingress: boolean;
}

/** The ingress list for `nb`: hostname only; IPv4 (and IPv6) each with the hostname. */
export function ingressFor(nb: NodeBalancerSummary, options: IngressOptions): V1LoadBalancerIngress[] {
  const hostname = nb.hostname ?? undefined;
  if (options.hostnameOnlyIngress && hostname) return [{ hostname }];
  const v4: V1LoadBalancerIngress = hostname ? { ip: nb.ipv4, hostname } : { ip: nb.ipv4 };
  if (options.ipv6Ingress && nb.ipv6) {
    const v6: V1LoadBalancerIngress = hostname ? { ip: nb.ipv6, hostname } : { ip: nb.ipv6 };
    return [v4, v6];
  }
  return [v4];
}

function comparable(ingress: readonly V1LoadBalancerIngress[]): string {
  return JSON.stringify(ingress.map((i) => [i.ip ?? "", i.hostname ?? ""]));
}

/** True when the Service already reports exactly these addresses (then no status write is made). */
export function hasIngress(svc: V1Service, ingress: readonly V1LoadBalancerIngress[]): boolean {
  return comparable(svc.status?.loadBalancer?.ingress ?? []) === comparable(ingress);
}
