/**
 * The IPv6 range of a Node's Linode, through the caches: the instance cache says how its interfaces are
 * defined (no call when the Linode is cached), the VPC IPv6 cache reads them once per Linode.
 */
import type { InstanceIndex } from "../../cache/instance_index.ts";
import type { Snapshot } from "../../cache/types.ts";
import type { InterfaceGeneration } from "../../cache/vpc_ipv6.ts";
import type { Ipv6RangeLookup, SubnetRangeLookup } from "./reconcile.ts";
import type { Vpc } from "../../cache/types.ts";

/** The instance cache, as read here (`InstanceCache` implements it). */
export interface InstanceView {
  view(options?: { maxAgeMs?: number; vpcMaxAgeMs?: number }): Promise<Snapshot<InstanceIndex>>;
}

/** The per-Linode IPv6 ranges (`VpcIpv6Cache` implements it). */
export interface Ipv6Ranges {
  rangeOf(linodeId: number, generation: InterfaceGeneration): Promise<string | undefined>;
}

/** Looks up a Linode's generation in the cache (refreshing it once when missing), then its IPv6 range. */
export function cachedIpv6Lookup(instances: InstanceView, ranges: Ipv6Ranges): Ipv6RangeLookup {
  return {
    async rangeOf(linodeId) {
      const cached = await instances.view({ maxAgeMs: Infinity, vpcMaxAgeMs: Infinity });
      const instance = cached.data.byId(linodeId) ?? (await instances.view()).data.byId(linodeId);
      if (!instance) throw new Error(`Cannot find linode ${linodeId} for its IPv6 range`);
      return await ranges.rangeOf(
        linodeId,
        instance.interface_generation === "linode" ? "linode" : "legacy_config",
      );
    },
  };
}

/** The VPC cache, as read here (`VpcCache` implements it). */
export interface VpcView {
  get(): Promise<Snapshot<readonly Vpc[]>>;
}

/**
 * The first `--subnet-names` subnet of the first `--vpc-names` VPC (as the Go CCM picks them), from the VPC
 * cache; undefined (no lookup) without both flags, as the Go CCM.
 */
export function cachedSubnetLookup(
  vpcs: VpcView,
  selection: { readonly names: readonly string[]; readonly subnetNames: readonly string[] },
): SubnetRangeLookup | undefined {
  const [vpcName] = selection.names;
  const [subnetName] = selection.subnetNames;
  if (vpcName === undefined || subnetName === undefined) return undefined;
  return {
    async firstSubnetIpv4() {
      const vpc = (await vpcs.get()).data.find((v) => v.label === vpcName);
      return vpc?.subnets.find((s) => s.label === subnetName)?.ipv4 ?? undefined;
    },
  };
}
