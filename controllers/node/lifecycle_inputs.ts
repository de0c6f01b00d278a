/**
 * What a lifecycle pass reads, and whether it changed since the last pass that had nothing to do: the Nodes
 * (a version kept from their events) and, when some Node is not Ready, the trusted Linode listing.
 */
import type { V1Node } from "@kubernetes/client-node";
import type { InstanceIndex } from "../../cache/instance_index.ts";
import type { Snapshot } from "../../cache/types.ts";
import { isAbort } from "../../common/clock.ts";
import { describeError } from "../loop/run_queue.ts";
import { hasTaint, SHUTDOWN_TAINT_KEY } from "./addresses.ts";
import type {
  LifecycleDeps,
  LifecycleNodeLister,
  LifecycleOptions,
  LifecycleState,
} from "./lifecycle_deps.ts";

/** The cached index when it may justify taints and deletions; undefined when Linode state is unknown. */
export async function trustedIndex(
  deps: LifecycleDeps,
  options: LifecycleOptions,
): Promise<Snapshot<InstanceIndex> | undefined> {
  let snap: Snapshot<InstanceIndex>;
  try {
    snap = await deps.instances.view();
  } catch (error) {
    if (isAbort(error)) throw error;
    deps.log.warning("Linode state unknown, skipping shutdown and deletion checks: {error}", {
      error: describeError(error),
    });
    return undefined;
  }
  const maxAgeMs = options.maxCacheAgeMs ?? 60_000;
  if (snap.stale || snap.suspicious || snap.ageMs > maxAgeMs) {
    const { stale, suspicious, ageMs } = snap;
    deps.log.warning("Linode cache not trusted (stale {stale}, suspicious {suspicious}, age {ageMs} ms)", {
      stale,
      suspicious,
      ageMs,
    });
    return undefined;
  }
  return snap;
}

/**
 * True when the last settled pass read what a pass would read now: the same Nodes (`state.nodesVersion`)
 * and, when it needed Linode state, the same trusted listing (read here; `index` gets it for the pass).
 */
export async function isSettled(
  deps: LifecycleDeps,
  options: LifecycleOptions,
  state: LifecycleState,
  index: { snap?: Snapshot<InstanceIndex> },
): Promise<boolean> {
  const settled = state.settled;
  if (state.nodesVersion === undefined || settled?.nodesVersion !== state.nodesVersion) return false;
  if (settled.generation === undefined) return true;
  index.snap = await trustedIndex(deps, options);
  return index.snap?.generation === settled.generation;
}

/** What a pass reads of a Node: a change here (or an added or deleted Node) means the next pass runs. */
function lifecycleFingerprint(node: V1Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status ?? "";
  return `${node.spec?.providerID ?? ""} ${ready} ${hasTaint(node, SHUTDOWN_TAINT_KEY)}`;
}

/** Keeps `state.nodesVersion` from Node events; returns the unsubscribe (a no-op without events). */
export function trackNodes(nodes: LifecycleNodeLister, state: LifecycleState): () => void {
  if (!nodes.onChange) return () => {};
  const seen = new Map<string, string>();
  const off = nodes.onChange((kind, node) => {
    const name = node.metadata?.name ?? "";
    const fingerprint = kind === "delete" ? undefined : lifecycleFingerprint(node);
    if (seen.get(name) === fingerprint) return;
    if (fingerprint === undefined) seen.delete(name);
    else seen.set(name, fingerprint);
    state.nodesVersion = (state.nodesVersion ?? 0) + 1;
  });
  for (const n of nodes.list()) seen.set(n.metadata?.name ?? "", lifecycleFingerprint(n));
  state.nodesVersion = 0;
  return off;
}
