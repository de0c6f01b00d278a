/**
 * One Linode's VPC addresses and routed ranges from a targeted read of that Linode (its configuration
 * profiles, or its Linode interfaces), in the shape of the VPC IP listing's entries. A new Node's Linode is
 * newer than the last listing: one read of its own interfaces tells the route and node controllers what
 * they need, instead of a listing of every address in the VPC.
 */
import type { Config, IPv6Interface, LinodeInterface } from "@linode/api-v4";
import { LinodeApiError } from "../linode/errors.ts";
import type { VpcIp } from "./types.ts";

/** Targeted reads of one Linode's interfaces. `LinodeClient` implements it (`instances` and `interfaces`). */
export interface LinodeInterfaceSource {
  instances: { listConfigs(linodeId: number): Promise<readonly Config[]> };
  interfaces: { list(linodeId: number): Promise<readonly LinodeInterface[]> };
}

type EntryBase = Pick<VpcIp, "linode_id" | "vpc_id" | "subnet_id" | "config_id" | "interface_id" | "active">;

/**
 * The interface's VPC IPv6 (SLAAC) addresses as one entry shaped like a `GET /vpcs/{id}/ipv6s` one (IPv4 keys
 * null, the addresses under `ipv6_addresses`), so a Node read this way gets the same addresses as from the
 * listing. None without an address.
 */
function ipv6Entries(base: EntryBase, ipv6: Partial<IPv6Interface> | null | undefined): VpcIp[] {
  const addresses = (ipv6?.slaac ?? []).flatMap((s) => s.address ? [{ slaac_address: s.address }] : []);
  if (addresses.length === 0) return [];
  return [{
    ...base,
    address: null,
    address_range: null,
    nat_1_1: null,
    ipv6_addresses: addresses,
    ipv6_is_public: ipv6?.is_public ?? null,
  }];
}

/** The VPC entries of a Linode's configuration-profile interfaces in `vpcIds`. Pure. */
export function configVpcIps(linodeId: number, configs: readonly Config[], vpcIds: ReadonlySet<number>) {
  const out: VpcIp[] = [];
  for (const config of configs) {
    for (const i of config.interfaces ?? []) {
      if (i.purpose !== "vpc" || typeof i.vpc_id !== "number" || typeof i.subnet_id !== "number") continue;
      if (!vpcIds.has(i.vpc_id)) continue;
      const base = {
        linode_id: linodeId,
        vpc_id: i.vpc_id,
        subnet_id: i.subnet_id,
        config_id: config.id,
        interface_id: i.id,
        active: i.active,
      };
      out.push({
        ...base,
        address: i.ipv4?.vpc ?? null,
        address_range: null,
        nat_1_1: i.ipv4?.nat_1_1 ?? null,
      });
      for (const r of i.ip_ranges ?? []) {
        out.push({ ...base, address: null, address_range: r, nat_1_1: null });
      }
      out.push(...ipv6Entries(base, i.ipv6));
    }
  }
  return out;
}

/** The VPC entries of a Linode's Linode interfaces (`interface_generation: "linode"`) in `vpcIds`. Pure. */
export function linodeIfaceVpcIps(
  linodeId: number,
  interfaces: readonly LinodeInterface[],
  vpcIds: ReadonlySet<number>,
): VpcIp[] {
  const out: VpcIp[] = [];
  for (const i of interfaces) {
    const vpc = i.vpc;
    if (!vpc || !vpcIds.has(vpc.vpc_id)) continue;
    const base = {
      linode_id: linodeId,
      vpc_id: vpc.vpc_id,
      subnet_id: vpc.subnet_id,
      config_id: null,
      interface_id: i.id,
      active: true,
    };
    for (const a of vpc.ipv4?.addresses ?? []) {
      out.push({ ...base, address: a.address, address_range: null, nat_1_1: a.nat_1_1_address ?? null });
    }
    for (const r of vpc.ipv4?.ranges ?? []) {
      out.push({ ...base, address: null, address_range: r.range, nat_1_1: null });
    }
    out.push(...ipv6Entries(base, vpc.ipv6));
  }
  return out;
}

/** True for the API's refusal to list Linode interfaces of a Linode that uses configuration profiles. */
function isLegacyGeneration(error: unknown): boolean {
  return error instanceof LinodeApiError && error.status === 400;
}

/**
 * Reads one Linode's VPC entries in `vpcIds`: its configuration profiles (one call); only when no profile
 * has any interface, its Linode interfaces (a second call; a 400 there means a legacy Linode without
 * interfaces, so none). A 404 (the Linode is gone) rejects, as any other error does.
 */
export async function readLinodeVpcIps(
  source: LinodeInterfaceSource,
  linodeId: number,
  vpcIds: ReadonlySet<number>,
): Promise<VpcIp[]> {
  const configs = await source.instances.listConfigs(linodeId);
  if (configs.some((c) => (c.interfaces ?? []).length > 0)) return configVpcIps(linodeId, configs, vpcIds);
  try {
    return linodeIfaceVpcIps(linodeId, await source.interfaces.list(linodeId), vpcIds);
  } catch (error) {
    if (isLegacyGeneration(error)) return [];
    throw error;
  }
}
