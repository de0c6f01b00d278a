/**
 * Strategic merge patch, with the patch strategies of the fields the emulated resources declare upstream
 * (`patchStrategy`/`patchMergeKey` struct tags). Lists without a strategy are replaced, like upstream.
 */
import { jsonEqual } from "./patch.ts";
import { isRecord } from "./resources.ts";
import { badRequest } from "./status.ts";

/** How one list field merges: by a key of its elements, or as a set of primitives (`key` undefined). */
export interface ListStrategy {
  key?: string;
}

/** Strategies every kind shares (ObjectMeta). */
export const COMMON: Record<string, ListStrategy> = {
  "metadata.finalizers": {},
  "metadata.ownerReferences": { key: "uid" },
};

const CONTAINER_LISTS: Record<string, ListStrategy> = {
  "spec.containers": { key: "name" },
  "spec.initContainers": { key: "name" },
  "spec.containers.ports": { key: "containerPort" },
  "spec.containers.env": { key: "name" },
  "spec.containers.volumeMounts": { key: "mountPath" },
  "spec.initContainers.env": { key: "name" },
  "spec.volumes": { key: "name" },
  "spec.imagePullSecrets": { key: "name" },
  "status.conditions": { key: "type" },
};

/** Patch strategies per kind: dotted field path (list elements are transparent) → strategy. */
export const STRATEGIES: Record<string, Record<string, ListStrategy>> = {
  // Upstream taints merge by key+effect; `key` is what the brief's fidelity needs and what most patches use.
  Node: {
    "spec.taints": { key: "key" },
    "spec.podCIDRs": {},
    "status.conditions": { key: "type" },
    // Upstream merges addresses by `type` even though a node can have several of one type: lossy on purpose.
    "status.addresses": { key: "type" },
  },
  Service: { "spec.ports": { key: "port" }, "status.conditions": { key: "type" } },
  Namespace: { "status.conditions": { key: "type" } },
  Pod: CONTAINER_LISTS,
  DaemonSet: Object.fromEntries(
    Object.entries(CONTAINER_LISTS).filter(([path]) => path.startsWith("spec.")).map(([path, s]) => [
      `spec.template.${path}`,
      s,
    ]),
  ),
};

const DELETE = Symbol("delete");

function strategyFor(kind: string, path: string[]): ListStrategy | undefined {
  const dotted = path.join(".");
  return STRATEGIES[kind]?.[dotted] ?? COMMON[dotted];
}

function withoutDirectives(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!k.startsWith("$")) out[k] = structuredClone(v);
  return out;
}

function sameKey(a: unknown, b: Record<string, unknown>, key: string): boolean {
  return isRecord(a) && jsonEqual(a[key], b[key]);
}

function mergeKeyedList(
  kind: string,
  original: unknown[],
  patch: unknown[],
  path: string[],
  key: string,
): unknown[] {
  if (patch.some((e) => isRecord(e) && e.$patch === "replace")) {
    return patch.filter((e) => !(isRecord(e) && e.$patch === "replace")).map((e) => structuredClone(e));
  }
  let result = original.map((e) => structuredClone(e));
  for (const element of patch) {
    if (!isRecord(element)) {
      throw badRequest(`unable to find api field in struct for the list ${path.join(".")}`);
    }
    if (!Object.hasOwn(element, key)) {
      throw badRequest(`map: ${JSON.stringify(element)} does not contain declared merge key: ${key}`);
    }
    if (element.$patch === "delete") {
      result = result.filter((e) => !sameKey(e, element, key));
      continue;
    }
    const index = result.findIndex((e) => sameKey(e, element, key));
    if (index >= 0) {
      const merged = mergeMap(kind, result[index], element, path);
      if (merged === DELETE) result.splice(index, 1);
      else result[index] = merged;
    } else {
      const added = mergeMap(kind, undefined, element, path);
      if (added !== DELETE) result.push(added);
    }
  }
  return result;
}

function mergeList(kind: string, original: unknown, patch: unknown[], path: string[]): unknown[] {
  const strategy = strategyFor(kind, path);
  if (!strategy) return patch.map((e) => (isRecord(e) ? withoutDirectives(e) : structuredClone(e)));
  const base = Array.isArray(original) ? original : [];
  if (strategy.key !== undefined) return mergeKeyedList(kind, base, patch, path, strategy.key);
  const result = [...base];
  for (const v of patch) if (!result.some((e) => jsonEqual(e, v))) result.push(structuredClone(v));
  return result;
}

function orderBy(kind: string, list: unknown, order: unknown, path: string[]): unknown {
  if (!Array.isArray(list) || !Array.isArray(order)) return list;
  const key = strategyFor(kind, path)?.key;
  const position = (e: unknown) =>
    order.findIndex((o) => key === undefined ? jsonEqual(o, e) : isRecord(o) && sameKey(e, o, key));
  const ranked = list.map((e, i) => ({ e, i, p: position(e) }));
  ranked.sort((a, b) => {
    if (a.p < 0 || b.p < 0) return a.p < 0 && b.p < 0 ? a.i - b.i : a.p < 0 ? 1 : -1;
    return a.p - b.p;
  });
  return ranked.map((r) => r.e);
}

function deleteFromPrimitiveList(result: Record<string, unknown>, field: string, values: unknown): void {
  if (!Array.isArray(values)) throw badRequest("invalid patch: $deleteFromPrimitiveList must be a list");
  const current = result[field];
  if (Array.isArray(current)) result[field] = current.filter((e) => !values.some((v) => jsonEqual(v, e)));
}

function mergeMap(
  kind: string,
  original: unknown,
  patch: Record<string, unknown>,
  path: string[],
): Record<string, unknown> | typeof DELETE {
  if (patch.$patch === "delete") return DELETE;
  if (patch.$patch === "replace") return withoutDirectives(patch);
  if (patch.$patch !== undefined && patch.$patch !== "merge") {
    throw badRequest(`Unknown patch type: ${String(patch.$patch)} in map: ${JSON.stringify(patch)}`);
  }
  const result: Record<string, unknown> = isRecord(original) ? { ...original } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith("$deleteFromPrimitiveList/")) {
      deleteFromPrimitiveList(result, key.slice("$deleteFromPrimitiveList/".length), value);
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith("$")) continue;
    const fieldPath = [...path, key];
    if (value === null) delete result[key];
    else if (isRecord(value)) {
      const merged = mergeMap(kind, result[key], value, fieldPath);
      if (merged === DELETE) delete result[key];
      else result[key] = merged;
    } else if (Array.isArray(value)) result[key] = mergeList(kind, result[key], value, fieldPath);
    else result[key] = value;
  }
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith("$setElementOrder/")) continue;
    const field = key.slice("$setElementOrder/".length);
    if (result[field] !== undefined) result[field] = orderBy(kind, result[field], value, [...path, field]);
  }
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) {
    for (const k of Object.keys(result)) {
      if (!retain.includes(k)) delete result[k];
    }
  }
  return result;
}

/** Applies a strategic merge patch to `original` (an object of `kind`); throws 400 on malformed directives. */
export function applyStrategicPatch(kind: string, original: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) throw badRequest("strategic merge patch must be a JSON object");
  const merged = mergeMap(kind, original, patch, []);
  return merged === DELETE ? {} : merged;
}
