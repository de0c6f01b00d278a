/** Cache and work-queue keys for Kubernetes objects, as client-go's `MetaNamespaceKeyFunc` builds them. */

/** The metadata a key is built from. */
export interface KeyedObject {
  metadata?: { name?: string; namespace?: string };
}

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones. */
export function objectKey(obj: KeyedObject): string {
  const name = obj.metadata?.name ?? "";
  const namespace = obj.metadata?.namespace;
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key made by `objectKey`; `namespace` is `""` for cluster-scoped keys. */
export function splitKey(key: string): { namespace: string; name: string } {
  const parts = key.split("/");
  if (parts.length === 1) return { namespace: "", name: key };
  if (parts.length === 2 && parts[0] && parts[1]) return { namespace: parts[0], name: parts[1] };
  throw new RangeError(`Cannot split key "${key}": want "name" or "namespace/name"`);
}
