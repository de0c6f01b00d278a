/**
 * Linode interfaces (`interface_generation: "linode"`): interfaces attached to the Linode itself rather than
 * to a configuration profile. The route controller replaces the routed `vpc.ipv4.ranges` of a VPC one.
 */
import { getLinodeInterface, getLinodeInterfaces } from "@linode/api-v4";
import type { LinodeInterface } from "@linode/api-v4";
import { type ApiCaller, type CallOptions, callSpec as spec } from "./caller.ts";
import { rawRequest } from "./transport.ts";

/** The body of a routed-range update: only `vpc.ipv4.ranges`, so addresses and every other field are kept. */
export interface VpcRangesUpdate {
  vpc: { ipv4: { ranges: { range: string }[] } };
}

/** `/linode/instances/{id}/interfaces` and below. */
export class LinodeInterfaceApi {
  readonly #caller: ApiCaller;

  constructor(caller: ApiCaller) {
    this.#caller = caller;
  }

  /** Every Linode interface of one Linode (the API answers `{interfaces: [...]}`, not a page). */
  async list(linodeId: number, options?: CallOptions): Promise<LinodeInterface[]> {
    const route = "/linode/instances/{id}/interfaces";
    const s = spec("GET", route, `list interfaces of linode ${linodeId}`, options);
    const body = await this.#caller.run(s, () => getLinodeInterfaces(linodeId));
    return body.interfaces;
  }

  /** One Linode interface. */
  get(linodeId: number, interfaceId: number, options?: CallOptions): Promise<LinodeInterface> {
    const route = "/linode/instances/{id}/interfaces/{id}";
    const s = spec("GET", route, `get interface ${interfaceId} of linode ${linodeId}`, options);
    return this.#caller.run(s, () => getLinodeInterface(linodeId, interfaceId));
  }

  /**
   * Replaces the routed IPv4 ranges of a VPC interface (the whole list; `[]` removes the last one).
   * Sent without api-v4's schema, which demands `vpc.subnet_id` in every update although the API keeps
   * the subnet when it is left out (the Go CCM sends the same body). A PUT, so retried.
   */
  updateVpcRanges(
    linodeId: number,
    interfaceId: number,
    ranges: readonly string[],
    options?: CallOptions,
  ): Promise<LinodeInterface> {
    const route = "/linode/instances/{id}/interfaces/{id}";
    const s = spec("PUT", route, `update vpc ranges on linode ${linodeId}`, options);
    const body: VpcRangesUpdate = { vpc: { ipv4: { ranges: ranges.map((range) => ({ range })) } } };
    const path = `/linode/instances/${linodeId}/interfaces/${interfaceId}`;
    return this.#caller.run(s, () => rawRequest<LinodeInterface>("PUT", path, { data: body }));
  }
}
