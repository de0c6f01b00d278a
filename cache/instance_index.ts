/** A read-only index of cached Linodes by id, label and every IP (public, private, IPv6, VPC IPv4). */
import type { LinodeInstance, VpcIp } from "./types.ts";

/** Strips a prefix length (`2600:3c00::1/128` → `2600:3c00::1`). */
export function stripPrefix(ip: string): string {
  const slash = ip.indexOf("/");
  return slash < 0 ? ip : ip.slice(0, slash);
}

/** The VPC IPv4 addresses (not ranges) of each Linode, in list order. */
export function vpcIpv4ByLinode(ips: readonly VpcIp[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const ip of ips) {
    if (ip.linode_id === null || !ip.address || ip.address_range) continue;
    const list = out.get(ip.linode_id) ?? [];
    if (!list.includes(ip.address)) list.push(ip.address);
    out.set(ip.linode_id, list);
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
  readonly #vpcIpv4: ReadonlyMap<number, readonly string[]>;

  constructor(
    instances: readonly LinodeInstance[],
    vpcIpv4: ReadonlyMap<number, readonly string[]> = new Map(),
  ) {
    this.#vpcIpv4 = vpcIpv4;
    for (const i of instances) {
      this.#byId.set(i.id, i);
      // A label or IP shared by two Linodes identifies neither: null marks it ambiguous.
      this.#byLabel.set(i.label, this.#byLabel.has(i.label) ? null : i);
      const ips = [...i.ipv4, ...(i.ipv6 ? [stripPrefix(i.ipv6)] : []), ...(vpcIpv4.get(i.id) ?? [])];
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
    return this.#vpcIpv4.get(id) ?? [];
  }
}
