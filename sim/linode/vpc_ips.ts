/** The entries of `GET /vpcs/ips` and `GET /vpcs/{id}/ips`: one per VPC address and one per routed range. */
import type { VPCIP } from "@linode/api-v4";
import { type Cidr, formatIpv4, maskOf } from "./ip.ts";
import type { VpcMember, VpcMemberIpv6, VpcMemberState } from "./vpc_member.ts";

/**
 * One VPC IP entry as the API sends it (keys as recorded in linodego's `TestVPC_ListAllIPAddresses`
 * fixture, plus the IPv6 keys api-v4 types). `nat_1_1` and `config_id` are null where the API sends null:
 * without 1:1 NAT, and for Linode interfaces.
 */
export type VpcIpEntry = Omit<VPCIP, "nat_1_1" | "config_id" | "interface_id"> & {
  nat_1_1: string | null;
  config_id: number | null;
  /** Null for a NodeBalancer's entry (api-v4 types it as a number). */
  interface_id: number | null;
  database_id: null;
};

/** The fields of `GET /vpcs/{id}/ips` marked Filterable in the API's OpenAPI spec. */
export const VPC_IP_FILTER_FIELDS: ReadonlySet<string> = new Set([
  "active",
  "config_id",
  "linode_id",
  "region",
  "vpc_id",
  // Not marked Filterable, but the Go CCM filters this listing on `subnet_id` in production
  // (cloud/linode/services/vpc.go), so the API accepts it.
  "subnet_id",
]);

type Subnet = { id: number; vpcId: number; cidr: Cidr };

function entryBase(subnet: Subnet, m: VpcMember, state: VpcMemberState) {
  return {
    active: state.active,
    config_id: m.configId,
    interface_id: m.interfaceId,
    linode_id: m.linodeId,
    nodebalancer_id: null,
    database_id: null,
    region: m.region,
    subnet_id: subnet.id,
    subnet_mask: formatIpv4(maskOf(subnet.cidr.prefix)),
    vpc_id: subnet.vpcId,
    ipv6_addresses: [] as VpcIpEntry["ipv6_addresses"],
    ipv6_is_public: null,
    ipv6_range: null,
  };
}

/** Entries for one member of a subnet: its addresses first, then its routed ranges. */
export function memberEntries(subnet: Subnet, m: VpcMember): VpcIpEntry[] {
  const state = m.state();
  const base = entryBase(subnet, m, state);
  const addresses = state.addresses.map((a): VpcIpEntry => ({
    ...base,
    address: a.address,
    address_range: null,
    gateway: formatIpv4(subnet.cidr.base + 1),
    nat_1_1: a.nat_1_1,
    prefix: subnet.cidr.prefix,
  }));
  // The docs leave a range entry's gateway and prefix open (both are nullable); the sim sends null.
  const ranges = state.ranges.map((range): VpcIpEntry => ({
    ...base,
    address: null,
    address_range: range,
    gateway: null,
    nat_1_1: null,
    prefix: null,
  }));
  return [...addresses, ...ranges];
}

/** The `GET /vpcs/{id}/ipv6s` entry of one member (none without a VPC IPv6 address). */
export function memberIpv6Entries(subnet: Subnet, m: VpcMember): VpcIpEntry[] {
  const state = m.state();
  return state.ipv6 ? [ipv6Entry(entryBase(subnet, m, state), state.ipv6)] : [];
}

/**
 * One `GET /vpcs/{id}/ipv6s` entry: IPv4 keys null (the reference example sends `address` and
 * `address_range` null), the SLAAC address under `ipv6_addresses`, the interface's /64 and `ipv6_is_public`.
 */
function ipv6Entry(base: ReturnType<typeof entryBase>, v6: VpcMemberIpv6): VpcIpEntry {
  return {
    ...base,
    address: null,
    address_range: null,
    gateway: null,
    nat_1_1: null,
    prefix: 64,
    ipv6_range: v6.range,
    ipv6_is_public: v6.isPublic,
    ipv6_addresses: [{ slaac_address: v6.address }],
  };
}

/**
 * The entry of a NodeBalancer's VPC range. The API lists NodeBalancers in these listings since Nov 2025
 * (changelog "View databases and NodeBalancers assigned to VPC subnets") and keeps `nodebalancer_id` in
 * every entry; the docs show no example, so the shape is inferred: the range as `address_range`,
 * `linode_id`, `config_id` and `interface_id` null.
 */
export function nodeBalancerEntry(
  subnet: { id: number; vpcId: number; region: string; cidr: Cidr },
  nb: { id: number; ipv4_range: string },
): VpcIpEntry {
  return {
    active: true,
    address: null,
    address_range: nb.ipv4_range,
    config_id: null,
    database_id: null,
    gateway: null,
    interface_id: null,
    ipv6_addresses: [],
    ipv6_is_public: null,
    ipv6_range: null,
    linode_id: null,
    nat_1_1: null,
    nodebalancer_id: nb.id,
    prefix: null,
    region: subnet.region,
    subnet_id: subnet.id,
    subnet_mask: formatIpv4(maskOf(subnet.cidr.prefix)),
    vpc_id: subnet.vpcId,
  };
}
