/** Interface objects of both generations, and how each appears as a member of its VPC subnet. */
import type {
  SimInterface,
  SimLinode,
  SimLinodeInterface,
  SimPublicInterfaceData,
} from "./instance_shape.ts";
import { isPrivateIpv4 } from "./ip.ts";
import type { VpcMember, VpcMemberIpv6 } from "./vpc_member.ts";
import type { SimVpcIpv6 } from "./vpc_ipv6.ts";

const NONE: readonly string[] = [];

/** A locally administered MAC address derived from the interface id, in the API's upper-case form. */
export function macOf(id: number): string {
  const bytes = [0x22, 0x00, (id >>> 24) & 255, (id >>> 16) & 255, (id >>> 8) & 255, id & 255];
  return bytes.map((b) => b.toString(16).padStart(2, "0").toUpperCase()).join(":");
}

/** The Linode's public IPv4 addresses (what `nat_1_1` "any"/"auto" and public interfaces draw from). */
export function publicIpv4s(linode: SimLinode): string[] {
  return linode.ipv4.filter((ip) => !isPrivateIpv4(ip));
}

/** A public config profile interface, with the keys the API sends as null on one. */
export function publicConfigInterface(id: number, active: boolean): SimInterface {
  return {
    id,
    purpose: "public",
    primary: true,
    active,
    ipam_address: null,
    label: null,
    vpc_id: null,
    subnet_id: null,
    ipv4: null,
    ip_ranges: null,
    ipv6: null,
  };
}

/** A VPC config profile interface with its address. */
export function vpcConfigInterface(
  id: number,
  active: boolean,
  at: { vpcId: number; subnetId: number; address: string },
): SimInterface {
  return {
    id,
    purpose: "vpc",
    primary: false,
    active,
    ipam_address: null,
    label: null,
    vpc_id: at.vpcId,
    subnet_id: at.subnetId,
    ipv4: { vpc: at.address, nat_1_1: null },
    ip_ranges: [],
    ipv6: null,
  };
}

/** A Linode interface with one of `public`, `vpc`, `vlan` set; version 1. */
export function newLinodeInterface(
  id: number,
  now: string,
  part:
    & Pick<SimLinodeInterface, "default_route">
    & Partial<Pick<SimLinodeInterface, "public" | "vpc" | "vlan">>,
): SimLinodeInterface {
  return {
    id,
    mac_address: macOf(id),
    created: now,
    updated: now,
    version: 1,
    default_route: part.default_route,
    public: part.public ?? null,
    vpc: part.vpc ?? null,
    vlan: part.vlan ?? null,
  };
}

/** The `public` part holding the given addresses (the first is primary) and the Linode's SLAAC. */
export function publicData(addresses: readonly string[], slaac: string | null): SimPublicInterfaceData {
  return {
    ipv4: { addresses: addresses.map((address, i) => ({ address, primary: i === 0 })), shared: [] },
    ipv6: {
      ranges: [],
      shared: [],
      slaac: slaac === null ? [] : [{ address: slaac.replace(/\/\d+$/, ""), prefix: 64 }],
    },
  };
}

/** The member's IPv6 as the listings need it, read from the interface's `ipv6` object. */
function memberIpv6(ipv6: SimVpcIpv6 | null | undefined): VpcMemberIpv6 | undefined {
  const slaac = ipv6?.slaac[0];
  return ipv6 && slaac ? { range: slaac.range, address: slaac.address, isPublic: ipv6.is_public } : undefined;
}

/** A config profile VPC interface as a subnet member; `active` is kept on the interface itself. */
export function configMember(linode: SimLinode, configId: number, iface: SimInterface): VpcMember {
  return {
    linodeId: linode.id,
    configId,
    interfaceId: iface.id,
    region: linode.region,
    state: () => ({
      active: iface.active,
      addresses: iface.ipv4?.vpc ? [{ address: iface.ipv4.vpc, nat_1_1: iface.ipv4.nat_1_1 ?? null }] : [],
      ranges: iface.ip_ranges ?? [],
      ipv6: memberIpv6(iface.ipv6),
    }),
    ranges: () => iface.ip_ranges ?? NONE,
  };
}

/** A Linode VPC interface as a subnet member: in use while the Linode runs; `config_id` null. */
export function linodeMember(linode: SimLinode, iface: SimLinodeInterface): VpcMember {
  return {
    linodeId: linode.id,
    configId: null,
    interfaceId: iface.id,
    region: linode.region,
    state: () => ({
      active: linode.status === "running",
      addresses: (iface.vpc?.ipv4.addresses ?? []).map((a) => ({
        address: a.address,
        nat_1_1: a.nat_1_1_address,
      })),
      ranges: (iface.vpc?.ipv4.ranges ?? []).map((r) => r.range),
      ipv6: memberIpv6(iface.vpc?.ipv6),
    }),
    ranges: () => iface.vpc?.ipv4.ranges.length ? iface.vpc.ipv4.ranges.map((r) => r.range) : NONE,
  };
}
