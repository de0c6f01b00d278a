/**
 * VPC subnets named by label (`backend-vpc-name`/`backend-subnet-name`, `frontend-*`, `--vpc-names`) as the IDs
 * the NodeBalancer API takes. The account's VPCs are listed on first need and kept: names rarely move, and a
 * name not found lists again (at most once per `refreshMs`), so a steady Service costs no call.
 */
import type { Clock } from "../../../common/clock.ts";
import { toVpc, type Vpc } from "../../../cache/types.ts";
import type { SubnetSelector } from "../annotations/spec.ts";

/** Lists the account's VPCs. `LinodeClient.vpcs` implements it. */
export interface VpcLister {
  list(): Promise<readonly Vpc[]>;
}

const DEFAULT_REFRESH_MS = 30_000;

/** Resolves subnet selectors to IDs. */
export class SubnetResolver {
  readonly #source: VpcLister;
  readonly #clock: Clock;
  readonly #refreshMs: number;
  #vpcs: Promise<readonly Vpc[]> | undefined;
  #loadedAt = -Infinity;

  constructor(source: VpcLister, clock: Clock, options: { refreshMs?: number } = {}) {
    this.#source = source;
    this.#clock = clock;
    this.#refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
  }

  /** The subnet's ID, or undefined when no VPC and subnet have those labels. Throws when VPCs cannot be listed. */
  async resolve(selector: SubnetSelector): Promise<number | undefined> {
    if (selector.kind === "id") return selector.subnetId;
    const found = find(await this.#list(false), selector.vpcName, selector.subnetName);
    if (found !== undefined) return found;
    if (this.#clock.monotonic() - this.#loadedAt < this.#refreshMs) return undefined;
    return find(await this.#list(true), selector.vpcName, selector.subnetName);
  }

  #list(again: boolean): Promise<readonly Vpc[]> {
    if (this.#vpcs && !again) return this.#vpcs;
    this.#loadedAt = this.#clock.monotonic();
    // Only the fields read are kept (`toVpc`): a listed subnet also names every Linode in it.
    const loading = this.#source.list().then((vpcs) => vpcs.map(toVpc));
    this.#vpcs = loading;
    // A failed listing is not kept: the next Service asks again.
    loading.catch(() => {
      if (this.#vpcs === loading) this.#vpcs = undefined;
    });
    return loading;
  }
}

function find(vpcs: readonly Vpc[], vpcName: string, subnetName: string): number | undefined {
  return vpcs.find((v) => v.label === vpcName)?.subnets.find((s) => s.label === subnetName)?.id;
}
