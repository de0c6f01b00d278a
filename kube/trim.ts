/**
 * What the informers keep of each object: only the fields the controllers read, as client-go's
 * `TransformFunc` does. A Node as kubelet reports it carries its image list (often 50+ entries with digests),
 * `managedFields` and volume lists that no controller here reads: most of the store in a big cluster
 * (docs/measurements.md, "Informer trim").
 */
import type { V1Node } from "@kubernetes/client-node";
import { share } from "../common/shared_strings.ts";

/**
 * Labels whose values come from a small vocabulary (instance types, regions, zones, OS, architecture), kept
 * as one shared copy per value: the type label alone would be one copy of `g6-standard-2` per Node.
 */
const SHARED_LABELS = new Set([
  "node.kubernetes.io/instance-type",
  "beta.kubernetes.io/instance-type",
  "topology.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/zone",
  "kubernetes.io/os",
  "kubernetes.io/arch",
  "beta.kubernetes.io/os",
  "beta.kubernetes.io/arch",
]);

function shareLabels(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels)) out[key] = SHARED_LABELS.has(key) ? share(value) : value;
  return out;
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
  const { managedFields: _m, ...rest } = node.metadata ?? {};
  const metadata = rest.labels ? { ...rest, labels: shareLabels(rest.labels) } : rest;
  const { configSource: _c, ...spec } = node.spec ?? {};
  if (spec.taints) {
    spec.taints = spec.taints.map((t) => ({
      ...t,
      key: share(t.key),
      effect: share(t.effect),
      ...(t.value === undefined ? {} : { value: share(t.value) }),
    }));
  }
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
