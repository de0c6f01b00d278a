/** The store's core: apiserver write semantics over in-memory maps, with a change history. */
import { type Clock, systemClock } from "../../common/clock.ts";
import { History, type StoreEvent } from "./history.ts";
import {
  carrySystemMeta,
  clearSystemMeta,
  generatedName,
  normalizeInput,
  rfc3339,
  sameIgnoringVersion,
  specChanged,
  type Target,
} from "./input.ts";
import { applyJsonPatch, applyMergePatch } from "./patch.ts";
import {
  isRecord,
  type KubeObject,
  objectKey,
  resourceByKey,
  type ResourceDef,
  RESOURCES,
} from "./resources.ts";
import type { Selector } from "./selectors.ts";
import { alreadyExists, conflict, fieldError, forbidden, invalid, notFound } from "./status.ts";
import { applyStrategicPatch } from "./strategic.ts";
import { applyDefaults, checkFinalizersWhileDeleting, validateObject, validateUpdate } from "./validate.ts";

/** The patch content types the emulator applies. */
export type PatchType = "json" | "merge" | "strategic";

/** Options of a write: URL namespace/name, `/status` subresource, dry run. */
export interface WriteOptions extends Target {
  subresource?: "status";
  dryRun?: boolean;
}

/** Result of a delete: the last state of the object, and whether it is gone (false: finalizers pending). */
export interface DeleteResult {
  object: KubeObject;
  deleted: boolean;
}

const PROTECTED_NAMESPACES = ["default", "kube-system", "kube-public"];
const INITIAL_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** In-memory apiserver storage. Stored objects are never mutated; methods here return them uncopied. */
export class StoreCore {
  #rv = 1;
  readonly #objects = new Map<string, Map<string, KubeObject>>();
  readonly #history: History;
  readonly #listeners = new Set<(event: StoreEvent) => void>();
  readonly #clock: Clock;

  constructor(options: { historyMs: number; clock?: Clock }) {
    this.#history = new History(options.historyMs);
    this.#clock = options.clock ?? systemClock;
    for (const def of RESOURCES) this.#objects.set(def.key, new Map());
    for (const name of INITIAL_NAMESPACES) this.createRaw(this.def("namespaces"), { metadata: { name } }, {});
  }

  /** Wall-clock time of the store's clock, which stamps creationTimestamp (Tables age objects with it). */
  now(): number {
    return this.#clock.now();
  }

