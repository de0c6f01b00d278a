/** The `X-Filter` header: field equality, `+and`/`+or`, comparison operators, `+order_by`/`+order`. */
import { ApiError, isRecord } from "./http.ts";

/** A compiled filter: a predicate plus the requested ordering. */
export interface CompiledFilter {
  match(item: unknown): boolean;
  orderBy?: string;
  order: "asc" | "desc";
}

type Test = (item: unknown) => boolean;

/** A refused filter: the API names the header as the field ("Cannot filter on foo", linodego's fixtures). */
function invalid(reason: string): ApiError {
  return new ApiError(400, [{ reason, field: "X-Filter" }]);
}

/** Reads a dotted path ("specs.vcpus") from an object. */
function valueAt(item: unknown, path: string): unknown {
  let current = item;
  for (const key of path.split(".")) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

function equals(actual: unknown, expected: unknown): boolean {
  // Array fields (tags, ipv4) match when any element is equal, as the API does.
  if (Array.isArray(actual)) return actual.some((a) => a === expected);
  // An id given as a string of digits matches the number: the Go CCM filters VPC IPs with
  // `{"subnet_id":"123"}`. Anything else (such as "1,2") matches nothing; the docs leave it open.
  if (typeof actual === "number" && typeof expected === "string" && /^\d+$/.test(expected)) {
    return actual === Number(expected);
  }
  return actual === expected;
}

function compare(op: string, actual: unknown, expected: unknown, field: string): boolean {
  if (typeof expected !== "number" && typeof expected !== "string") {
    throw invalid(`Operator ${op} on ${field} needs a number or a string`);
  }
  if (typeof actual !== typeof expected) return false;
  const a = actual as number | string;
  if (op === "+gt") return a > expected;
  if (op === "+lt") return a < expected;
  if (op === "+gte") return a >= expected;
  return a <= expected;
}

function contains(actual: unknown, expected: unknown, field: string): boolean {
  if (typeof expected !== "string") throw invalid(`Operator +contains on ${field} needs a string`);
  if (typeof actual === "string") return actual.includes(expected);
  if (Array.isArray(actual)) return actual.some((a) => typeof a === "string" && a.includes(expected));
  return false;
}

function operatorTest(field: string, op: string, operand: unknown): Test {
  const at = (item: unknown) => valueAt(item, field);
  switch (op) {
    case "+contains":
      return (item) => contains(at(item), operand, field);
    case "+neq":
      return (item) => !equals(at(item), operand);
    case "+gt":
    case "+lt":
    case "+gte":
    case "+lte":
      compare(op, operand, operand, field);
      return (item) => compare(op, at(item), operand, field);
    case "+or":
    case "+and": {
      if (!Array.isArray(operand)) throw invalid(`Operator ${op} on ${field} needs an array`);
      const tests = operand.map((v) => fieldTest(field, v));
      return op === "+or" ? (item) => tests.some((t) => t(item)) : (item) => tests.every((t) => t(item));
    }
    default:
      throw invalid(`Unknown filter operator ${op}`);
  }
}

function fieldTest(field: string, value: unknown, fields?: ReadonlySet<string>): Test {
  if (fields && !fields.has(field.split(".")[0] ?? "")) throw invalid(`Cannot filter on ${field}`);
  if (!isRecord(value)) {
    if (typeof value === "object" && value !== null) throw invalid(`Invalid filter value for ${field}`);
    return (item) => equals(valueAt(item, field), value);
  }
  const tests = Object.entries(value).map(([key, operand]) =>
    key.startsWith("+") ? operatorTest(field, key, operand) : fieldTest(`${field}.${key}`, operand)
  );
  return (item) => tests.every((t) => t(item));
}

function compile(node: unknown, fields: ReadonlySet<string>): Test {
  if (!isRecord(node)) throw invalid("Filter must be a JSON object");
  const tests: Test[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === "+order_by" || key === "+order") continue;
    if (key === "+and" || key === "+or") {
      if (!Array.isArray(value)) throw invalid(`${key} must be an array`);
      const parts = value.map((v) => compile(v, fields));
      tests.push(key === "+and" ? (i) => parts.every((t) => t(i)) : (i) => parts.some((t) => t(i)));
    } else if (key.startsWith("+")) {
      throw invalid(`Unknown filter operator ${key}`);
    } else {
      tests.push(fieldTest(key, value, fields));
    }
  }
  return (item) => tests.every((t) => t(item));
}

function readOrder(
  node: Record<string, unknown>,
  fields: ReadonlySet<string>,
): Omit<CompiledFilter, "match"> {
  const orderBy = node["+order_by"];
  const order = node["+order"] ?? "asc";
  if (order !== "asc" && order !== "desc") throw invalid("+order must be asc or desc");
  if (orderBy === undefined) return { order };
  if (typeof orderBy !== "string" || !fields.has(orderBy.split(".")[0] ?? "")) {
    throw invalid(`Cannot order by ${String(orderBy)}`);
  }
  return { orderBy, order };
}

/** Parses and compiles an `X-Filter` header; a malformed filter is a 400 like the API's. */
export function parseFilter(header: string | null, fields: ReadonlySet<string>): CompiledFilter {
  if (header === null || header.trim() === "") return { match: () => true, order: "asc" };
  let node: unknown;
  try {
    node = JSON.parse(header);
  } catch {
    throw invalid("The X-Filter header must be valid JSON");
  }
  if (!isRecord(node)) throw invalid("Filter must be a JSON object");
  return { match: compile(node, fields), ...readOrder(node, fields) };
}

/** Filters and orders items (stable; ties keep id order). */
export function applyFilter<T>(items: readonly T[], filter: CompiledFilter): T[] {
  const kept = items.filter((i) => filter.match(i));
  const orderBy = filter.orderBy;
  if (orderBy === undefined) return filter.order === "desc" ? kept.reverse() : kept;
  const sign = filter.order === "desc" ? -1 : 1;
  return kept.sort((x, y) => sign * compareValues(valueAt(x, orderBy), valueAt(y, orderBy)));
}

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return 1;
  if (b === undefined || b === null) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a) < String(b) ? -1 : 1;
}
