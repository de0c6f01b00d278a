/**
 * A minimal OpenAPI v3 surface: enough for kubectl 1.32 to see that the server validates fields itself
 * (`fieldValidation` on PATCH) and to compute strategic merge patches for `apply` from the patch extensions.
 * `/openapi/v2` stays a 404: kubectl only accepts it as protobuf and falls back without it.
 */
import { apiVersionOf, type ResourceDef, RESOURCES } from "./resources.ts";
import { COMMON, type ListStrategy, STRATEGIES } from "./strategic.ts";

type Schema = Record<string, unknown>;

/**
 * Strategic merge is served but not advertised here: kubectl then builds apply patches from its compiled-in
 * Go types (upstream's exact patch strategies) instead of from this schema, which only lists the merge lists.
 */
const PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json"];

function gvPath(def: ResourceDef): string {
  return def.group === "" ? `api/${def.version}` : `apis/${def.group}/${def.version}`;
}

function schemaName(def: ResourceDef): string {
  const group = def.group === "" ? "core" : def.group.split(".")[0];
  return `io.k8s.api.${group}.${def.version}.${def.kind}`;
}

function gvk(def: ResourceDef): Schema {
  return { group: def.group, version: def.version, kind: def.kind };
}

/** Builds nested object schemas carrying the patch-strategy extensions of the dotted paths. */
function schemaFor(strategies: Record<string, ListStrategy>): Schema {
  const root: Schema = { type: "object", properties: {} };
  for (const [dotted, strategy] of Object.entries(strategies)) {
    let node = root;
    const parts = dotted.split(".");
    parts.forEach((part, i) => {
      const props = (node.properties ??= {}) as Record<string, Schema>;
      if (i === parts.length - 1) {
        const list: Schema = props[part] ??
          { type: "array", items: { type: strategy.key ? "object" : "string" } };
        list["x-kubernetes-patch-strategy"] = "merge";
        if (strategy.key) list["x-kubernetes-patch-merge-key"] = strategy.key;
        props[part] = list;
        return;
      }
      const existing = props[part];
      if (existing?.type === "array") node = existing.items as Schema;
      else node = props[part] ??= { type: "object", properties: {} };
    });
  }
  return root;
}

function operations(def: ResourceDef, methods: string[], bodyTypes?: string[]): Schema {
  const ops: Schema = {};
  for (const method of methods) {
    const op: Schema = {
      operationId: `${method}${def.kind}`,
      "x-kubernetes-group-version-kind": gvk(def),
      parameters: [{ name: "fieldValidation", in: "query", schema: { type: "string", uniqueItems: true } }],
      responses: { "200": { description: "OK" } },
    };
    const types = method === "patch" ? bodyTypes : ["application/json"];
    if (method !== "get" && method !== "delete" && types) {
      op.requestBody = {
        content: Object.fromEntries(
          types.map((t) => [t, { schema: { $ref: `#/components/schemas/${schemaName(def)}` } }]),
        ),
      };
    }
    ops[method] = op;
  }
  return ops;
}

/** `GET /openapi/v3`: the index of group-version documents. */
export function openApiIndex(): Schema {
  const paths: Record<string, Schema> = {};
  for (const path of new Set(RESOURCES.map(gvPath))) {
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hashOf(groupVersionDoc(path) ?? {})}` };
  }
  return { paths };
}

/** `GET /openapi/v3/<api/v1 | apis/group/version>`, or undefined for an unknown one. */
export function groupVersionDoc(path: string): Schema | undefined {
  const defs = RESOURCES.filter((d) => gvPath(d) === path);
  if (defs.length === 0) return undefined;
  const paths: Record<string, Schema> = {};
  const schemas: Record<string, Schema> = {};
  for (const def of defs) {
    const base = `/${gvPath(def)}${def.namespaced ? "/namespaces/{namespace}" : ""}/${def.plural}`;
    paths[base] = operations(def, ["get", "post"]);
    paths[`${base}/{name}`] = operations(def, ["get", "put", "patch", "delete"], PATCH_TYPES);
    if (def.status) paths[`${base}/{name}/status`] = operations(def, ["get", "put", "patch"], PATCH_TYPES);
    const schema = schemaFor({ ...COMMON, ...(STRATEGIES[def.kind] ?? {}) });
    const props = schema.properties as Record<string, Schema>;
    props.apiVersion = { type: "string" };
    props.kind = { type: "string" };
    schema["x-kubernetes-group-version-kind"] = [gvk(def)];
    schema.description = `${def.kind} (${apiVersionOf(def)}), as served by the emulator`;
    schemas[schemaName(def)] = schema;
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.32.0-sim" },
    paths,
    components: { schemas },
  };
}

function hashOf(value: unknown): string {
  let h = 0xcbf29ce484222325n;
  for (const ch of JSON.stringify(value)) {
    h = ((h ^ BigInt(ch.charCodeAt(0))) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).toUpperCase().padStart(16, "0");
}
