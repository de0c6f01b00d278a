/** The emulator's object store as tests and the demo use it: apiserver semantics, results are copies. */
import type { KubeObject } from "./resources.ts";
import { compileSelector } from "./selectors.ts";
import { type DeleteResult, type PatchType, StoreCore, type WriteOptions } from "./store_core.ts";

export type { DeleteResult, PatchType, WriteOptions };

/** Options of `list`. */
export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Direct object access keyed by resource (`"nodes"`, `"events.k8s.io/events"`), with the same rv and watch events as HTTP. */
export class KubeStore extends StoreCore {
  /** Creates an object (HTTP POST semantics). */
  create(resource: string, obj: object, options: WriteOptions = {}): KubeObject {
    return structuredClone(this.createRaw(this.def(resource), obj, options));
  }

  /** Reads one object, or undefined. */
  get(resource: string, name: string, namespace?: string): KubeObject | undefined {
    const found = this.lookup(this.def(resource), name, namespace ?? "default");
    return found && structuredClone(found);
  }

  /** Lists objects (copies), sorted by namespace and name. */
  list(resource: string, options: ListOptions = {}): KubeObject[] {
    const def = this.def(resource);
    const selector = compileSelector(def, options.labelSelector, options.fieldSelector);
    return this.select(def, options.namespace, selector).map((o) => structuredClone(o));
  }

  /** Replaces an object (HTTP PUT semantics: stale resourceVersion → 409, status only via `subresource`). */
  update(resource: string, obj: object, options: WriteOptions = {}): KubeObject {
    return structuredClone(this.updateRaw(this.def(resource), obj, options));
  }

  /** Patches an object (HTTP PATCH semantics). */
  patch(
    resource: string,
    name: string,
    patch: unknown,
    options: WriteOptions & { type: PatchType },
  ): KubeObject {
    return structuredClone(this.patchRaw(this.def(resource), name, patch, options));
  }

  /** Deletes an object; with finalizers it only gets a deletionTimestamp. */
  delete(resource: string, name: string, namespace?: string): DeleteResult {
    const result = this.deleteRaw(this.def(resource), name, { namespace: namespace ?? "default" });
    return { object: structuredClone(result.object), deleted: result.deleted };
  }
}
