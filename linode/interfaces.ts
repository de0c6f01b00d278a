/**
 * Linode interfaces (`interface_generation: "linode"`): interfaces attached to the Linode itself rather than
 * to a configuration profile. The route controller replaces the routed `vpc.ipv4.ranges` of a VPC one.
 */
import { getLinodeInterface, getLinodeInterfaces } from "@linode/api-v4";
import type { LinodeInterface } from "@linode/api-v4";
import { type ApiCaller, type CallOptions, callSpec as spec } from "./caller.ts";
import { rawRequest } from "./transport.ts";

/** The body of a routed-range update: `vpc.ipv4.ranges` only; the subnet and the rest are kept. */
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
   * Replaces the routed IPv4 ranges of a VPC interface (the whole list; `[]` removes the last one). The
   * body leaves out `vpc.subnet_id`: the API does not let an update change it, and linodego's update
   * options no longer carry it. Sent as is, without api-v4's body rewriting. A PUT, so retried.
   */
  updateVpcRanges(
    linodeId: number,
    interfaceId: number,
    update: { ranges: readonly string[] },
    options?: CallOptions,
  ): Promise<LinodeInterface> {
    const route = "/linode/instances/{id}/interfaces/{id}";
    const s = spec("PUT", route, `update vpc ranges on linode ${linodeId}`, options);
    const ranges = update.ranges.map((range) => ({ range }));
    const body: VpcRangesUpdate = { vpc: { ipv4: { ranges } } };
    const path = `/linode/instances/${linodeId}/interfaces/${interfaceId}`;
    return this.#caller.run(s, () => rawRequest<LinodeInterface>("PUT", path, { data: body }));
  }
}
