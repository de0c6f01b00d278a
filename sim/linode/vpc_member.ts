/**
 * An interface as a VPC subnet holds it, of either generation. Its own file because both the subnet store
 * (`store_vpcs.ts`) and the VPC IP listing (`vpc_ips.ts`) read it, and the store uses the listing.
 */

/** One VPC address of an interface, with its 1:1 NAT address. */
export interface VpcAddress {
  address: string;
  nat_1_1: string | null;
}

/** What the IPv6 listing needs of an interface: its SLAAC range and address, and `is_public`. */
export interface VpcMemberIpv6 {
  range: string;
  address: string;
  isPublic: boolean;
}

/** What the VPC listings need of an interface, read live from the interface object that owns it. */
export interface VpcMemberState {
  active: boolean;
  addresses: readonly VpcAddress[];
  ranges: readonly string[];
  /** The interface's VPC IPv6 (SLAAC), when it has one. */
  ipv6?: VpcMemberIpv6;
}

/** An interface attached to a subnet: a config profile interface or a Linode interface. */
export interface VpcMember {
  linodeId: number;
  /** The config profile of a legacy interface; null for a Linode interface, as the API lists it. */
  configId: number | null;
  interfaceId: number;
  region: string;
  state(): VpcMemberState;
  /** The routed ranges alone: cheap, as every address allocation reads them. */
  ranges(): readonly string[];
}
