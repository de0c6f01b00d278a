/** The configured VPCs and subnets (`--vpc-names`/`--vpc-ids`, `--subnet-names`/`--subnet-ids`), resolved once per TTL. */
import type { Clock } from "../common/clock.ts";
import type { BackoffOptions } from "../common/backoff.ts";
import type { Registry } from "../common/metrics.ts";
import { type GetOptions, TtlCell } from "./ttl_cache.ts";
import { type Snapshot, toVpc, type Vpc } from "./types.ts";

/** Lists the account's VPCs, all pages. `LinodeClient.vpcs` implements it. */
export interface VpcSource {
  list(): Promise<readonly Vpc[]>;
}

/** Which VPCs and subnets the cluster uses; empty lists mean "not configured" (VPC) or "all" (subnets). */
export interface VpcSelection {
  vpcNames?: readonly string[];
  vpcIds?: readonly number[];
  subnetNames?: readonly string[];
  subnetIds?: readonly number[];
}

/** Options of `VpcCache`. */
export interface VpcCacheOptions {
  clock: Clock;
  metrics: Registry;
  /** `LINODE_ROUTES_CACHE_TTL_SECONDS` in ms (default 60 s). */
  ttlMs?: number;
  retry?: BackoffOptions;
}

/** Default `LINODE_ROUTES_CACHE_TTL_SECONDS`. */
export const DEFAULT_VPC_TTL_MS = 60_000;

/** True when any VPC is configured. */
export function hasVpcSelection(selection: VpcSelection): boolean {
  return (selection.vpcNames?.length ?? 0) + (selection.vpcIds?.length ?? 0) > 0;
}

/** The selected VPCs with only the selected subnets. Throws when a configured VPC does not exist. Pure. */
export function selectVpcs(all: readonly Vpc[], selection: VpcSelection): Vpc[] {
  const names = (selection.vpcNames ?? []).map((n) => n.trim()).filter(Boolean);
  const ids = selection.vpcIds ?? [];
  const picked: Vpc[] = [];
  for (const name of names) picked.push(findVpc(all, (v) => v.label === name, `named ${name}`));
  for (const id of ids) picked.push(findVpc(all, (v) => v.id === id, `with id ${id}`));
  const subnetNames = selection.subnetNames ?? [];
  const subnetIds = selection.subnetIds ?? [];
  const unique = [...new Map(picked.map((v) => [v.id, v])).values()];
  if (subnetNames.length + subnetIds.length === 0) return unique;
  return unique.map((v) => ({
    ...v,
    subnets: v.subnets.filter((s) => subnetNames.includes(s.label) || subnetIds.includes(s.id)),
  }));
}

function findVpc(all: readonly Vpc[], match: (v: Vpc) => boolean, what: string): Vpc {
  const found = all.find(match);
  if (!found) throw new RangeError(`Cannot find VPC ${what}`);
  return found;
}

/** The resolved VPC selection; answers an empty list without any call when no VPC is configured. */
export class VpcCache {
  readonly #cell: TtlCell<readonly Vpc[]>;
  readonly configured: boolean;

  constructor(source: VpcSource, selection: VpcSelection, options: VpcCacheOptions) {
    this.configured = hasVpcSelection(selection);
    const configured = this.configured;
    this.#cell = new TtlCell<readonly Vpc[]>({
      name: "vpcs",
      ttlMs: options.ttlMs ?? DEFAULT_VPC_TTL_MS,
      clock: options.clock,
      metrics: options.metrics,
      retry: options.retry,
      load: async () => configured ? selectVpcs(await source.list(), selection).map(toVpc) : [],
    });
  }

  /** The selected VPCs, refreshed first when older than the TTL. */
  get(options?: GetOptions): Promise<Snapshot<readonly Vpc[]>> {
    return this.#cell.get(options);
  }

  /** Marks the data stale at the start of a leadership term: the next read loads it again. */
  expire(): void {
    this.#cell.expire();
  }

  /** The selected VPCs as cached (undefined before the first load). */
  peek(): Snapshot<readonly Vpc[]> | undefined {
    return this.#cell.peek();
  }
}
