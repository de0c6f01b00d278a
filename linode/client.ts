/**
 * The Linode API as the controllers use it. `linode/` is the only runtime importer of `@linode/api-v4`:
 * calls are typed with its models, sent through its axios instance, and paged, retried, fenced and
 * counted by one `ApiCaller` that every per-resource module shares.
 */
import { type Filter, getProfile } from "@linode/api-v4";
import type { Profile } from "@linode/api-v4";
import { ApiCaller, type CallerOptions, type CallOptions, callSpec as spec } from "./caller.ts";
import { FirewallApi } from "./firewalls.ts";
import { InstanceApi } from "./instances.ts";
import { LinodeInterfaceApi } from "./interfaces.ts";
import { NodeBalancerApi } from "./nodebalancers.ts";
import { ReservedIpApi } from "./reserved_ips.ts";
import { VpcApi } from "./vpcs.ts";

export type { CallOptions, Filter };
export type { IpRangesUpdate } from "./instances.ts";
export type { VpcRangesUpdate } from "./interfaces.ts";

/** Options of `LinodeClient` (see `CallerOptions`). */
export type LinodeClientOptions = CallerOptions;

/**
 * Linode API client: base URL and token per instance, paging at 500, retries, fence, metrics. Composed of
 * one module per resource, all sending through the same caller (so one call count, one concurrency limit).
 */
export class LinodeClient {
  readonly #caller: ApiCaller;
  readonly #options: LinodeClientOptions;
  /** `/linode/instances`. */
  readonly instances: InstanceApi;
  /** `/linode/instances/{id}/interfaces`: Linode interfaces (`interface_generation: "linode"`). */
  readonly interfaces: LinodeInterfaceApi;
  /** `/vpcs`. */
  readonly vpcs: VpcApi;
  /** `/nodebalancers`. */
  readonly nodeBalancers: NodeBalancerApi;
  /** `/networking/firewalls`. */
  readonly firewalls: FirewallApi;
  /** `/networking/reserved/ips`. */
  readonly reservedIps: ReservedIpApi;

  /** A client over `options`; `caller` is for `withSignal` (a view sharing another client's caller). */
  constructor(options: LinodeClientOptions, caller?: ApiCaller) {
    this.#options = options;
    this.#caller = caller ?? new ApiCaller(options);
    this.instances = new InstanceApi(this.#caller);
    this.interfaces = new LinodeInterfaceApi(this.#caller);
    this.vpcs = new VpcApi(this.#caller);
    this.nodeBalancers = new NodeBalancerApi(this.#caller);
    this.firewalls = new FirewallApi(this.#caller);
    this.reservedIps = new ReservedIpApi(this.#caller);
  }

  /**
   * This client with `signal` on every call: a leadership term's controllers call through one bound to the
   * term, so a hand-over aborts their requests in flight and their retry sleeps. Counts and limits are shared.
   */
  withSignal(signal: AbortSignal): LinodeClient {
    return new LinodeClient(this.#options, this.#caller.bind(signal));
  }

  /** Requests sent by this client, keyed `"GET /linode/instances"`; every attempt counts. */
  callCounts(): Record<string, number> {
    return this.#caller.callCounts();
  }

  /** The user behind the token: the cheapest call that proves the token is accepted (401 when not). */
  getProfile(options?: CallOptions): Promise<Profile> {
    const s = spec("GET", "/profile", "read the profile of the API token", options);
    return this.#caller.run(s, () => getProfile());
  }
}
