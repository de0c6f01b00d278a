/** The `/ips` view of an instance, with the VPC addresses of either interface generation. */
import type { IPAddress } from "@linode/api-v4";
import { isPrivateIpv4 } from "./ip.ts";
import type { InstanceRecord } from "./store_instances.ts";
import type { VpcStore } from "./store_vpcs.ts";
import type { VpcIpEntry } from "./vpc_ips.ts";

/** `GET /linode/instances/{id}/ips` body. */
export interface LinodeIpsBody {
  ipv4: {
    public: IPAddress[];
    private: IPAddress[];
    shared: IPAddress[];
    reserved: IPAddress[];
    vpc: VpcIpEntry[];
  };
  ipv6?: { slaac: IPAddress; link_local: IPAddress; global: unknown[]; vpc: unknown[] };
}

/** The VPC address an address is 1:1 NATed to, on an interface of either generation. */
function natTarget(rec: InstanceRecord, ip: string): IPAddress["vpc_nat_1_1"] {
  const legacy = rec.config.interfaces.find((i) => i.purpose === "vpc" && i.ipv4?.nat_1_1 === ip);
  if (legacy?.ipv4?.vpc) {
    return { address: legacy.ipv4.vpc, subnet_id: legacy.subnet_id ?? 0, vpc_id: legacy.vpc_id ?? 0 };
  }
  for (const iface of rec.interfaces) {
    const hit = iface.vpc?.ipv4.addresses.find((a) => a.nat_1_1_address === ip);
    if (iface.vpc && hit) {
      return { address: hit.address, subnet_id: iface.vpc.subnet_id, vpc_id: iface.vpc.vpc_id };
    }
  }
  return null;
}

function address(rec: InstanceRecord, ip: string, isPublic: boolean): IPAddress {
  const [a, b, c] = ip.split(".");
  // On a Linode interface, an address names the interface that holds it.
  const holder = rec.interfaces.find((i) => i.public?.ipv4.addresses.some((x) => x.address === ip));
  return {
    address: ip,
    gateway: isPublic ? `${a}.${b}.${c}.1` : null,
    subnet_mask: isPublic ? "255.255.255.0" : "255.255.128.0",
    prefix: isPublic ? 24 : 17,
    type: "ipv4",
    public: isPublic,
    rdns: isPublic ? `${ip.replaceAll(".", "-")}.ip.linodeusercontent.com` : null,
    linode_id: rec.linode.id,
    region: rec.linode.region,
    interface_id: holder?.id ?? null,
    vpc_nat_1_1: natTarget(rec, ip),
  };
}

function ipv6Address(rec: InstanceRecord, ip: string, isPublic: boolean): IPAddress {
  return {
    address: ip,
    gateway: "fe80::1",
    subnet_mask: "ffff:ffff:ffff:ffff::",
    prefix: 64,
    type: "ipv6",
    public: isPublic,
    rdns: null,
    linode_id: rec.linode.id,
    region: rec.linode.region,
    interface_id: null,
  };
}

/** Builds the `/ips` view: public and private IPv4, VPC addresses and ranges, SLAAC and link-local. */
export function linodeIps(rec: InstanceRecord, vpcs: VpcStore): LinodeIpsBody {
  const v4 = rec.linode.ipv4;
  const legacy = rec.config.interfaces
    .filter((i) => i.purpose === "vpc" && i.subnet_id)
    .flatMap((i) => vpcs.ipsOfInterface(i.subnet_id ?? 0, i.id));
  const vpc = [
    ...legacy,
    ...rec.interfaces.flatMap((i) => i.vpc ? vpcs.ipsOfInterface(i.vpc.subnet_id, i.id) : []),
  ];
  const vpcIpv6 = [
    ...rec.config.interfaces.filter((i) => i.purpose === "vpc" && i.subnet_id)
      .flatMap((i) => vpcs.ipv6sOfInterface(i.subnet_id ?? 0, i.id)),
    ...rec.interfaces.flatMap((i) => i.vpc ? vpcs.ipv6sOfInterface(i.vpc.subnet_id, i.id) : []),
  ];
  const body: LinodeIpsBody = {
    ipv4: {
      public: v4.filter((ip) => !isPrivateIpv4(ip)).map((ip) => address(rec, ip, true)),
      private: v4.filter((ip) => isPrivateIpv4(ip)).map((ip) => address(rec, ip, false)),
      shared: [],
      reserved: [],
      vpc,
    },
  };
  if (rec.slaac !== null) {
    const slaac = rec.slaac.replace(/\/\d+$/, "");
    const linkLocal = `fe80::${slaac.split("::")[1] ?? "1"}`;
    body.ipv6 = {
      slaac: ipv6Address(rec, slaac, true),
      link_local: ipv6Address(rec, linkLocal, false),
      global: [],
      vpc: vpcIpv6,
    };
  }
  return body;
}
