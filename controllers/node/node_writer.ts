/**
 * The Node writes of the node controllers: the fenced writer over client-node, and `applyPlan`, which writes
 * what `planNodeUpdate` asks for and re-plans on a 409.
 */
import type { CoreV1Api, V1Node } from "@kubernetes/client-node";
import type { VpcAddresses } from "../../cache/instance_index.ts";
import type { LinodeInstance } from "../../cache/types.ts";
import type { Logger } from "../../common/log.ts";
import { deleteNode, mergePatchNode, mergePatchNodeStatus } from "../../kube/patch.ts";
import { isConflict } from "../../kube/requests.ts";
import { type Ipv4Cidr, type NodeAddress, type NodePatch, planNodeUpdate } from "./addresses.ts";
import type { LifecycleNodeWriter } from "./lifecycle.ts";

/** Fenced Node reads and writes. */
export interface NodeWriter {
  /** A fresh read from the apiserver (after a 409). */
  getNode(name: string): Promise<V1Node>;
  /** Merge patch of metadata and spec; `metadata.resourceVersion` in the patch makes a race a 409. */
  patchNode(name: string, patch: NodePatch): Promise<V1Node>;
  /** Merge patch of the status subresource (a list in it replaces the whole list). */
  patchNodeStatus(name: string, patch: { status: { addresses: NodeAddress[] } }): Promise<V1Node>;
}

const MAX_CONFLICT_RETRIES = 3;

/** What `applyPlan` did: the Node as the apiserver last showed it, and the versions it had before. */
export interface Applied {
  latest: V1Node;
  older: string[];
  /** Something was written. */
  changed: boolean;
  /** A written patch removed the uninitialised taint (this reconcile initialised the Node). */
  untainted: boolean;
}

/**
 * Writes what `planNodeUpdate` asks for: the addresses first (a Node is never untainted without them), then
 * metadata and spec, planned again from the status write's answer so that its resourceVersion precondition
 * holds (planned from the older copy it could only meet a 409). A 409 re-reads the Node and plans again.
 */
export async function applyPlan(
  deps: { writer: NodeWriter; log: Logger },
  node: V1Node,
  target: { instance: LinodeInstance; vpc: VpcAddresses },
  options: { externalSubnet?: Ipv4Cidr },
): Promise<Applied> {
  const name = node.metadata?.name ?? "";
  const applied: Applied = { latest: node, older: [], changed: false, untainted: false };
  const advance = (next: V1Node) => {
    applied.older.push(applied.latest.metadata?.resourceVersion ?? "");
    applied.latest = next;
  };
  for (let attempt = 0;; attempt++) {
    try {
      let plan = planNodeUpdate(applied.latest, target.instance, target.vpc, options);
      if (plan.addresses) {
        advance(await deps.writer.patchNodeStatus(name, { status: { addresses: plan.addresses } }));
        applied.changed = true;
        plan = planNodeUpdate(applied.latest, target.instance, target.vpc, options);
      }
      if (plan.patch) {
        advance(await deps.writer.patchNode(name, plan.patch));
        applied.changed = true;
        applied.untainted ||= plan.patch.spec?.taints !== undefined;
      }
      return applied;
    } catch (error) {
      if (!isConflict(error) || attempt >= MAX_CONFLICT_RETRIES) throw error;
      deps.log.debug("node {node} changed while updating it, re-planning", { node: name });
      advance(await deps.writer.getNode(name));
    }
  }
}

/** The Node writes of both controllers over client-node: merge patches and preconditioned deletes, fenced. */
export function kubeNodeWriter(core: CoreV1Api): NodeWriter & LifecycleNodeWriter {
  return {
    getNode: (name) => core.readNode({ name }),
    patchNode: (name, patch) => mergePatchNode(core, name, { ...patch }),
    patchNodeStatus: (name, patch) => mergePatchNodeStatus(core, name, { ...patch }),
    deleteNode: (name, preconditions) => deleteNode(core, name, { preconditions }),
  };
}
