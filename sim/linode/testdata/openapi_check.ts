/**
 * A small checker of values against OpenAPI 3.0 schemas (type, nullable, enum, properties, required, items,
 * allOf/oneOf/anyOf, additionalProperties: false): enough for the reference's response schemas, which hold
 * no `$ref`. Formats and string patterns are not checked.
 */

/** The part of an OpenAPI schema object the checker reads. */
export interface Schema {
  type?: string;
  nullable?: boolean;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  additionalProperties?: boolean | Schema;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function typeErrors(schema: Schema, value: unknown, path: string): string[] | undefined {
  const t = schema.type;
  const ok = t === undefined ||
    (t === "integer" && Number.isInteger(value)) ||
    (t === "number" && typeof value === "number") ||
    (t === "string" && typeof value === "string") ||
    (t === "boolean" && typeof value === "boolean") ||
    (t === "array" && Array.isArray(value)) ||
    (t === "object" && isObject(value));
  return ok ? undefined : [`${path}: expected ${t}, got ${JSON.stringify(value)}`];
}

function objectErrors(schema: Schema, value: Record<string, unknown>, path: string, open: boolean): string[] {
  const errors: string[] = [];
  for (const key of schema.required ?? []) {
    if (!(key in value)) errors.push(`${path}.${key}: required, missing`);
  }
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    if (key in value) errors.push(...schemaErrors(sub, value[key], `${path}.${key}`));
  }
  if (!open && schema.additionalProperties === false && schema.properties) {
    for (const key of Object.keys(value)) {
      if (!(key in schema.properties)) errors.push(`${path}.${key}: not in the schema`);
    }
  }
  return errors;
}

function branchErrors(branches: Schema[], value: unknown, path: string, kind: string): string[] {
  const results = branches.map((b) => schemaErrors(b, value, path));
  if (results.some((r) => r.length === 0)) return [];
  const closest = results.reduce((a, b) => (b.length < a.length ? b : a));
  return [`${path}: matches none of ${kind} (closest: ${closest.join("; ")})`];
}

/** Every way `value` breaks `schema`, as `path: problem` lines; empty when it conforms. */
export function schemaErrors(schema: Schema, value: unknown, path = "$", open = false): string[] {
  if (value === null) {
    return schema.nullable || schema.type === undefined ? [] : [`${path}: null, not nullable`];
  }
  const errors = [
    ...(schema.allOf ?? []).flatMap((s) => schemaErrors(s, value, path, true)),
    ...(schema.oneOf ? branchErrors(schema.oneOf, value, path, "oneOf") : []),
    ...(schema.anyOf ? branchErrors(schema.anyOf, value, path, "anyOf") : []),
  ];
  const wrongType = typeErrors(schema, value, path);
  if (wrongType) return [...errors, ...wrongType];
  if (schema.enum && !schema.enum.includes(value)) {
    errors.push(`${path}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`);
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((v, i) => errors.push(...schemaErrors(schema.items as Schema, v, `${path}[${i}]`)));
  }
  if (isObject(value)) errors.push(...objectErrors(schema, value, path, open || schema.allOf !== undefined));
  return errors;
}
