/**
 * What `cloud-node-lifecycle` should do in one pass, decided from the Nodes and the cached Linodes. Pure: no
 * I/O, no clock. Nodes without a valid `linode://` providerID are never touched.
 */
import type { V1Node } from "@kubernetes/client-node";
import type { InstanceIndex } from "../../cache/instance_index.ts";
import { hasTaint, SHUTDOWN_TAINT_KEY } from "./addresses.ts";
import { classifyProviderId, parseProviderId } from "../provider_id.ts";

const SHUTDOWN_STATUSES = new Set(["offline", "stopped", "shutting_down"]);

/** What one lifecycle pass should do. */
export interface LifecyclePlan {
  taint: V1Node[];
  untaint: V1Node[];
  gone: { node: V1Node; linodeId: number }[];
  /** True when too many Nodes look gone: none of `gone` may be deleted. */
  blocked: boolean;
}

/** True when the Node's `Ready` condition is `True`. */
export function isNodeReady(node: V1Node): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

/** True when the lifecycle controller needs Linode state: some Linode Node is not Ready. */
export function needsInstanceState(nodes: readonly V1Node[]): boolean {
  return nodes.some((n) => classifyProviderId(n.spec?.providerID) === "linode" && !isNodeReady(n));
}

/**
 * Decides taints and deletion candidates. `index` is undefined when Linode state is unknown: then only
 * Ready Nodes lose a leftover shutdown taint. Nodes without a valid `linode://` providerID are never touched.
 */
export function planLifecycle(
  nodes: readonly V1Node[],
  index: InstanceIndex | undefined,
  options: { maxDeletionShare?: number } = {},
): LifecyclePlan {
  const plan: LifecyclePlan = { taint: [], untaint: [], gone: [], blocked: false };
  const managed = nodes.filter((n) => classifyProviderId(n.spec?.providerID) === "linode");
  for (const node of managed) {
    const tainted = hasTaint(node, SHUTDOWN_TAINT_KEY);
    if (isNodeReady(node)) {
      if (tainted) plan.untaint.push(node);
      continue;
    }
    const linodeId = parseProviderId(node.spec?.providerID);
    if (!index || linodeId === undefined) continue;
    const linode = index.byId(linodeId);
    if (!linode) plan.gone.push({ node, linodeId });
    else if (SHUTDOWN_STATUSES.has(linode.status) && !tainted) plan.taint.push(node);
    else if (linode.status === "running" && tainted) plan.untaint.push(node);
  }
  const share = options.maxDeletionShare ?? 0.5;
  const count = plan.gone.length;
  plan.blocked = count > 0 && (count >= managed.length || count > share * managed.length);
  return plan;
}
