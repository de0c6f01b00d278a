/**
 * The seams between the service controller's I/O (this folder's controller, finder, applier) and its pure
 * parts (annotation parsing, planning, diffing). Types only: the controller depends on these shapes, and
 * the pure modules provide values of them.
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type {
  CreateNodeBalancerConfig,
  CreateNodeBalancerConfigNode,
  NodeBalancerVpcPayload,
} from "@linode/api-v4";
import type { NodeBalancerConfigState, NodeBalancerSummary } from "../../cache/types.ts";

/** One backend as the NodeBalancer should have it (`nodeIP:nodePort`). */
export type DesiredNode = CreateNodeBalancerConfigNode;

/** One config (one Service port) as the NodeBalancer should have it, nodes included. */
export type DesiredConfig = CreateNodeBalancerConfig & {
  port: number;
  nodes: DesiredNode[];
};

/** The NodeBalancer a Service should have. `label`, `ipv4` and `vpcs` matter only when creating one. */
export interface DesiredNodeBalancer {
  label: string;
  region: string;
  type?: string;
  tags: string[];
  client_conn_throttle: number;
  configs: DesiredConfig[];
  /** `reserved-ipv4`: the reserved address to create the NodeBalancer on. */
  ipv4?: string;
  /** Backend VPC subnets (`backend-*` annotations, `--vpc-names`). */
  vpcs?: NodeBalancerVpcPayload[];
}

/** Addresses of a `firewall-acl` list. */
export interface AclAddresses {
  ipv4?: string[];
  ipv6?: string[];
}

/** `firewall-acl`: exactly one of the lists. */
export interface FirewallAcl {
  allowList?: AclAddresses;
  denyList?: AclAddresses;
}

/** The settings the controller acts on besides the NodeBalancer's own shape. */
export interface ServiceLifecycleSpec {
  /** `preserve`: keep the NodeBalancer when the Service goes. */
  preserve: boolean;
  /** `nodebalancer-id`: use this NodeBalancer. */
  nodeBalancerId?: number;
  /** `retain-reserved-ipv4` (default true): keep a reserved IPv4 when deleting. */
  retainReservedIpv4: boolean;
}

/** Everything the annotations say, as the controller uses it. */
export interface ServiceLbSpec extends ServiceLifecycleSpec {
  /** `hostname-only-ingress` (or `LINODE_HOSTNAME_ONLY_INGRESS`). */
  hostnameOnlyIngress: boolean;
  /** `enable-ipv6-ingress` (or `--enable-ipv6-for-loadbalancers`). */
  ipv6Ingress: boolean;
  /** `firewall-id`: attach this Cloud Firewall (wins over `firewallAcl`). */
  firewallId?: number;
  /** `firewall-acl`: a CCM-managed Cloud Firewall with these rules. */
  firewallAcl?: FirewallAcl;
}

/** One bad input: which annotation (or Secret, or port), its value, and what is accepted. */
export interface InvalidInput {
  readonly key: string;
  readonly value: string;
  readonly accepted: string;
}

/** A certificate and key from a TLS Secret. Never logged, never put in an Event or error. */
export interface TlsMaterial {
  readonly cert: string;
  readonly key: string;
}

/** Reads `tls.crt`/`tls.key` of a Secret in the Service's namespace; undefined when missing. */
export type TlsLookup = (secretName: string) => TlsMaterial | undefined;

/** What planning a Service gives: what to build, or why not. */
export type PlanResult =
  | { readonly ok: true; readonly spec: ServiceLbSpec; readonly desired: DesiredNodeBalancer }
  | { readonly ok: false; readonly errors: readonly InvalidInput[] };

/** What the deletion path needs, readable even when other annotations are invalid. */
export type LifecycleResult =
  | { readonly ok: true; readonly spec: ServiceLifecycleSpec }
  | { readonly ok: false; readonly errors: readonly InvalidInput[] };

/** Turns a Service (annotations, ports), the cluster's Nodes and its TLS Secrets into a desired NodeBalancer. */
export interface ServicePlanner {
  plan(service: V1Service, nodes: readonly V1Node[], tls: TlsLookup): PlanResult;
  lifecycle(service: V1Service): LifecycleResult;
  /** The tag that marks a NodeBalancer (or firewall) as this Service's. */
  ownershipTag(service: V1Service): string;
}

/** A NodeBalancer as it is: the listing's fields plus configs with nodes. */
export interface CurrentNodeBalancer {
  readonly nb: NodeBalancerSummary;
  readonly configs: readonly NodeBalancerConfigState[];
}

/** A rebuild body: settings plus the whole node list, kept nodes by `id`. */
export type RebuildBody = CreateNodeBalancerConfig & { nodes: (DesiredNode & { id?: number })[] };

/** One write that brings a NodeBalancer closer to what is desired. */
export type NodeBalancerAction =
  | { readonly kind: "update"; readonly body: { tags?: string[]; client_conn_throttle?: number } }
  | { readonly kind: "createConfig"; readonly config: DesiredConfig }
  | { readonly kind: "updateConfig"; readonly configId: number; readonly body: CreateNodeBalancerConfig }
  | { readonly kind: "rebuildConfig"; readonly configId: number; readonly body: RebuildBody }
  | { readonly kind: "deleteConfig"; readonly configId: number }
  | { readonly kind: "createNode"; readonly configId: number; readonly body: DesiredNode }
  | {
    readonly kind: "updateNode";
    readonly configId: number;
    readonly nodeId: number;
    readonly body: Partial<DesiredNode>;
  }
  | { readonly kind: "deleteNode"; readonly configId: number; readonly nodeId: number };

/** A setting changed in place, for the one Normal Event that names it. */
export interface FieldChange {
  readonly field: string;
  readonly old: unknown;
  readonly new: unknown;
}

/** The writes that turn `current` into `desired`, and the settings they change. */
export interface NodeBalancerDiff {
  readonly actions: readonly NodeBalancerAction[];
  readonly changes: readonly FieldChange[];
}

/** Compares a NodeBalancer with what a Service wants. Pure. */
export type NodeBalancerDiffer = (
  current: CurrentNodeBalancer,
  desired: DesiredNodeBalancer,
) => NodeBalancerDiff;
