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
import { SettledInputs } from "../loop/settled.ts";
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

/** What a pass reads of a Node: a change here (or an added or deleted Node) means the next pass runs. */
function lifecycleFingerprint(node: V1Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status ?? "";
  return `${node.spec?.providerID ?? ""} ${ready} ${hasTaint(node, SHUTDOWN_TAINT_KEY)}`;
}

/** Tracks what a pass reads of each Node into `state.inputs`; returns the unsubscribe (none without events). */
export function trackNodes(nodes: LifecycleNodeLister, state: LifecycleState): () => void {
  if (!nodes.onChange) return () => {};
  const inputs = new SettledInputs();
  const off = nodes.onChange((kind, node) => {
    inputs.see(node.metadata?.name ?? "", kind === "delete" ? undefined : lifecycleFingerprint(node));
  });
  for (const n of nodes.list()) inputs.see(n.metadata?.name ?? "", lifecycleFingerprint(n));
  state.inputs = inputs;
  return off;
}
