/**
 * Server-side printing: a read's result as a `meta.k8s.io` Table (what `kubectl get` asks for), or as
 * PartialObjectMetadata(List). Shapes follow apiserver's `transformResponseObject`.
 */
import type { Representation } from "./negotiate.ts";
import { apiVersionOf, isRecord, type KubeObject, type ResourceDef } from "./resources.ts";
import { badRequest, StatusError } from "./status.ts";
import { printerFor } from "./table_printers.ts";

/** What each row's `object` carries (`?includeObject=`). */
export type IncludeObject = "Metadata" | "Object" | "None";

/** Options of `toTable`. */
export interface TableOptions {
  version: "v1" | "v1beta1";
  includeObject: IncludeObject;
  /** Wall clock for AGE cells, in epoch ms. */
  nowMs: number;
}

/** Reads `includeObject`; an unknown value is the apiserver's 400. */
export function parseIncludeObject(query: URLSearchParams): IncludeObject {
  const value = query.get("includeObject") ?? "";
  if (value === "") return "Metadata";
  if (value === "Metadata" || value === "Object" || value === "None") return value;
  throw badRequest(
    `Unable to convert to Table as requested: includeObject: Invalid value: "${value}": ` +
      "must be 'Metadata', 'Object', 'None', or empty",
  );
}

function partial(obj: KubeObject, version: string): Record<string, unknown> {
  return { kind: "PartialObjectMetadata", apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

function rowObject(def: ResourceDef, obj: KubeObject, options: TableOptions): unknown {
  switch (options.includeObject) {
    case "Object":
      return { ...obj, apiVersion: apiVersionOf(def), kind: def.kind };
    case "Metadata":
      return partial(obj, options.version);
    case "None":
      // The apiserver's encoder writes an empty RawExtension as null rather than omitting it.
      return null;
  }
}

/** `ListMeta` of a list body, or the object's resourceVersion for a single object. */
function tableMeta(
  result: Record<string, unknown>,
  items: KubeObject[] | undefined,
): Record<string, unknown> {
  if (items === undefined) return { resourceVersion: (result as KubeObject).metadata.resourceVersion ?? "" };
  const meta = isRecord(result.metadata) ? result.metadata : {};
  const out: Record<string, unknown> = { resourceVersion: meta.resourceVersion ?? "" };
  if (meta.continue !== undefined) out.continue = meta.continue;
  if (meta.remainingItemCount !== undefined) out.remainingItemCount = meta.remainingItemCount;
  return out;
}

function listItems(result: Record<string, unknown>): KubeObject[] | undefined {
  return Array.isArray(result.items) ? result.items as KubeObject[] : undefined;
}

/** A list body (`{items}`) or one object as a Table with every column and one row per object. */
export function toTable(
  def: ResourceDef,
  result: Record<string, unknown>,
  options: TableOptions,
): Record<string, unknown> {
  const printer = printerFor(def);
  const items = listItems(result);
  const objects = items ?? [result as KubeObject];
  const rows = objects.map((obj) => {
    const row: Record<string, unknown> = { cells: printer.cells(obj, options.nowMs) };
    const conditions = printer.conditions?.(obj);
    if (conditions) row.conditions = conditions;
    row.object = rowObject(def, obj, options);
    return row;
  });
  return {
    kind: "Table",
    apiVersion: `meta.k8s.io/${options.version}`,
    metadata: tableMeta(result, items),
    columnDefinitions: printer.columns,
    rows: rows.length === 0 && printer.nullRowsWhenEmpty ? null : rows,
  };
}

function notAcceptable(message: string): StatusError {
  return new StatusError(406, "NotAcceptable", message);
}

/** A list as PartialObjectMetadataList or one object as PartialObjectMetadata; the other pairing is a 406. */
export function toPartialMetadata(
  def: ResourceDef,
  result: Record<string, unknown>,
  as: "PartialObjectMetadata" | "PartialObjectMetadataList",
  version: string,
): Record<string, unknown> {
  const items = listItems(result);
  if (as === "PartialObjectMetadata") {
    if (items) {
      throw notAcceptable(
        `you requested PartialObjectMetadata, but the requested object is a list (${def.kind}List)`,
      );
    }
    return partial(result as KubeObject, version);
  }
  if (!items) {
    throw notAcceptable(
      `you requested PartialObjectMetadataList, but the requested object is not a list (${def.kind})`,
    );
  }
  return {
    kind: "PartialObjectMetadataList",
    apiVersion: `meta.k8s.io/${version}`,
    metadata: tableMeta(result, items),
    // Built fresh upstream, so an empty list encodes as null.
    items: items.length === 0 ? null : items.map((o) => partial(o, version)),
  };
}

/** Applies a negotiated representation to a read's result (the body to write as JSON). */
export function represent(
  def: ResourceDef,
  result: Record<string, unknown>,
  chosen: Representation,
  context: { query: URLSearchParams; nowMs: number },
): Record<string, unknown> {
  switch (chosen.as) {
    case "object":
      return result;
    case "Table":
      return toTable(def, result, {
        version: chosen.version,
        includeObject: parseIncludeObject(context.query),
        nowMs: context.nowMs,
      });
    default:
      return toPartialMetadata(def, result, chosen.as, chosen.version);
  }
}

/** The per-event object renderer of a watch, or undefined for plain objects. */
export function watchRenderer(
  def: ResourceDef,
  chosen: Representation,
  context: { query: URLSearchParams; now: () => number },
): ((obj: KubeObject) => unknown) | undefined {
  if (chosen.as === "PartialObjectMetadata") return (obj) => partial(obj, chosen.version);
  // PartialObjectMetadataList cannot hold one event's object: upstream then sends the object unchanged.
  if (chosen.as !== "Table") return undefined;
  const includeObject = parseIncludeObject(context.query);
  let headers = true;
  return (obj) => {
    const table = toTable(def, obj, { version: chosen.version, includeObject, nowMs: context.now() });
    // Only the first event carries column definitions.
    if (!headers) table.columnDefinitions = null;
    headers = false;
    return table;
  };
}
