/**
 * The IPv6 range of each Linode's VPC interface, as node IPAM carves IPv6 pod CIDRs from it (the Go CCM's cloud
 * allocator): read once per Linode, from its configuration profiles (`legacy_config`) or its Linode
 * interfaces (`linode`), then kept for as long as the Linode has a Node. A VPC interface's IPv6 range cannot
 * change without the interface being replaced, which needs the Linode shut down and its Node re-registered.
 */
import type { Registry } from "../common/metrics.ts";

/** The IPv6 part of a VPC interface, of either generation (api-v4's `IPv6Interface`). */
export interface VpcIpv6Part {
  readonly slaac?: readonly { readonly range?: string }[];
  readonly ranges?: readonly { readonly range: string }[];
}

/** A configuration profile's interface, the fields read here. */
export interface ConfigInterfaceIpv6 {
  readonly purpose: string;
  readonly ipv6?: VpcIpv6Part | null;
}

/** Where the ranges are read: `linode/` implements it. */
export interface InterfaceIpv6Source {
  listConfigs(
    linodeId: number,
  ): Promise<readonly { readonly interfaces: readonly ConfigInterfaceIpv6[] | null }[]>;
  listInterfaces(
    linodeId: number,
  ): Promise<readonly { readonly vpc: { readonly ipv6?: VpcIpv6Part } | null }[]>;
}

/** How a Linode's interfaces are defined (`interface_generation`). */
export type InterfaceGeneration = "legacy_config" | "linode";

/** The first range of a VPC interface's IPv6: its SLAAC range, else its first routed range (as the Go CCM). */
export function ipv6RangeOf(part: VpcIpv6Part | null | undefined): string | undefined {
  return part?.slaac?.find((s) => s.range)?.range ?? part?.ranges?.[0]?.range;
}

/** Per-Linode IPv6 ranges of VPC interfaces, each read once. */
export class VpcIpv6Cache {
  readonly #source: InterfaceIpv6Source;
  readonly #ranges = new Map<number, string>();
  readonly #reads;

  constructor(source: InterfaceIpv6Source, options: { metrics: Registry }) {
    this.#source = source;
    this.#reads = options.metrics.counter(
      "ccm_cache_misses_total",
      "Cache reads that needed a refresh",
      ["cache"],
    );
  }

  /**
   * The IPv6 range of the Linode's VPC interface (the first VPC interface of its first configuration
   * profile, or its first VPC Linode interface with one); undefined when it has none. Errors propagate.
   */
  async rangeOf(linodeId: number, generation: InterfaceGeneration): Promise<string | undefined> {
    const known = this.#ranges.get(linodeId);
    if (known !== undefined) return known;
    this.#reads.inc({ cache: "vpc_ipv6" });
    const range = generation === "linode"
      ? (await this.#source.listInterfaces(linodeId)).map((i) => ipv6RangeOf(i.vpc?.ipv6)).find((r) => r)
      : ((await this.#source.listConfigs(linodeId))[0]?.interfaces ?? [])
        .filter((i) => i.purpose === "vpc").map((i) => ipv6RangeOf(i.ipv6)).find((r) => r);
    // Not remembered when missing: a range added later is found by the next read.
    if (range !== undefined) this.#ranges.set(linodeId, range);
    return range;
  }

  /** Forgets a Linode (its Node was deleted). */
  forget(linodeId: number): void {
    this.#ranges.delete(linodeId);
  }
}
