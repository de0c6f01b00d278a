/**
 * What the informers keep of each object: only the fields the controllers read, as client-go's
 * `TransformFunc` does. A Node as kubelet reports it carries its image list (often 50+ entries with digests),
 * `managedFields` and volume lists that no controller here reads; at 5,000 Nodes they are most of the store.
 */
import type { V1Node } from "@kubernetes/client-node";

/**
 * A Node without `metadata.managedFields`, `status.images`, `status.volumesInUse`, `status.volumesAttached`,
 * `status.nodeInfo`, `status.config`, `status.daemonEndpoints`, `status.capacity`, `status.allocatable` and
 * `spec.configSource`: none is read by any controller (metadata, spec, addresses and conditions stay).
 * Returns a new object; the input is not changed.
 */
export function trimNode(node: V1Node): V1Node {
  const { managedFields: _m, ...metadata } = node.metadata ?? {};
  const { configSource: _c, ...spec } = node.spec ?? {};
  const status = node.status;
  return {
    ...node,
    metadata,
    spec,
    status: status && { addresses: status.addresses, conditions: status.conditions, phase: status.phase },
  };
}
