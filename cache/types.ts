/**
 * The Linode objects the cache holds, as the subset of the API's wire shape that the CCM reads.
 * `linode/client.ts` returns the full objects; they satisfy these structurally.
 */
import type { Firewall, NodeBalancer, NodeBalancerConfig, NodeBalancerConfigNode } from "@linode/api-v4";

/** A Linode instance (`GET /linode/instances`). */
export interface LinodeInstance {
  readonly id: number;
  readonly label: string;
  readonly region: string;
  readonly type: string | null;
  readonly status: string;
  readonly ipv4: readonly string[];
  readonly ipv6: string | null;
  readonly tags: readonly string[];
  readonly host_uuid?: string;
  /** `legacy_config` (interfaces on configuration profiles) or `linode` (interfaces on the Linode). */
  readonly interface_generation?: string;
}

/** A subnet of a VPC. */
export interface VpcSubnet {
  readonly id: number;
  readonly label: string;
  readonly ipv4?: string | null;
}

/** A VPC with its subnets (`GET /vpcs`). */
export interface Vpc {
  readonly id: number;
  readonly label: string;
  readonly region: string;
  readonly subnets: readonly VpcSubnet[];
}

/** One address or routed range of a VPC interface (`GET /vpcs/{id}/ips`). */
export interface VpcIp {
  readonly address: string | null;
  readonly address_range: string | null;
  readonly linode_id: number | null;
  readonly vpc_id: number;
  readonly subnet_id: number;
  readonly config_id?: number | null;
  readonly interface_id?: number | null;
  readonly active?: boolean;
  readonly nat_1_1?: string | null;
  /** VPC IPv6 (SLAAC) addresses: set on `GET /vpcs/{id}/ipv6s` entries. */
  readonly ipv6_addresses?: readonly { readonly slaac_address: string }[];
  /** Whether the interface's VPC IPv6 is publicly routed (an ExternalIP, as the Go CCM reports it). */
  readonly ipv6_is_public?: boolean | null;
}

/** What a reader gets: the data, how old it is, and whether it may be trusted for destructive decisions. */
export interface Snapshot<T> {
  readonly data: T;
  /** Milliseconds since the data was last loaded successfully (or written through). */
  readonly ageMs: number;
  /** The last refresh failed (or was suspicious): `data` is the last good copy. */
  readonly stale: boolean;
  /** The last refresh returned an empty list after a non-empty one; not proof of absence. */
  readonly suspicious: boolean;
  /** Increases on every change of `data`. */
  readonly generation: number;
}

/** A NodeBalancer (`GET /nodebalancers`), the fields the service controller reads from the listing. */
export interface NodeBalancerSummary {
  readonly id: number;
  readonly label: string | null;
  readonly region: string;
  readonly hostname: string | null;
  readonly ipv4: string;
  readonly ipv6: string | null;
  readonly tags: readonly string[];
  /** Connections per second per client IP (0: off). */
  readonly client_conn_throttle?: number;
  /** When the NodeBalancer itself last changed (RFC 3339), as listed. */
  readonly updated?: string;
  /** `common`, `premium`, `premium_40gb`. */
  readonly type?: NodeBalancer["type"];
  /** `public`, or `vpc` for a NodeBalancer whose frontend address is in a VPC subnet. */
  readonly frontend_address_type?: NodeBalancer["frontend_address_type"];
  readonly frontend_vpc_subnet_id?: number | null;
}

/** A backend node of a NodeBalancer config (`GET /nodebalancers/{id}/configs/{id}/nodes`). */
export type NodeBalancerNodeState = Readonly<NodeBalancerConfigNode>;

/** A NodeBalancer config (one port) with its backend nodes, as the detail cache holds it. */
export type NodeBalancerConfigState = Readonly<Omit<NodeBalancerConfig, "nodes">> & {
  readonly nodes: readonly NodeBalancerNodeState[];
};

/** A Cloud Firewall attached to a NodeBalancer (`GET /nodebalancers/{id}/firewalls`), rules included. */
export type FirewallState = Readonly<Firewall>;
