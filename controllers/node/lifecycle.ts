/**
 * `cloud-node-lifecycle`: taints Nodes whose Linode is shut down and deletes Nodes whose Linode is
 * confirmed gone (a direct GET answering 404). Unknown is never absent: any doubt means no deletion.
 */
import type { V1Node, V1Taint } from "@kubernetes/client-node";
import { isAbort } from "../../common/clock.ts";
import { isNotFound } from "../../linode/errors.ts";
import { normalEvent, refFor, warnEvent } from "../../kube/events.ts";
import { SHUTDOWN_TAINT_KEY, withoutTaint, withTaint } from "./addresses.ts";
import { classifyProviderId } from "../provider_id.ts";
import { type LifecyclePlan, needsInstanceState, planLifecycle } from "./lifecycle_plan.ts";
import { recordSkippedPass, timedReconcile } from "../loop/reconcile_metrics.ts";
import { describeError } from "../loop/run_queue.ts";
import { LIVE_SCOPE, type PlanScope, runWithin } from "../loop/plan.ts";
import { deleteNodeAction, shutdownTaintAction } from "./plan_actions.ts";
import type { LifecycleDeps, LifecycleOptions, LifecycleState } from "./lifecycle_deps.ts";
import { trackNodes, trustedIndex } from "./lifecycle_inputs.ts";

export type {
  InstanceGetter,
  LifecycleDeps,
  LifecycleInstances,
  LifecycleNodeLister,
  LifecycleNodeWriter,
  LifecycleOptions,
  LifecycleState,
} from "./lifecycle_deps.ts";

/** Default `--node-monitor-period`. */
export const DEFAULT_MONITOR_PERIOD_MS = 5_000;
const SHUTDOWN_TAINT: V1Taint = { key: SHUTDOWN_TAINT_KEY, effect: "NoSchedule" };

async function setShutdownTaint(deps: LifecycleDeps, node: V1Node, pass: Pass): Promise<void> {
  const { on, plan } = pass;
  const name = node.metadata?.name ?? "";
  const taints = on ? withTaint(node, SHUTDOWN_TAINT) : withoutTaint(node, SHUTDOWN_TAINT_KEY);
  if (plan.hold(shutdownTaintAction(node, taints, on))) return;
  try {
    // The whole taints list is replaced: the resourceVersion makes a concurrent taint change a 409.
    await deps.writer.patchNode(name, {
      metadata: { resourceVersion: node.metadata?.resourceVersion },
      spec: { taints },
    });
    deps.log.info(on ? "tainted node {node} as shut down" : "removed shutdown taint from node {node}", {
      node: name,
    });
  } catch (error) {
    if (isAbort(error)) throw error;
    deps.log.warning("Cannot update taints of node {node}: {error}", {
      node: name,
      error: describeError(error),
    });
  }
}

/** True once a direct GET answered 404 for the Linode (remembered: ids are never reused). */
async function isConfirmedGone(
  deps: LifecycleDeps,
  state: LifecycleState,
  target: { name: string; linodeId: number },
): Promise<boolean> {
  const { name, linodeId } = target;
  if (state.gone?.has(linodeId)) return true;
  try {
    const linode = await deps.linode.get(linodeId);
    deps.instances.recordInstance(linode);
    deps.log.debug("linode {linodeId} of node {node} still exists", { linodeId, node: name });
    return false;
  } catch (error) {
    if (isAbort(error)) throw error;
    if (!isNotFound(error)) {
      deps.log.warning("Cannot confirm linode {linodeId} of node {node} is gone: {error}", {
        linodeId,
        node: name,
        error: describeError(error),
      });
      return false;
    }
  }
  (state.gone ??= new Set()).add(linodeId);
  deps.instances.forgetInstance(linodeId);
  return true;
}

async function deleteIfGone(
  deps: LifecycleDeps,
  node: V1Node,
  target: { linodeId: number; state: LifecycleState; plan: PlanScope },
): Promise<void> {
  const { linodeId, state, plan } = target;
  const name = node.metadata?.name ?? "";
  if (!await isConfirmedGone(deps, state, { name, linodeId })) return;
  if (plan.hold(deleteNodeAction(node, linodeId))) return;
  const uid = node.metadata?.uid ?? "";
  const resourceVersion = node.metadata?.resourceVersion ?? "";
  try {
    await deps.writer.deleteNode(name, { uid, resourceVersion });
  } catch (error) {
    if (isAbort(error)) throw error;
    deps.log.warning("Cannot delete node {node}: {error}", { node: name, error: describeError(error) });
    return;
  }
  deps.metrics.counter("ccm_node_deletions_total", "Nodes deleted because their Linode is gone").inc();
  normalEvent(deps, {
    ref: refFor(node, "Node"),
    reason: "DeletingNode",
    message: "Deleted node {node}: linode {linodeId} does not exist",
    props: { node: name, linodeId },
  });
}

