/** VPC calls: VPCs with their subnets, and the addresses and routed ranges in them. */
import { type Filter, getVPC, getVPCIPs, getVPCs, getVPCsIPs } from "@linode/api-v4";
import type { ResourcePage, VPC, VPCIP } from "@linode/api-v4";
import { type ApiCaller, type CallOptions, callSpec as spec } from "./caller.ts";
import { rawRequest } from "./transport.ts";

/** `/vpcs` and below. */
export class VpcApi {
  readonly #caller: ApiCaller;

  constructor(caller: ApiCaller) {
    this.#caller = caller;
  }

  /** All VPCs matching `filter`. */
  list(filter?: Filter, options?: CallOptions): Promise<VPC[]> {
    return this.#caller.list(spec("GET", "/vpcs", "list vpcs", options), (p) => getVPCs(p, filter));
  }

  /** One VPC with its subnets. */
  get(vpcId: number, options?: CallOptions): Promise<VPC> {
    return this.#caller.run(spec("GET", "/vpcs/{id}", `get vpc ${vpcId}`, options), () => getVPC(vpcId));
  }

  /** Every address and routed range of one VPC. */
  listIps(vpcId: number, filter?: Filter, options?: CallOptions): Promise<VPCIP[]> {
    const s = spec("GET", "/vpcs/{id}/ips", `list ips of vpc ${vpcId}`, options);
    return this.#caller.list(s, (p) => getVPCIPs(vpcId, p, filter));
  }

  /**
   * Every VPC IPv6 (SLAAC) address of one VPC (`GET /vpcs/{id}/ipv6s`, which api-v4 does not wrap): one entry
   * per interface, the addresses under `ipv6_addresses`.
   */
  listIpv6s(vpcId: number, options?: CallOptions): Promise<VPCIP[]> {
    const s = spec("GET", "/vpcs/{id}/ipv6s", `list ipv6s of vpc ${vpcId}`, options);
    return this.#caller.list(
      s,
      (p) =>
        rawRequest<ResourcePage<VPCIP>>("GET", `/vpcs/${vpcId}/ipv6s`, {
          params: { page: p.page ?? 1, page_size: p.page_size ?? 100 },
        }),
    );
  }

  /** Every VPC address of the account. */
  listAllIps(filter?: Filter, options?: CallOptions): Promise<VPCIP[]> {
    return this.#caller.list(spec("GET", "/vpcs/ips", "list vpc ips", options), (p) => getVPCsIPs(p, filter));
  }
}
