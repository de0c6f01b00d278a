/** Reserved IPv4 addresses (`/networking/reserved/ips`): released when a Service says not to retain one. */
import { type ApiCaller, type CallOptions, callSpec as spec } from "./caller.ts";
import { isNotFound } from "./errors.ts";
import { rawRequest } from "./transport.ts";

/** `/networking/reserved/ips` and below. */
export class ReservedIpApi {
  readonly #caller: ApiCaller;

  constructor(caller: ApiCaller) {
    this.#caller = caller;
  }

  /** Releases a reserved IPv4 address; one already released counts as done. */
  async deleteReservedIpv4(address: string, options?: CallOptions): Promise<void> {
    const route = "/networking/reserved/ips/{address}";
    const s = spec("DELETE", route, `release reserved ip ${address}`, options);
    const path = `/networking/reserved/ips/${encodeURIComponent(address)}`;
    try {
      await this.#caller.remove(s, () => rawRequest("DELETE", path));
    } catch (e) {
      // Not reserved (any more): the address went back with its NodeBalancer.
      if (!isNotFound(e)) throw e;
    }
  }
}
