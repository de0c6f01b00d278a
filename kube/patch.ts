/**
 * The writes controllers make to Nodes and Services: patches that touch only the given fields, and a Node delete
 * with preconditions. Each asks the fence immediately before sending and fails with `KubeApiError`.
 */
import {
  type CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1Service,
} from "@kubernetes/client-node";
import type { Fence } from "../lease/fence.ts";
import { toKubeApiError } from "./requests.ts";

/** A namespaced object's address. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/** A patch body: a partial object in merge-patch or strategic-merge-patch form (`null` deletes a key). */
export type PatchBody = Record<string, unknown>;

async function send<T>(fence: Fence | undefined, call: () => Promise<T>): Promise<T> {
  fence?.assertLeading();
  try {
    return await call();
  } catch (e) {
    throw toKubeApiError(e);
  }
}

const MERGE = () => setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
const STRATEGIC = () => setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch);

/** JSON merge patch (RFC 7386) of a Node: lists are replaced whole. */
export function mergePatchNode(
  core: CoreV1Api,
  name: string,
  patch: PatchBody,
  fence?: Fence,
): Promise<V1Node> {
  return send(fence, () => core.patchNode({ name, body: patch }, MERGE()));
}

/** JSON merge patch of a Node's status subresource (addresses, conditions). */
export function mergePatchNodeStatus(
  core: CoreV1Api,
  name: string,
  patch: PatchBody,
  fence?: Fence,
): Promise<V1Node> {
  return send(fence, () => core.patchNodeStatus({ name, body: patch }, MERGE()));
}

/** Strategic merge patch of a Node: lists with merge keys (taints by key, addresses by type) are merged. */
export function strategicPatchNode(
  core: CoreV1Api,
  name: string,
  patch: PatchBody,
  fence?: Fence,
): Promise<V1Node> {
  return send(fence, () => core.patchNode({ name, body: patch }, STRATEGIC()));
}

/** JSON merge patch of a Service (annotations, finalizers, spec). */
export function mergePatchService(
  core: CoreV1Api,
  svc: NamespacedName,
  patch: PatchBody,
  fence?: Fence,
): Promise<V1Service> {
  return send(fence, () => core.patchNamespacedService({ ...svc, body: patch }, MERGE()));
}

/** JSON merge patch of a Service's status (the load-balancer ingress). */
export function mergePatchServiceStatus(
  core: CoreV1Api,
  svc: NamespacedName,
  patch: PatchBody,
  fence?: Fence,
): Promise<V1Service> {
  return send(fence, () => core.patchNamespacedServiceStatus({ ...svc, body: patch }, MERGE()));
}

/** Options of `deleteNode`: the exact Node version that was judged gone. */
export interface DeleteNodeOptions {
  preconditions: { uid: string; resourceVersion?: string };
  fence?: Fence;
}

/**
 * Deletes a Node only if it is still the object that was looked at: a Node re-created under the same name
 * (new uid) or changed since (new resourceVersion) makes the apiserver answer 409 instead.
 */
export async function deleteNode(core: CoreV1Api, name: string, options: DeleteNodeOptions): Promise<void> {
  await send(options.fence, () => core.deleteNode({ name, body: { preconditions: options.preconditions } }));
}
