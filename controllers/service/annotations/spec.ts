/**
 * The typed result of reading a Service's annotations (`parseServiceAnnotations`): what the Service asks
 * for, with every default applied. Types only.
 */
import type { Algorithm, NodeBalancerProxyProtocol, Protocol, Stickiness } from "@linode/api-v4";
import type { AnnotationWarning, LenientValue } from "./values.ts";

/** A NodeBalancer plan type. */
export type NodeBalancerType = "common" | "premium" | "premium_40gb";

/** A NodeBalancer field an existing NodeBalancer keeps because the annotation governing it was read leniently. */
export type KeptNodeBalancerField = "client_conn_throttle" | "type" | "tags";

/** A config field an existing config keeps because the annotation governing it was read leniently. */
export type KeptConfigField = "protocol" | "check_path";

/** A NodeBalancer health check type. */
export type CheckType = "none" | "connection" | "http" | "http_body";

/** The protocol family a config's port is unique in (the API allows tcp 53 and udp 53 side by side). */
export type PortFamily = "tcp" | "udp";

/** The health check of one port. */
export interface HealthCheckSpec {
  readonly type: CheckType;
  /** Set for `http` and `http_body`. */
  readonly path: string | null;
  /** Set for `http_body`. */
  readonly body: string | null;
  readonly intervalSec: number;
  readonly timeoutSec: number;
  readonly attempts: number;
  /** Always false for udp (the API refuses passive checks there). */
  readonly passive: boolean;
  /** True when `check-path` was read leniently: an existing config keeps its path. */
  readonly keepPath: boolean;
}

/** One Service port as a NodeBalancer config, defaults applied (port JSON → default-* → built-in). */
export interface PortSpec {
  readonly port: number;
  readonly family: PortFamily;
  readonly protocol: Protocol;
  readonly proxyProtocol: NodeBalancerProxyProtocol;
  readonly algorithm: Algorithm;
  /** `null` for tcp, which has no stickiness setting in the Go CCM. */
  readonly stickiness: Stickiness | null;
  /** The `kubernetes.io/tls` Secret in the Service's namespace; set exactly for https. */
  readonly tlsSecretName: string | null;
  /** Set for udp only. */
  readonly udpCheckPort: number | null;
  readonly check: HealthCheckSpec;
  /** Fields an existing config keeps (a value read leniently). */
  readonly keep: readonly KeptConfigField[];
}

/** Where a VPC subnet comes from: an ID, or labels the caller resolves (`GET /vpcs`, subnets). */
export type SubnetSelector =
  | { readonly kind: "id"; readonly subnetId: number }
  | { readonly kind: "names"; readonly vpcName: string; readonly subnetName: string };

/** The backend VPC of a new NodeBalancer (`vpcs` on create), as the Go CCM chooses it. */
export interface BackendVpcSpec {
  readonly subnet: SubnetSelector;
  readonly ipv4Range: string | null;
  /** Set with `--nodebalancer-backend-ipv4-subnet`: the API picks a range inside it. */
  readonly ipv4RangeAutoAssign: boolean;
}

/** The frontend VPC of a new NodeBalancer. */
export interface FrontendVpcSpec {
  readonly subnet: SubnetSelector;
  readonly ipv4Range: string | null;
  readonly ipv6Range: string | null;
}

/** IPv4 and IPv6 CIDRs of a firewall ACL list. */
export interface AclAddresses {
  readonly ipv4: readonly string[];
  readonly ipv6: readonly string[];
}

/** The Cloud Firewall the Service asks for. */
export type FirewallSpec =
  | { readonly kind: "none" }
  | { readonly kind: "id"; readonly firewallId: number }
  | { readonly kind: "acl"; readonly list: "allowList" | "denyList"; readonly addresses: AclAddresses };

/** Everything a Service's annotations (and the CCM-wide defaults) ask for. Frozen. */
export interface ServiceSpec {
  readonly throttle: number;
  readonly nodeBalancerType: NodeBalancerType;
  /** `nodebalancer-id`: use this NodeBalancer. */
  readonly nodeBalancerId: number | null;
  readonly preserve: boolean;
  readonly reservedIpv4: string | null;
  readonly retainReservedIpv4: boolean;
  readonly hostnameOnlyIngress: boolean;
  readonly ipv6Ingress: boolean;
  readonly ipv6Backends: boolean;
  /**
   * True when `enable-ipv6-backends` was read leniently: an existing NodeBalancer keeps its backends' address
   * family (the caller plans again with `CurrentNodeBalancerShape` once it has read it).
   */
  readonly keepsBackendFamily: boolean;
  /** The `tags` annotation only (the planner adds cluster, flag and ownership tags). */
  readonly tags: readonly string[];
  readonly firewall: FirewallSpec;
  /** `null` when backends are not VPC addresses (no VPC configured, disabled, or IPv6 backends). */
  readonly backendVpc: BackendVpcSpec | null;
  readonly frontendVpc: FrontendVpcSpec | null;
  /** The Service's TCP and UDP ports, in Service order. */
  readonly ports: readonly PortSpec[];
  /** Fields an existing NodeBalancer keeps (a value read leniently). */
  readonly keep: readonly KeptNodeBalancerField[];
  readonly warnings: readonly AnnotationWarning[];
  /** Values read leniently, as the Go CCM reads them: a Warning Event, and `lint` errors. */
  readonly lenient: readonly LenientValue[];
}