  /** The current global resourceVersion. */
  get resourceVersion(): string {
    return String(this.#rv);
  }

  /** Calls `listener` synchronously for every committed change; returns the unsubscribe function. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The resource definition for a store key; throws TypeError for unknown keys. */
  def(resource: string): ResourceDef {
    const def = resourceByKey(resource);
    if (!def) throw new TypeError(`Unknown resource "${resource}"`);
    return def;
  }

  /** The stored object itself (do not mutate). */
  lookup(def: ResourceDef, name: string, namespace?: string): KubeObject | undefined {
    return this.#objects.get(def.key)!.get(objectKey(def, name, namespace));
  }

  /** The live objects of a resource (do not mutate). */
  objects(def: ResourceDef): Iterable<KubeObject> {
    return this.#objects.get(def.key)!.values();
  }

  /** The objects (default: the live ones) in `namespace` that `selector` matches, sorted by key as etcd lists. */
  select(
    def: ResourceDef,
    namespace: string | undefined,
    selector: Selector,
    objects: Iterable<KubeObject> = this.objects(def),
  ): KubeObject[] {
    const out: KubeObject[] = [];
    for (const o of objects) {
      if ((namespace === undefined || o.metadata.namespace === namespace) && selector.matches(o)) out.push(o);
    }
    const key = (o: KubeObject) => objectKey(def, o.metadata.name ?? "", o.metadata.namespace);
    return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  }

  /** The oldest resourceVersion still served from history: older ones are a 410. */
  compactedRv(): number {
    return this.#history.compactedRv(this.#clock.monotonic());
  }

  /** Compacts the history at the current resourceVersion: watching or listing from an older one is a 410. */
  compact(): void {
    this.#history.compactAll();
  }

  /** Committed events after `rv`, oldest first. */
  eventsSince(rv: number): Iterable<StoreEvent> {
    return this.#history.since(rv);
  }

  /** The objects of a resource as they were at `rv` (rebuilt from history; caller checks compaction). */
  objectsAt(def: ResourceDef, rv: number): Iterable<KubeObject> {
    const state = new Map(this.#objects.get(def.key)!);
    for (const ev of this.#history.newestFirstSince(rv)) {
      if (ev.def !== def) continue;
      const key = objectKey(def, ev.object.metadata.name ?? "", ev.object.metadata.namespace);
      if (ev.prev) state.set(key, ev.prev);
      else state.delete(key);
    }
    return state.values();
  }

  /** `create` without the copy; used by the HTTP layer. */
  createRaw(def: ResourceDef, input: unknown, options: WriteOptions): KubeObject {
    const obj = normalizeInput(def, input, options);
    if (def.namespaced) this.#checkNamespaceWritable(obj.metadata.namespace ?? "");
    clearSystemMeta(obj);
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = generatedName(meta.generateName);
    if (!meta.name) {
      throw invalid(def, "", [fieldError("metadata.name", "Required", "name or generateName is required")]);
    }
    if (this.lookup(def, meta.name, meta.namespace)) throw alreadyExists(def, meta.name);
    applyDefaults(def, obj, undefined, { services: () => this.objects(this.def("services")) });
    validateObject(def, obj);
    meta.uid = crypto.randomUUID();
    meta.creationTimestamp = rfc3339(this.#clock.now());
    meta.generation = 1;
    if (options.dryRun) return obj;
    return this.#commit(def, "ADDED", obj, undefined);
  }

  /** `update` without the copy; used by the HTTP layer. */
  updateRaw(def: ResourceDef, input: unknown, options: WriteOptions, checkVersion = true): KubeObject {
    const obj = normalizeInput(def, input, options);
    const old = this.lookup(def, obj.metadata.name ?? "", obj.metadata.namespace);
    if (!old) {
      if (def.createOnUpdate && !options.subresource) return this.createRaw(def, obj, options);
      throw notFound(def, obj.metadata.name ?? "");
    }
    const name = old.metadata.name ?? "";
    const rv = obj.metadata.resourceVersion;
    if (checkVersion && rv !== undefined && rv !== "" && rv !== old.metadata.resourceVersion) {
      throw conflict(def, name);
    }
    const uid = obj.metadata.uid;
    if (uid !== undefined && uid !== "" && uid !== old.metadata.uid) {
      throw conflict(
        def,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    const next = options.subresource === "status" ? statusOnly(old, obj) : keepStatus(def, old, obj);
    carrySystemMeta(next, old);
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    checkFinalizersWhileDeleting(def, next, old);
    applyDefaults(def, next, old, { services: () => this.objects(this.def("services")) });
    validateObject(def, next);
    validateUpdate(def, next, old);
    if (specChanged(def, old, next)) next.metadata.generation = (old.metadata.generation ?? 0) + 1;
    if (sameIgnoringVersion(old, next) || options.dryRun) return options.dryRun ? next : old;
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      return this.#commit(def, "DELETED", next, old);
    }
    return this.#commit(def, "MODIFIED", next, old);
  }

  /** `patch` without the copy; used by the HTTP layer. */
  patchRaw(
    def: ResourceDef,
    name: string,
    patch: unknown,
    options: WriteOptions & { type: PatchType },
  ): KubeObject {
    const old = this.lookup(def, name, options.namespace ?? (def.namespaced ? "default" : undefined));
    if (!old) throw notFound(def, name);
    const patched = options.type === "json"
      ? applyJsonPatch(old, patch)
      : options.type === "merge"
      ? applyMergePatch(old, patch)
      : applyStrategicPatch(def.kind, old, patch);
    if (!isRecord(patched) || !isRecord(patched.metadata)) {
      throw invalid(def, name, [fieldError("metadata", "Required", "patch removed the object's metadata")]);
    }
    const rv = patched.metadata.resourceVersion;
    if (rv !== undefined && rv !== null && rv !== old.metadata.resourceVersion) throw conflict(def, name);
    return this.updateRaw(def, patched, { ...options, name }, false);
  }

  /** `delete` without the copy; used by the HTTP layer. */
  deleteRaw(
    def: ResourceDef,
    name: string,
    options: Target & { uid?: string; resourceVersion?: string; dryRun?: boolean },
  ): DeleteResult {
    const old = this.lookup(def, name, options.namespace);
    if (!old) throw notFound(def, name);
    if (options.uid && options.uid !== old.metadata.uid) {
      throw conflict(
        def,
        name,
        `Precondition failed: UID in precondition: ${options.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    if (options.resourceVersion && options.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(
        def,
        name,
        "the ResourceVersion in the precondition does not match the ResourceVersion in record",
      );
    }
    if (def.key === "namespaces" && PROTECTED_NAMESPACES.includes(name)) {
      throw forbidden(`namespaces "${name}" is forbidden: this namespace may not be deleted`, def, name);
    }
    if (options.dryRun) return { object: old, deleted: (old.metadata.finalizers ?? []).length === 0 };
    if (def.key === "namespaces") return this.#deleteNamespace(def, old);
    if ((old.metadata.finalizers ?? []).length === 0) {
      return { object: this.#commit(def, "DELETED", old, old), deleted: true };
    }
    if (old.metadata.deletionTimestamp) return { object: old, deleted: false };
    const next = structuredClone(old);
    next.metadata.deletionTimestamp = rfc3339(this.#clock.now());
    next.metadata.deletionGracePeriodSeconds = 0;
    return { object: this.#commit(def, "MODIFIED", next, old), deleted: false };
  }

  #deleteNamespace(def: ResourceDef, old: KubeObject): DeleteResult {
    const name = old.metadata.name ?? "";
    let current = old;
    if (!old.metadata.deletionTimestamp) {
      const next = structuredClone(old);
      next.metadata.deletionTimestamp = rfc3339(this.#clock.now());
      next.status = { ...(isRecord(next.status) ? next.status : {}), phase: "Terminating" };
      current = this.#commit(def, "MODIFIED", next, old);
    }
    for (const other of RESOURCES) {
      if (!other.namespaced) continue;
      for (const o of [...this.objects(other)]) {
        if (o.metadata.namespace === name) this.deleteRaw(other, o.metadata.name ?? "", { namespace: name });
      }
    }
    this.#finishNamespace(name);
    const gone = !this.lookup(def, name);
    return { object: gone ? current : this.lookup(def, name)!, deleted: gone };
  }

  #checkNamespaceWritable(namespace: string): void {
    const ns = this.lookup(this.def("namespaces"), namespace);
    if (!ns) throw notFound(this.def("namespaces"), namespace);
    if (ns.metadata.deletionTimestamp) {
      throw forbidden(
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
    }
  }

  #commit(
    def: ResourceDef,
    type: StoreEvent["type"],
    obj: KubeObject,
    prev: KubeObject | undefined,
  ): KubeObject {
    const stored: KubeObject = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } };
    const map = this.#objects.get(def.key)!;
    const key = objectKey(def, stored.metadata.name ?? "", stored.metadata.namespace);
    if (type === "DELETED") map.delete(key);
    else map.set(key, stored);
    const event: StoreEvent = { rv: this.#rv, at: this.#clock.monotonic(), type, def, object: stored, prev };
    this.#history.append(event);
    for (const listener of this.#listeners) listener(event);
    if (type === "DELETED" && def.namespaced) this.#finishNamespace(stored.metadata.namespace ?? "");
    return stored;
  }

  #finishNamespace(namespace: string): void {
    const nsDef = this.def("namespaces");
    const ns = this.lookup(nsDef, namespace);
    if (!ns?.metadata.deletionTimestamp) return;
    for (const def of RESOURCES) {
      if (!def.namespaced) continue;
      for (const o of this.objects(def)) if (o.metadata.namespace === namespace) return;
    }
    this.#commit(nsDef, "DELETED", ns, ns);
  }
}

/** A `/status` write: everything but status (and metadata) comes from the stored object. */
function statusOnly(old: KubeObject, obj: KubeObject): KubeObject {
  const next: KubeObject = { ...structuredClone(old), metadata: obj.metadata };
  if (obj.status === undefined) delete next.status;
  else next.status = obj.status;
  return next;
}

/** A main-resource write on a type with a status subresource keeps the stored status. */
function keepStatus(def: ResourceDef, old: KubeObject, obj: KubeObject): KubeObject {
  if (!def.status) return obj;
  const next: KubeObject = { ...obj };
  if (old.status === undefined) delete next.status;
  else next.status = structuredClone(old.status);
  return next;
}
