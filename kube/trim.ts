/**
 * What the informers keep of each object: only the fields the controllers read, as client-go's
 * `TransformFunc` does. A Node as kubelet reports it carries its image list (often 50+ entries with digests),
 * `managedFields` and volume lists that no controller here reads; at 5,000 Nodes they are most of the store.
 */
import type { V1Node } from "@kubernetes/client-node";

/** At most this many distinct strings are shared (condition types, statuses, reasons; address types). */
const MAX_SHARED = 1024;
const shared = new Map<string, string>();

/**
 * One copy of a string of a small vocabulary: decoded JSON gives every Node its own copy of `Ready`, `True`,
 * `KubeletReady` or `InternalIP`. Past `MAX_SHARED` distinct values a string is kept as it is.
 */
function share<T extends string | undefined>(value: T): T {
  if (value === undefined) return value;
  const found = shared.get(value);
  if (found !== undefined) return found as T;
  if (shared.size < MAX_SHARED) shared.set(value, value);
  return value;
}

/**
 * A Node without `metadata.managedFields`, `status.images`, `status.volumesInUse`, `status.volumesAttached`,
 * `status.nodeInfo`, `status.config`, `status.daemonEndpoints`, `status.capacity`, `status.allocatable` and
 * `spec.configSource`: none is read by any controller (metadata, spec, addresses and conditions stay). Of
 * each condition only `type`, `status` and `reason` stay: no controller reads a condition's message or
 * times, and no write is made from the stored copy (the route condition is a strategic merge patch of its
 * own condition). Returns a new object; the input is not changed.
 */
export function trimNode(node: V1Node): V1Node {
  const { managedFields: _m, ...metadata } = node.metadata ?? {};
  const { configSource: _c, ...spec } = node.spec ?? {};
  const status = node.status;
  return {
    ...node,
    metadata,
    spec,
    status: status && {
      addresses: status.addresses?.map((a) => ({ type: share(a.type), address: a.address })),
      conditions: status.conditions?.map((c) => ({
        type: share(c.type),
        status: share(c.status),
        ...(c.reason === undefined ? {} : { reason: share(c.reason) }),
      })),
      phase: status.phase,
    },
  };
}
