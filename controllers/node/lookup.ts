/**
 * Finding the Linode of an uninitialised Node in the shared cache, and what to read when the cache predates it.
 *
 * Cached data loaded before a Node was first seen may predate its Linode. Then the Node reads its own Linode
 * (by providerID, else by label: one call) and that Linode's interfaces (one call), instead of a listing of
 * every Linode and every VPC address. Only a Node found neither way (e.g. matched by IP alone) forces a
 * listing, at most one per interval, so a Node whose Linode does not exist costs ≤ 1 listing per interval.
 * Data loaded after the Node was first seen is believed: a miss in it is a real miss.
 */
import type { V1Node } from "@kubernetes/client-node";
import type { InstanceIndex } from "../../cache/instance_index.ts";
import type { LinodeInstance, Snapshot } from "../../cache/types.ts";
import type { Clock } from "../../common/clock.ts";
import { findInstance, type LookupVia } from "./addresses.ts";
import { parseProviderId } from "../provider_id.ts";
import { RetryAfterError } from "../loop/runtime.ts";

/** The cached Linodes. `InstanceCache` implements it. */
export interface NodeInstances {
  /** The index; `maxAgeMs`/`vpcMaxAgeMs` force a refresh of data older than that (default: the TTLs). */
  view(options?: { maxAgeMs?: number; vpcMaxAgeMs?: number }): Promise<Snapshot<InstanceIndex>>;
  /** Age of the VPC addresses in the index; undefined when no VPC is configured. */
  vpcAgeMs(): number | undefined;
  onChange(listener: (linodeIds: ReadonlySet<number>) => void): () => void;
  /** A targeted read of one Linode (by id or label), recorded in the cache. */
  fetch(key: { id: number } | { label: string }): Promise<readonly LinodeInstance[]>;
  /** A targeted read of one Linode's VPC interfaces, recorded in the cache. */
  learnVpcIps(linodeId: number): Promise<void>;
}

/** Default minimum interval between refreshes forced by uninitialised Nodes. */
export const DEFAULT_FORCED_REFRESH_INTERVAL_MS = 2_000;

/** Thrown while a new Node waits for the next allowed forced refresh; retried quietly, without a Warning. */
export class AwaitingRefreshError extends RetryAfterError {
  override name = "AwaitingRefreshError";
  readonly quiet = true;
}

/** Remembers when each uninitialised Node was first seen, and paces the refreshes they force. */
export class RefreshPacer {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #firstSeen = new Map<string, number>();
  readonly #lastForced = { instances: -Infinity, vpc: -Infinity };

  constructor(clock: Clock, intervalMs = DEFAULT_FORCED_REFRESH_INTERVAL_MS) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
  }

  /** When `name` was first seen uninitialised (monotonic ms); records now on the first call. */
  firstSeen(name: string): number {
    const at = this.#firstSeen.get(name) ?? this.#clock.monotonic();
    this.#firstSeen.set(name, at);
    return at;
  }

  /** Forgets a Node that is initialised or gone. */
  forget(name: string): void {
    this.#firstSeen.delete(name);
  }

  /** True when data of this age was loaded before the Node was first seen. */
  predates(ageMs: number, firstSeen: number): boolean {
    return this.#clock.monotonic() - ageMs < firstSeen;
  }

  /** Claims the next forced refresh of `what`, or throws `AwaitingRefreshError` with the wait until allowed. */
  claim(what: "instances" | "vpc", node: string): void {
    const now = this.#clock.monotonic();
    const waitMs = this.#lastForced[what] + this.#intervalMs - now;
    if (waitMs > 0) {
      throw new AwaitingRefreshError(`The ${what} data may predate node ${node}: refreshing it soon`, waitMs);
    }
    this.#lastForced[what] = now;
  }
}

/** What a lookup found, and the index to plan the Node's addresses from. */
export interface Lookup {
  found?: { instance: LinodeInstance; via: LookupVia };
  index: InstanceIndex;
}

/**
 * An uninitialised Node's Linode. Refreshes instances when the Linode is missing from data that predates
 * the Node, and VPC addresses when the Linode has none in data that predates it, so a Node in a VPC gets
 * its final InternalIP in the write that initialises it. `found` undefined is a real miss; a failed refresh
 * throws (retried with backoff, no Warning).
 */
export async function lookupNewNode(
  instances: NodeInstances,
  pacer: RefreshPacer,
  node: V1Node,
): Promise<Lookup> {
  const name = node.metadata?.name ?? "";
  const firstSeen = pacer.firstSeen(name);
  let snap = await instances.view();
  let found = findInstance(node, snap.data);
  if (!found) {
    // With VPCs configured a Linode counts only once it has a VPC address, so old VPC data hides it too.
    const listOld = pacer.predates(snap.ageMs, firstSeen);
    const vpcOld = predates(pacer, instances.vpcAgeMs(), firstSeen);
    if (!listOld && !vpcOld) return { index: snap.data };
    // Newer than the data: its own Linode (and, with VPCs, its interfaces) first; a listing only when that
    // read had no key to go by.
    const id = parseProviderId(node.spec?.providerID);
    await instances.fetch(id === undefined ? { label: name } : { id });
    snap = await instances.view({ maxAgeMs: Infinity, vpcMaxAgeMs: Infinity });
    found = findInstance(node, snap.data);
    if (!found && id === undefined) {
      found = await forcedListing(instances, pacer, node, { firstSeen, listOld, vpcOld });
    }
    if (!found) return { index: snap.data };
  }
  const vpcAgeMs = instances.vpcAgeMs();
  const vpc = snap.data.vpcAddresses(found.instance.id);
  if (vpc.ipv4.length + vpc.ipv6.length > 0 || vpcAgeMs === undefined) {
    return { found, index: snap.data };
  }
  if (!pacer.predates(vpcAgeMs, firstSeen)) return { found, index: snap.data };
  // Its Linode may be newer than the VPC listing: read that Linode's interfaces, not the whole VPC.
  await instances.learnVpcIps(found.instance.id);
  const fresh = await instances.view({ maxAgeMs: Infinity, vpcMaxAgeMs: Infinity });
  return { found: findInstance(node, fresh.data) ?? found, index: fresh.data };
}

/** The last resort for a Node matched by IP only: a listing of every Linode (and VPC address), paced. */
async function forcedListing(
  instances: NodeInstances,
  pacer: RefreshPacer,
  node: V1Node,
  old: { firstSeen: number; listOld: boolean; vpcOld: boolean },
) {
  const name = node.metadata?.name ?? "";
  const { firstSeen, listOld, vpcOld } = old;
  if (listOld) pacer.claim("instances", name);
  if (vpcOld) pacer.claim("vpc", name);
  const snap = await instances.view({
    ...(listOld ? { maxAgeMs: 0 } : {}),
    ...(vpcOld ? { vpcMaxAgeMs: 0 } : {}),
  });
  const found = findInstance(node, snap.data);
  const failed = pacer.predates(snap.ageMs, firstSeen) || predates(pacer, instances.vpcAgeMs(), firstSeen);
  if (!found && failed) {
    // The refresh failed: whether the Linode exists is unknown, which is not worth a Warning.
    throw new Error(`Cannot look up the Linode of node ${name}: the instance list could not be refreshed`);
  }
  return found;
}

function predates(pacer: RefreshPacer, ageMs: number | undefined, firstSeen: number): boolean {
  return ageMs !== undefined && pacer.predates(ageMs, firstSeen);
}
