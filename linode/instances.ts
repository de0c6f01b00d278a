/** Linode instance calls: listing, one instance, its configuration profiles and their VPC `ip_ranges`. */
import { type Filter, getLinode, getLinodeConfigs, getLinodes } from "@linode/api-v4";
import type { Config, Interface, Linode } from "@linode/api-v4";
import { type ApiCaller, type CallOptions, callSpec as spec } from "./caller.ts";
import { rawRequest } from "./transport.ts";

/** The `ip_ranges` write of the route controller on a legacy configuration-profile interface. */
export interface IpRangesUpdate {
  ip_ranges: string[];
}

/** `/linode/instances` and below. */
export class InstanceApi {
  readonly #caller: ApiCaller;

  constructor(caller: ApiCaller) {
    this.#caller = caller;
  }

  /** All Linodes matching `filter` (X-Filter), every page. */
  list(filter?: Filter, options?: CallOptions): Promise<Linode[]> {
    const s = spec("GET", "/linode/instances", "list linode instances", options);
    return this.#caller.list(s, (p) => getLinodes(p, filter));
  }

  /** One Linode; 404 → `LinodeApiError` with kind `not_found`. */
  get(linodeId: number, options?: CallOptions): Promise<Linode> {
    const s = spec("GET", "/linode/instances/{id}", `get linode ${linodeId}`, options);
    return this.#caller.run(s, () => getLinode(linodeId));
  }

  /** The configuration profiles of a Linode (with their interfaces). */
  listConfigs(linodeId: number, options?: CallOptions): Promise<Config[]> {
    const s = spec("GET", "/linode/instances/{id}/configs", `list configs of linode ${linodeId}`, options);
    return this.#caller.list(s, (p) => getLinodeConfigs(linodeId, p));
  }

  /**
   * Replaces the routed `ip_ranges` of a VPC interface (the whole list; idempotent, so retried). Sent without
   * api-v4's schema, which allows at most one range per interface; the API takes a list of them.
   */
  updateConfigInterface(
    linodeId: number,
    configId: number,
    interfaceId: number,
    body: IpRangesUpdate,
    options?: CallOptions,
  ): Promise<Interface> {
    const route = "/linode/instances/{id}/configs/{id}/interfaces/{id}";
    const s = spec("PUT", route, `update ip_ranges on linode ${linodeId}`, options);
    const path = `/linode/instances/${linodeId}/configs/${configId}/interfaces/${interfaceId}`;
    return this.#caller.run(s, () => rawRequest<Interface>("PUT", path, { data: body }));
  }
}
