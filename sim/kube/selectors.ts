/** Label and field selectors, parsed once per request and matched against stored objects. */
import { isRecord, type KubeObject, type ResourceDef } from "./resources.ts";
import { badRequest } from "./status.ts";

type LabelOp = "=" | "!=" | "in" | "notin" | "exists" | "!";

interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

interface FieldRequirement {
  field: string;
  op: "=" | "!=";
  value: string;
}

/** A compiled selector: `matches(obj)` applies both the label and the field part. */
export interface Selector {
  readonly empty: boolean;
  matches(obj: KubeObject): boolean;
}

const KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

function checkKey(key: string, whole: string): string {
  if (!KEY.test(key) || key.length > 316) {
    throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${whole}"`);
  }
  return key;
}

function checkValue(value: string, whole: string): string {
  if (!VALUE.test(value) || value.length > 63) {
    throw badRequest(`unable to parse requirement: invalid label value: "${value}" in selector "${whole}"`);
  }
  return value;
}

function parseLabelTerm(term: string, whole: string): LabelRequirement {
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(term);
  if (set) {
    const values = set[3]!.split(",").map((v) => checkValue(v.trim(), whole));
    return { key: checkKey(set[1]!, whole), op: set[2] as LabelOp, values };
  }
  const eq = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
  if (eq) {
    const op = eq[2] === "!=" ? "!=" : "=";
    return { key: checkKey(eq[1]!, whole), op, values: [checkValue(eq[3]!.trim(), whole)] };
  }
  if (term.startsWith("!")) return { key: checkKey(term.slice(1).trim(), whole), op: "!", values: [] };
  return { key: checkKey(term, whole), op: "exists", values: [] };
}

/** Parses a `labelSelector` (`a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`); throws 400 on bad syntax. */
function parseLabelSelector(text: string | null | undefined): LabelRequirement[] {
  if (!text) return [];
  return splitTopLevel(text).map((term) => parseLabelTerm(term, text));
}

function matchLabel(req: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  switch (req.op) {
    case "=":
      return has && value === req.values[0];
    case "!=":
      return !has || value !== req.values[0];
    case "in":
      return has && req.values.includes(value!);
    case "notin":
      return !has || !req.values.includes(value!);
    case "exists":
      return has;
    case "!":
      return !has;
  }
}

/** Parses a `fieldSelector` against the fields the resource supports; throws 400 for unknown fields. */
function parseFieldSelector(def: ResourceDef, text: string | null | undefined): FieldRequirement[] {
  if (!text) return [];
  return splitTopLevel(text).map((term) => {
    const m = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    const field = m[1]!;
    const allowed = field === "metadata.name" || (def.namespaced && field === "metadata.namespace") ||
      def.fields.includes(field);
    if (!allowed) throw badRequest(`field label not supported: ${field}`);
    return { field, op: m[2] === "!=" ? "!=" : "=", value: m[3]!.trim() };
  });
}

/** Reads a dotted path as the string a field selector compares with (`""` when absent). */
function fieldValue(obj: KubeObject, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split(".")) cur = isRecord(cur) ? cur[part] : undefined;
  if (path === "source" && isRecord(cur)) cur = cur.component;
  if (typeof cur === "string") return cur;
  if (typeof cur === "number" || typeof cur === "boolean") return String(cur);
  return path === "spec.unschedulable" ? "false" : "";
}

/** Compiles both selectors into one predicate. */
export function compileSelector(
  def: ResourceDef,
  labelSelector: string | null | undefined,
  fieldSelector: string | null | undefined,
): Selector {
  const labels = parseLabelSelector(labelSelector);
  const fields = parseFieldSelector(def, fieldSelector);
  return {
    empty: labels.length === 0 && fields.length === 0,
    matches(obj: KubeObject): boolean {
      const objLabels = obj.metadata.labels ?? {};
      for (const req of labels) if (!matchLabel(req, objLabels)) return false;
      for (const req of fields) {
        const equal = fieldValue(obj, req.field) === req.value;
        if (equal !== (req.op === "=")) return false;
      }
      return true;
    },
  };
}