function reportBlocked(
  deps: LifecycleDeps,
  plan: LifecyclePlan,
  total: number,
  state: LifecycleState,
): void {
  deps.metrics.counter("ccm_node_deletions_blocked_total", "Lifecycle passes that refused a mass deletion")
    .inc();
  const names = plan.gone.map((g) => g.node.metadata?.name ?? "").sort();
  const key = names.join(",");
  if (state.lastBlocked === key) return;
  state.lastBlocked = key;
  const first = plan.gone[0]?.node;
  if (!first) return;
  warnEvent(deps, {
    ref: refFor(first, "Node"),
    reason: "NodeDeletionBlocked",
    message: "Refusing to delete {count} of {total} nodes whose Linodes look gone: {nodes}",
    props: { count: names.length, total, nodes: key },
  });
}

/** A taint write's direction and the pass's part of the plan. */
interface Pass {
  on: boolean;
  plan: PlanScope;
}

/** A pass over the inputs of the last settled one: nothing to decide. */
function skipped(deps: LifecycleDeps): LifecyclePlan {
  recordSkippedPass(deps.metrics, "cloud-node-lifecycle");
  return { taint: [], untaint: [], gone: [], blocked: false };
}

/**
 * One lifecycle pass: no Linode read unless some Linode Node is not Ready, and nothing at all when neither
 * the Nodes nor the listing changed since a pass that had nothing to do.
 */
export async function reconcileLifecycle(
  deps: LifecycleDeps,
  options: LifecycleOptions & { plan?: PlanScope } = {},
  state: LifecycleState = {},
): Promise<LifecyclePlan> {
  const scope = options.plan ?? LIVE_SCOPE;
  const { inputs } = state;
  // The version of the Nodes listed now: a change during the pass is seen by the next one.
  const version = inputs?.version ?? 0;
  if (inputs?.isSettled(inputs.key(version))) return skipped(deps);
  const nodes = deps.nodes.list();
  const needsIndex = needsInstanceState(nodes);
  const snap = needsIndex ? await trustedIndex(deps, options) : undefined;
  // With a NotReady Node the pass reads the listing too: settled only over the same trusted one.
  const key = needsIndex ? snap && inputs?.key(version, snap.generation) : inputs?.key(version);
  if (key && inputs?.isSettled(key)) return skipped(deps);
  inputs?.settle(undefined);
  const plan = planLifecycle(nodes, snap?.data, options);
  for (const node of plan.untaint) await setShutdownTaint(deps, node, { on: false, plan: scope });
  for (const node of plan.taint) await setShutdownTaint(deps, node, { on: true, plan: scope });
  if (plan.blocked) {
    const total = nodes.filter((n) => classifyProviderId(n.spec?.providerID) === "linode").length;
    reportBlocked(deps, plan, total, state);
    return plan;
  }
  state.lastBlocked = undefined;
  for (const { node, linodeId } of plan.gone) {
    await deleteIfGone(deps, node, { linodeId, state, plan: scope });
  }
  const idle = plan.taint.length + plan.untaint.length + plan.gone.length === 0;
  if (idle && key) inputs?.settle(key);
  return plan;
}

/** The `cloud-node-lifecycle` controller: one pass every `--node-monitor-period` until aborted. */
export function startNodeLifecycleController(
  deps: LifecycleDeps,
  options: LifecycleOptions = {},
): { run(signal: AbortSignal): Promise<void> } {
  const state: LifecycleState = {};
  const periodMs = options.monitorPeriodMs ?? DEFAULT_MONITOR_PERIOD_MS;
  return {
    async run(signal: AbortSignal): Promise<void> {
      using _tracking = { [Symbol.dispose]: trackNodes(deps.nodes, state) };
      while (!signal.aborted) {
        try {
          await timedReconcile(
            deps.metrics,
            deps.clock,
            "cloud-node-lifecycle",
            () =>
              runWithin(
                deps.plan,
                { controller: "cloud-node-lifecycle", scope: "nodes" },
                (plan) => reconcileLifecycle(deps, { ...options, plan }, state),
              ),
          );
        } catch (error) {
          if (isAbort(error, signal) || signal.aborted) return;
          deps.log.warning("lifecycle pass failed: {error}", { error: describeError(error) });
        }
        await deps.clock.sleep(periodMs, signal).catch(() => {});
      }
    },
  };
}
