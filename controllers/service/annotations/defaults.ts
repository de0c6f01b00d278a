/** The CCM-wide settings that Service annotations override, taken from the validated `Config`. */
import type { Config, ServiceConfig, VpcConfig } from "../../../config/types.ts";

/** What `parseServiceAnnotations` and `planNodeBalancer` need from the CCM's flags and environment. */
export interface ServiceDefaults {
  readonly clusterName: string;
  /** `LINODE_REGION`. */
  readonly region: string;
  /** `LINODE_HOSTNAME_ONLY_INGRESS`. */
  readonly hostnameOnlyIngress: boolean;
  readonly services: Pick<
    ServiceConfig,
    | "defaultNodeBalancerType"
    | "nodeBalancerTags"
    | "nodeBalancerPrefix"
    | "backendIpv4Subnet"
    | "backendIpv4SubnetId"
    | "backendIpv4SubnetName"
    | "disableVpcBackends"
    | "enableIpv6ForLoadBalancers"
    | "enableIpv6ForNodeBalancerBackends"
  >;
  readonly vpc: Pick<VpcConfig, "names" | "ids" | "subnetNames" | "subnetIds">;
}

/** The defaults of a running CCM. */
export function serviceDefaults(config: Config): ServiceDefaults {
  return {
    clusterName: config.clusterName,
    region: config.linode.region,
    hostnameOnlyIngress: config.linode.hostnameOnlyIngress,
    services: config.services,
    vpc: config.vpc,
  };
}
