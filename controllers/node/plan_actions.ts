/**
 * How the node controllers name their writes in the plan (`controllers/loop/plan.ts`): initialising or
 * updating a Node with each field's old and new value, the shutdown taint, a deletion. Pure.
 */
import type { V1Node, V1Taint } from "@kubernetes/client-node";
import type { ActionSpec, PlanChange } from "../loop/plan.ts";
import { hasTaint, type NodeUpdatePlan, UNINITIALIZED_TAINT_KEY } from "./addresses.ts";

function taintList(taints: readonly V1Taint[] | undefined): string[] {
  return (taints ?? []).map((t) => `${t.key}:${t.effect}`);
}

function entryChanges(
  field: string,
  have: Readonly<Record<string, string>> | undefined,
  want: Readonly<Record<string, string>> | undefined,
): PlanChange[] {
  return Object.entries(want ?? {}).map(([k, v]) => ({
    field: `${field}[${k}]`,
    old: have?.[k] ?? null,
    new: v,
  }));
}

/** The fields `plan` changes on `node`, old and new. */
function nodeChanges(node: V1Node, plan: NodeUpdatePlan): PlanChange[] {
  const changes: PlanChange[] = [];
  if (plan.addresses) {
    const show = (list: readonly { type: string; address: string }[] | undefined) =>
      (list ?? []).map((a) => `${a.type}:${a.address}`);
    changes.push({ field: "status.addresses", old: show(node.status?.addresses), new: show(plan.addresses) });
  }
  const patch = plan.patch;
  if (!patch) return changes;
  changes.push(...entryChanges("metadata.labels", node.metadata?.labels, patch.metadata?.labels));
  changes.push(
    ...entryChanges("metadata.annotations", node.metadata?.annotations, patch.metadata?.annotations),
  );
  if (patch.spec?.providerID) {
    changes.push({
      field: "spec.providerID",
      old: node.spec?.providerID ?? null,
      new: patch.spec.providerID,
    });
  }
  if (patch.spec?.taints) {
    changes.push({
      field: "spec.taints",
      old: taintList(node.spec?.taints),
      new: taintList(patch.spec.taints),
    });
  }
  return changes;
}

/** The `cloud-node` action for a Node's update plan; undefined when the plan changes nothing. */
export function nodeUpdateAction(node: V1Node, plan: NodeUpdatePlan): ActionSpec | undefined {
  const changes = nodeChanges(node, plan);
  if (changes.length === 0) return undefined;
  const action = hasTaint(node, UNINITIALIZED_TAINT_KEY) ? "initialise-node" : "update-node";
  return { action, object: node.metadata?.name ?? "", changes };
}

/** The `cloud-node-lifecycle` action putting on (or taking off) the shutdown taint. */
export function shutdownTaintAction(node: V1Node, taints: readonly V1Taint[], on: boolean): ActionSpec {
  return {
    action: on ? "taint-shutdown" : "remove-shutdown-taint",
    object: node.metadata?.name ?? "",
    changes: [{ field: "spec.taints", old: taintList(node.spec?.taints), new: taintList(taints) }],
  };
}

/** The `cloud-node-lifecycle` action deleting a Node whose Linode answered 404. */
export function deleteNodeAction(node: V1Node, linodeId: number): ActionSpec {
  return {
    action: "delete-node",
    object: node.metadata?.name ?? "",
    changes: [{ field: "linode", old: String(linodeId), new: null }],
  };
}
