/**
 * The writes controllers make to Nodes and Services: patches that touch only the given fields, and a Node delete
 * with preconditions. Fencing and `KubeApiError` come from the clients (`makeKubeClients` with a fence).
 */
import {
  type CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1Service,
} from "@kubernetes/client-node";

/** A namespaced object's address. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/** A patch body: a partial object in merge-patch or strategic-merge-patch form (`null` deletes a key). */
export type PatchBody = Record<string, unknown>;

const MERGE = () => setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
const STRATEGIC = () => setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch);

/** JSON merge patch (RFC 7386) of a Node: lists are replaced whole. */
export function mergePatchNode(
  core: CoreV1Api,
  name: string,
  patch: PatchBody,
): Promise<V1Node> {
  return core.patchNode({ name, body: patch }, MERGE());
}

/** JSON merge patch of a Node's status subresource (addresses, conditions). */
export function mergePatchNodeStatus(
  core: CoreV1Api,
  name: string,
  patch: PatchBody,
): Promise<V1Node> {
  return core.patchNodeStatus({ name, body: patch }, MERGE());
}

/** Strategic merge patch of a Node: lists with merge keys (taints by key, addresses by type) are merged. */
export function strategicPatchNode(
  core: CoreV1Api,
  name: string,
  patch: PatchBody,
): Promise<V1Node> {
  return core.patchNode({ name, body: patch }, STRATEGIC());
}

/** Strategic merge patch of a Node's status: conditions merge by `type`, so only the given ones change. */
export function strategicPatchNodeStatus(
  core: CoreV1Api,
  name: string,
  patch: PatchBody,
): Promise<V1Node> {
  return core.patchNodeStatus({ name, body: patch }, STRATEGIC());
}

/**
 * Sets a Node's pod CIDRs (`podCIDR` is the first, as the apiserver keeps it). A merge patch without a
 * resourceVersion, as upstream's `PatchNodeCIDRs`: the apiserver refuses (422) any change once they are set,
 * so a race with another writer cannot overwrite theirs, and kubelet's status updates cause no conflict.
 */
export function patchNodePodCidrs(core: CoreV1Api, name: string, cidrs: readonly string[]): Promise<V1Node> {
  return core.patchNode({ name, body: { spec: { podCIDR: cidrs[0], podCIDRs: [...cidrs] } } }, MERGE());
}

/** JSON merge patch of a Service (annotations, finalizers, spec). */
export function mergePatchService(
  core: CoreV1Api,
  svc: NamespacedName,
  patch: PatchBody,
): Promise<V1Service> {
  return core.patchNamespacedService({ ...svc, body: patch }, MERGE());
}

/** JSON merge patch of a Service's status (the load-balancer ingress). */
export function mergePatchServiceStatus(
  core: CoreV1Api,
  svc: NamespacedName,
  patch: PatchBody,
): Promise<V1Service> {
  return core.patchNamespacedServiceStatus({ ...svc, body: patch }, MERGE());
}

/**
 * Replaces a Service's finalizers through the status subresource, as the upstream service controller does:
 * the Go CCM's RBAC grants `services/status` patch but not `services` patch. With `resourceVersion`, a
 * Service changed since it was read answers 409 instead of losing another writer's finalizer.
 */
export function patchServiceFinalizers(
  core: CoreV1Api,
  svc: NamespacedName,
  finalizers: readonly string[],
  resourceVersion?: string,
): Promise<V1Service> {
  const metadata: PatchBody = { finalizers: finalizers.length ? [...finalizers] : null };
  if (resourceVersion) metadata.resourceVersion = resourceVersion;
  return core.patchNamespacedServiceStatus({ ...svc, body: { metadata } }, MERGE());
}

/** Options of `deleteNode`: the exact Node version that was judged gone. */
export interface DeleteNodeOptions {
  preconditions: { uid: string; resourceVersion?: string };
}

/**
 * Deletes a Node only if it is still the object that was looked at: a Node re-created under the same name
 * (new uid) or changed since (new resourceVersion) makes the apiserver answer 409 instead.
 */
export async function deleteNode(core: CoreV1Api, name: string, options: DeleteNodeOptions): Promise<void> {
  await core.deleteNode({ name, body: { preconditions: options.preconditions } });
}
