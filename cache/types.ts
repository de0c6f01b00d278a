/**
 * The Linode objects the cache holds, as the subset of the API's wire shape that the CCM reads.
 * `linode/client.ts` returns the full objects; they satisfy these structurally.
 */
import type { Firewall, NodeBalancer, NodeBalancerConfig, NodeBalancerConfigNode } from "@linode/api-v4";
import { share } from "../common/shared_strings.ts";

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

/**
 * The fields of `LinodeInstance` out of a full API object: the caches keep only these (a listed Linode has
 * ~30 more, alerts, backups and specs among them: most of the listing's memory at 5,000 Linodes).
 */
export function toLinodeInstance(i: LinodeInstance): LinodeInstance {
  return {
    id: i.id,
    label: i.label,
    // Small vocabularies, one shared copy per value (a listing gives each Linode its own).
    region: share(i.region),
    type: share(i.type),
    status: share(i.status),
    ipv4: i.ipv4,
    ipv6: i.ipv6,
    tags: i.tags,
    ...(i.host_uuid === undefined ? {} : { host_uuid: i.host_uuid }),
    ...(i.interface_generation === undefined ? {} : { interface_generation: share(i.interface_generation) }),
  };
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

/**
 * The fields of a listed VPC that are read: a subnet as listed also names every Linode in it with its
 * interfaces (5,000 entries in a 5,000-Node cluster's subnet), which nothing here reads.
 */
export function toVpc(v: Vpc): Vpc {
  return {
    id: v.id,
    label: v.label,
    region: v.region,
    subnets: v.subnets.map((s) => ({
      id: s.id,
      label: s.label,
      ...(s.ipv4 === undefined ? {} : { ipv4: s.ipv4 }),
    })),
  };
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

/** The fields of `VpcIp` out of a listed entry (which also has region, gateway, prefix, subnet_mask, ...). */
export function toVpcIp(ip: VpcIp): VpcIp {
  return {
    address: ip.address,
    address_range: ip.address_range,
    linode_id: ip.linode_id,
    vpc_id: ip.vpc_id,
    subnet_id: ip.subnet_id,
    ...(ip.config_id === undefined ? {} : { config_id: ip.config_id }),
    ...(ip.interface_id === undefined ? {} : { interface_id: ip.interface_id }),
    ...(ip.active === undefined ? {} : { active: ip.active }),
    ...(ip.nat_1_1 === undefined ? {} : { nat_1_1: ip.nat_1_1 }),
    ...(ip.ipv6_addresses === undefined ? {} : {
      ipv6_addresses: ip.ipv6_addresses.map((a) => ({ slaac_address: a.slaac_address })),
    }),
    ...(ip.ipv6_is_public === undefined ? {} : { ipv6_is_public: ip.ipv6_is_public }),
  };
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
