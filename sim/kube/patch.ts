/** JSON merge patch (RFC 7386) and JSON patch (RFC 6902), as the apiserver applies them. */
import { isRecord } from "./resources.ts";
import { badRequest, StatusError } from "./status.ts";

/** Applies an RFC 7386 merge patch: objects merge recursively, `null` deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

interface Operation {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

/** A JSON patch that parsed but cannot be applied: 422, as the apiserver answers. */
function unprocessable(message: string): StatusError {
  return new StatusError(422, "Invalid", message);
}

function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw unprocessable(`invalid JSON pointer: "${pointer}"`);
  return pointer.slice(1).split("/").map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function parseOperations(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw badRequest("json patch must be an array of operations");
  return patch.map((op) => {
    if (!isRecord(op) || typeof op.op !== "string" || typeof op.path !== "string") {
      throw badRequest(`invalid json patch operation: ${JSON.stringify(op)}`);
    }
    return {
      op: op.op,
      path: op.path,
      value: op.value,
      from: typeof op.from === "string" ? op.from : undefined,
    };
  });
}

function arrayIndex(arr: unknown[], token: string, forAdd: boolean): number {
  if (forAdd && token === "-") return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw unprocessable(`invalid array index: "${token}"`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i === arr.length)) throw unprocessable(`array index out of bounds: ${i}`);
  return i;
}

/** Follows `tokens` from `doc`; the result is a live reference into `doc`. */
function walk(doc: unknown, tokens: readonly string[], path: string): unknown {
  let cur = doc;
  for (const token of tokens) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, token, false)];
    else if (isRecord(cur) && Object.hasOwn(cur, token)) cur = cur[token];
    else throw unprocessable(`doc is missing path: "${path}"`);
  }
  return cur;
}

/** Walks to the parent of the last token; the returned container is a live reference into `doc`. */
function resolveParent(doc: unknown, tokens: string[], path: string): [unknown, string] {
  return [walk(doc, tokens.slice(0, -1), path), tokens[tokens.length - 1]!];
}

function getAt(doc: unknown, path: string): unknown {
  return walk(doc, parsePointer(path), path);
}

function addAt(doc: unknown, path: string, value: unknown): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const [parent, last] = resolveParent(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true), 0, value);
  else if (isRecord(parent)) parent[last] = value;
  else throw unprocessable(`doc is missing path: "${path}"`);
  return doc;
}

/** Replaces the value at `path` where it is, so an object key or array element keeps its position. */
function replaceAt(doc: unknown, path: string, value: unknown): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const [parent, last] = resolveParent(doc, tokens, path);
  if (Array.isArray(parent)) parent[arrayIndex(parent, last, false)] = value;
  else if (isRecord(parent) && Object.hasOwn(parent, last)) parent[last] = value;
  else throw unprocessable(`doc is missing path: "${path}"`);
  return doc;
}

function removeAt(doc: unknown, path: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) throw unprocessable("cannot remove the whole document");
  const [parent, last] = resolveParent(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false), 1);
  else if (isRecord(parent) && Object.hasOwn(parent, last)) delete parent[last];
  else throw unprocessable(`unable to remove nonexistent key: ${last}: missing value`);
  return doc;
}

/** Deep equality of JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

function applyOperation(doc: unknown, op: Operation): unknown {
  switch (op.op) {
    case "add":
      return addAt(doc, op.path, structuredClone(op.value));
    case "remove":
      return removeAt(doc, op.path);
    case "replace":
      return replaceAt(doc, op.path, structuredClone(op.value));
    case "move": {
      const value = getAt(doc, op.from ?? "");
      return addAt(removeAt(doc, op.from ?? ""), op.path, value);
    }
    case "copy":
      return addAt(doc, op.path, structuredClone(getAt(doc, op.from ?? "")));
    case "test":
      if (!jsonEqual(getAt(doc, op.path), op.value)) {
        throw unprocessable(`testing value ${op.path} failed: test failed`);
      }
      return doc;
    default:
      throw badRequest(`Unexpected kind: ${op.op}`);
  }
}

/** Applies an RFC 6902 JSON patch to a copy of `target`; a failed `test` or missing path is a 422. */
export function applyJsonPatch(target: unknown, patch: unknown): unknown {
  let doc = structuredClone(target);
  for (const op of parseOperations(patch)) doc = applyOperation(doc, op);
  return doc;
}
