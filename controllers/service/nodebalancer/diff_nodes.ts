/**
 * Node changes of one config: nodes match by address first, then by label (a Node whose address changed is
 * updated in place), so node ids survive every change that the API can make with an update. Pure.
 */
import type { NodeBalancerConfigNode } from "@linode/api-v4";
import { type NodeBody, nodeBody } from "./bodies.ts";
import type { DesiredNode } from "./desired.ts";
import type { FieldChange, NodeBalancerAction } from "./diff_types.ts";
import type { PortFamily } from "../annotations/spec.ts";

/** The config the nodes belong to. */
export interface NodeTarget {
  readonly nodeBalancerId: number;
  readonly configId: number;
  readonly port: number;
  readonly family: PortFamily;
  /** `configs[80/tcp]`, the prefix of change fields. */
  readonly field: string;
}

/** Pairs desired and current nodes: by address, then by label among the rest. */
function match(
  desired: readonly DesiredNode[],
  current: readonly NodeBalancerConfigNode[],
): {
  pairs: [DesiredNode, NodeBalancerConfigNode][];
  added: DesiredNode[];
  removed: NodeBalancerConfigNode[];
} {
  const left = [...current];
  const pairs: [DesiredNode, NodeBalancerConfigNode][] = [];
  const unmatched: DesiredNode[] = [];
  for (const d of desired) {
    const i = left.findIndex((c) => c.address === d.address);
    if (i >= 0) pairs.push([d, ...left.splice(i, 1)] as [DesiredNode, NodeBalancerConfigNode]);
    else unmatched.push(d);
  }
  const added: DesiredNode[] = [];
  for (const d of unmatched) {
    const i = left.findIndex((c) => c.label === d.label);
    if (i >= 0) pairs.push([d, ...left.splice(i, 1)] as [DesiredNode, NodeBalancerConfigNode]);
    else added.push(d);
  }
  return { pairs, added, removed: left };
}

type NodeField = "address" | "label" | "weight" | "mode";

/** The changed fields of a matched node: the update body and each field's old and new value. */
function nodeUpdate(d: DesiredNode, c: NodeBalancerConfigNode) {
  const body: Partial<NodeBody> = {};
  const changed: [NodeField, string | number, string | number][] = [];
  if (c.address !== d.address) {
    body.address = d.address;
    if (d.subnet_id !== undefined) body.subnet_id = d.subnet_id;
    changed.push(["address", c.address, d.address]);
  }
  if (c.label !== d.label) changed.push(["label", c.label, body.label = d.label]);
  if (c.weight !== d.weight) changed.push(["weight", c.weight, body.weight = d.weight]);
  if (d.mode !== undefined && c.mode !== d.mode) changed.push(["mode", c.mode, body.mode = d.mode]);
  return { body, changed };
}

/** Creates, then updates, then deletes (a config never drops below its wanted nodes on the way). */
export function diffNodes(
  target: NodeTarget,
  desired: readonly DesiredNode[],
  current: readonly NodeBalancerConfigNode[],
): { actions: NodeBalancerAction[]; changes: FieldChange[] } {
  const { pairs, added, removed } = match(desired, current);
  const { field, ...at } = target;
  const base = { nodeBalancerId: at.nodeBalancerId, configId: at.configId, port: at.port, family: at.family };
  const actions: NodeBalancerAction[] = [];
  const changes: FieldChange[] = [];
  for (const d of added) {
    actions.push({ kind: "createNode", ...base, body: nodeBody(d) });
    changes.push({ field: `${field}.nodes[${d.label}]`, old: null, new: d.address });
  }
  for (const [d, c] of pairs) {
    const { body, changed } = nodeUpdate(d, c);
    if (changed.length === 0) continue;
    actions.push({ kind: "updateNode", ...base, nodeId: c.id, body });
    for (const [k, old, value] of changed) {
      changes.push({ field: `${field}.nodes[${c.label}].${k}`, old, new: value });
    }
  }
  for (const c of removed) {
    actions.push({ kind: "deleteNode", ...base, nodeId: c.id });
    changes.push({ field: `${field}.nodes[${c.label}]`, old: c.address, new: null });
  }
  return { actions, changes };
}
