/** The `/ips` view of an instance and `PUT .../interfaces/{id}` (ip_ranges with overlap checks). */
import type { Interface, IPAddress } from "@linode/api-v4";
import { ApiError, type Body, fieldError, isRecord, optBool } from "./http.ts";
import { type Cidr, cidrsOverlap, isPrivateIpv4, parseCidr } from "./ip.ts";
import type { InstanceRecord, InstanceStore } from "./store_instances.ts";
import type { VpcIpEntry, VpcStore } from "./store_vpcs.ts";

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

function address(rec: InstanceRecord, ip: string, isPublic: boolean): IPAddress {
  const [a, b, c] = ip.split(".");
  const vpcIface = rec.config.interfaces?.find((i) => i.purpose === "vpc" && i.ipv4?.nat_1_1 === ip);
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
    interface_id: null,
    vpc_nat_1_1: vpcIface && vpcIface.ipv4?.vpc
      ? { address: vpcIface.ipv4.vpc, subnet_id: vpcIface.subnet_id ?? 0, vpc_id: vpcIface.vpc_id ?? 0 }
      : null,
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
  const vpc = (rec.config.interfaces ?? [])
    .filter((i) => i.purpose === "vpc" && i.subnet_id)
    .flatMap((i) => vpcs.ipsOfInterface(i.subnet_id ?? 0, i.id));
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
      vpc: [],
    };
  }
  return body;
}

function checkRanges(value: unknown, iface: Interface, vpcs: VpcStore): string[] {
  if (!Array.isArray(value)) throw fieldError("ip_ranges", "ip_ranges must be an array of CIDR strings");
  if (iface.purpose !== "vpc" || !iface.vpc_id) {
    throw fieldError("ip_ranges", "ip_ranges can only be set on VPC interfaces");
  }
  const vpcId = iface.vpc_id;
  const seen: { range: string; cidr: Cidr }[] = [];
  value.forEach((range, i) => {
    const cidr = typeof range === "string" ? parseCidr(range) : undefined;
    if (!cidr || typeof range !== "string") {
      throw fieldError(`ip_ranges[${i}]`, `${String(range)} is not a valid IPv4 CIDR range`);
    }
    const dup = seen.find((s) => cidrsOverlap(s.cidr, cidr));
    const hit = dup?.range ?? vpcs.rangeConflict(vpcId, iface.id, cidr);
    if (hit !== undefined) {
      throw fieldError(`ip_ranges[${i}]`, `Range ${range} overlaps with ${hit} already assigned in this VPC`);
    }
    seen.push({ range, cidr });
  });
  return seen.map((s) => s.range);
}

/** Applies `PUT /linode/instances/{id}/configs/{cid}/interfaces/{iid}`: `ip_ranges` and `primary`. */
export function updateInterface(
  instances: InstanceStore,
  vpcs: VpcStore,
  ids: { linodeId: number; configId: number; ifaceId: number },
  body: Body,
): Interface {
  const iface = instances.interface(ids.linodeId, ids.configId, ids.ifaceId);
  if (body.ipv4 !== undefined && !isRecord(body.ipv4)) throw fieldError("ipv4", "ipv4 must be an object");
  if (isRecord(body.ipv4) && body.ipv4.vpc !== undefined && body.ipv4.vpc !== iface.ipv4?.vpc) {
    throw new ApiError(400, [{ field: "ipv4.vpc", reason: "Changing the VPC address is not supported" }]);
  }
  const ranges = body.ip_ranges === undefined
    ? undefined
    : checkRanges(body.ip_ranges === null ? [] : body.ip_ranges, iface, vpcs);
  const primary = optBool(body, "primary");
  if (ranges !== undefined) iface.ip_ranges = ranges;
  if (primary === true) {
    for (const other of instances.require(ids.linodeId).config.interfaces ?? []) other.primary = false;
  }
  if (primary !== undefined) iface.primary = primary;
  instances.touch(ids.linodeId);
  return iface;
}
