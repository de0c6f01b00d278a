/** A read-only index of cached Linodes by id, label and every IP (public, private, IPv6, VPC IPv4). */
import type { LinodeInstance, VpcIp } from "./types.ts";

/** Strips a prefix length (`2600:3c00::1/128` → `2600:3c00::1`). */
export function stripPrefix(ip: string): string {
  const slash = ip.indexOf("/");
  return slash < 0 ? ip : ip.slice(0, slash);
}

/** A VPC IPv6 (SLAAC) address, and whether its interface is publicly routed. */
export interface VpcIpv6Address {
  readonly address: string;
  readonly isPublic: boolean;
}

/** A Linode's addresses in the configured VPCs (not its routed ranges). */
export interface VpcAddresses {
  readonly ipv4: readonly string[];
  readonly ipv6: readonly VpcIpv6Address[];
}

/** No VPC address. */
export const NO_VPC_ADDRESSES: VpcAddresses = Object.freeze({ ipv4: [], ipv6: [] });

/**
 * The VPC addresses (IPv4, and IPv6 SLAAC) of each Linode, in list order. With `subnetIds` (from
 * `--subnet-names`/`--subnet-ids`) only addresses in those subnets count, as the Go CCM's subnet filter.
 */
export function vpcAddressesByLinode(
  ips: readonly VpcIp[],
  subnetIds?: ReadonlySet<number>,
): Map<number, { ipv4: string[]; ipv6: VpcIpv6Address[] }> {
  const out = new Map<number, { ipv4: string[]; ipv6: VpcIpv6Address[] }>();
  for (const ip of ips) {
    if (ip.linode_id === null || ip.address_range || (subnetIds && !subnetIds.has(ip.subnet_id))) continue;
    const entry = out.get(ip.linode_id) ?? { ipv4: [], ipv6: [] };
    if (ip.address && !entry.ipv4.includes(ip.address)) entry.ipv4.push(ip.address);
    for (const { slaac_address: address } of ip.ipv6_addresses ?? []) {
      if (address && !entry.ipv6.some((a) => a.address === address)) {
        entry.ipv6.push({ address, isPublic: ip.ipv6_is_public === true });
      }
    }
    if (entry.ipv4.length + entry.ipv6.length > 0) out.set(ip.linode_id, entry);
  }
  return out;
}

/** Who counts as a cluster member (the Go CCM's rules); `undefined` parts do not filter. */
export interface Membership {
  /** `--linode-tag-filter`: a tag containing this text, as the Go CCM's `+contains` X-Filter. */
  readonly tagFilter?: string;
  /** With `--vpc-names`/`--vpc-ids`: the Linodes holding an address in the configured VPCs (and subnets). */
  readonly vpcMembers?: ReadonlySet<number>;
}

/** True when `tags` has one containing `filter` (the Linode API's `+contains` on a list field). */
export function hasTagContaining(tags: readonly string[], filter: string): boolean {
  return tags.some((t) => t.includes(filter));
}

/**
 * The Linodes that count as this cluster's, in any region, as the Go CCM's instance cache: a tag containing
 * the tag filter and, with VPCs configured, an address in one of them. Pure.
 */
export function clusterMembers(instances: readonly LinodeInstance[], rules: Membership): LinodeInstance[] {
  const { tagFilter, vpcMembers } = rules;
  return instances.filter((i) =>
    (!tagFilter || hasTagContaining(i.tags, tagFilter)) && (!vpcMembers || vpcMembers.has(i.id))
  );
}

/** Lookups over one generation of cached instances. Build once per change, read many times. */
export class InstanceIndex {
  readonly #byId = new Map<number, LinodeInstance>();
  readonly #byLabel = new Map<string, LinodeInstance | null>();
  readonly #byIp = new Map<string, LinodeInstance | null>();
  readonly #vpc: ReadonlyMap<number, VpcAddresses>;

  constructor(
    instances: readonly LinodeInstance[],
    vpc: ReadonlyMap<number, VpcAddresses> = new Map(),
  ) {
    this.#vpc = vpc;
    for (const i of instances) {
      this.#byId.set(i.id, i);
      // A label or IP shared by two Linodes identifies neither: null marks it ambiguous.
      this.#byLabel.set(i.label, this.#byLabel.has(i.label) ? null : i);
      const own = vpc.get(i.id) ?? NO_VPC_ADDRESSES;
      const ips = [
        ...i.ipv4,
        ...(i.ipv6 ? [stripPrefix(i.ipv6)] : []),
        ...own.ipv4,
        ...own.ipv6.map((a) => a.address),
      ];
      for (const ip of new Set(ips)) this.#byIp.set(ip, this.#byIp.has(ip) ? null : i);
    }
  }

  /** Number of instances. */
  get size(): number {
    return this.#byId.size;
  }

  /** The Linode with this id. */
  byId(id: number): LinodeInstance | undefined {
    return this.#byId.get(id);
  }

  /** The one Linode with this label (undefined when none or several). */
  byLabel(label: string): LinodeInstance | undefined {
    return this.#byLabel.get(label) ?? undefined;
  }

  /** The one Linode holding this address (undefined when none or several, e.g. the same VPC IP in two VPCs). */
  byIp(ip: string): LinodeInstance | undefined {
    return this.#byIp.get(stripPrefix(ip)) ?? undefined;
  }

  /** The VPC IPv4 addresses of a Linode in the configured VPCs. */
  vpcIpv4(id: number): readonly string[] {
    return this.vpcAddresses(id).ipv4;
  }

  /** The VPC addresses (IPv4 and IPv6) of a Linode in the configured VPCs (and subnets). */
  vpcAddresses(id: number): VpcAddresses {
    return this.#vpc.get(id) ?? NO_VPC_ADDRESSES;
  }
}
