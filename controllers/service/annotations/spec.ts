/**
 * What a Service asks for, typed: the result of reading its annotations (`parseServiceAnnotations`), with
 * every default applied; the CCM-wide settings those annotations override (`ServiceDefaults`, from the
 * validated `Config`); and the errors of bad input on a Service: an annotation whose value is not accepted, a
 * Service the planner cannot turn into a NodeBalancer, and the two gathered for one Warning. All are bad user
 * input (`InvalidInputError`): retrying cannot help until the Service, its Secret or the Nodes change, and
 * their messages are fit for a Warning Event as they are.
 */
import type { Algorithm, NodeBalancerProxyProtocol, Protocol, Stickiness } from "@linode/api-v4";
import type { Config, ServiceConfig, VpcConfig } from "../../../config/types.ts";
import { InvalidInputError } from "../../loop/runtime.ts";

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
    | "nodeBalancerIdAdoptsAny"
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

/** Something worth telling the user that does not stop the Service from being served. */
export interface AnnotationWarning {
  readonly key: string;
  readonly message: string;
}

/**
 * A value the Go CCM reads without complaint (as a default, clamped, or ignored) but which is not what its
 * docs accept: the Service goes on syncing with `used`, a Warning Event says so, and `lint` reports an error.
 */
export interface LenientValue {
  /** The full annotation name. */
  readonly key: string;
  /** The value as written on the Service. */
  readonly value: string;
  /** What is accepted, as in an `InvalidAnnotationError`. */
  readonly accepted: string;
  /** What applies instead, in words: `20 (the Go CCM clamps to 0–20); an existing NodeBalancer keeps its own`. */
  readonly used: string;
  /** `<key>="<value>": expected <accepted>; used <used>`. */
  readonly message: string;
  /** Dropped for what it would claim (reserved tags), where the Go CCM takes it as it is. */
  readonly reserved?: boolean;
}

/** Longest annotation value quoted in a message; the full value stays on `value`. */
const MAX_QUOTED_CHARS = 120;

function quote(value: string): string {
  const short = value.length > MAX_QUOTED_CHARS ? `${value.slice(0, MAX_QUOTED_CHARS)}…` : value;
  return JSON.stringify(short);
}

/** One annotation whose value is not accepted, with the text of what is. */
export class InvalidAnnotationError extends InvalidInputError {
  override name = "InvalidAnnotationError";
  /** The full annotation name, e.g. `service.beta.kubernetes.io/linode-loadbalancer-throttle`. */
  readonly key: string;
  /** The value as written on the Service. */
  readonly value: string;
  /** What is accepted, as a person reads it: `whole seconds from 2 to 3600`. */
  readonly accepted: string;

  constructor(key: string, value: string, accepted: string) {
    super(`Invalid annotation ${key}=${quote(value)}: expected ${accepted}`);
    this.key = key;
    this.value = value;
    this.accepted = accepted;
  }
}

/** Why a valid set of annotations still gives no NodeBalancer for this Service (yet). */
export type PlanProblem =
  | "UnsupportedServicePort"
  | "MissingNodePort"
  | "MissingTlsSecret"
  | "InvalidTlsSecret"
  | "NoEligibleNodes"
  | "UnresolvedSubnet"
  | "MissingUid";

/** A Service the planner cannot turn into a NodeBalancer: no annotation is at fault, or not only one. */
export class ServicePlanError extends InvalidInputError {
  override name = "ServicePlanError";
  /** A stable code for metrics and tests. */
  readonly problem: PlanProblem;

  constructor(problem: PlanProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

/** Bad input on a Service (annotations, Secret, ports, Nodes): a Warning, no retry until something changes. */
export class InvalidServiceError extends InvalidInputError {
  override name = "InvalidServiceError";
  constructor(readonly errors: readonly Error[]) {
    super(errors.map((e) => e.message).join("; "));
  }
}
