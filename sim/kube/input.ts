/** Turning a request body into a stored-object candidate: kind, apiVersion, name and namespace checks. */
import { jsonEqual } from "./patch.ts";
import { apiVersionOf, isRecord, type KubeObject, type ResourceDef } from "./resources.ts";
import { badRequest } from "./status.ts";

/** Where a write is addressed: the URL's namespace and name, when the request had them. */
export interface Target {
  namespace?: string;
  name?: string;
}

/** Checks and copies a request body: wrong kind/apiVersion or a name/namespace mismatch is a 400. */
export function normalizeInput(def: ResourceDef, input: unknown, target: Target): KubeObject {
  if (!isRecord(input)) {
    throw badRequest("the body of the request was in an unknown format - expected an object");
  }
  const obj = structuredClone(input) as Record<string, unknown>;
  const apiVersion = apiVersionOf(def);
  if (obj.kind !== undefined && obj.kind !== "" && obj.kind !== def.kind) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${def.kind}): kind "${
        String(obj.kind)
      }" is not ${def.kind}`,
    );
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== "" && obj.apiVersion !== apiVersion) {
    throw badRequest(
      `the API version in the data (${
        String(obj.apiVersion)
      }) does not match the expected API version (${apiVersion})`,
    );
  }
  if (obj.metadata !== undefined && !isRecord(obj.metadata)) throw badRequest("metadata must be an object");
  const metadata = isRecord(obj.metadata) ? obj.metadata : {};
  const out: KubeObject = { ...obj, apiVersion, kind: def.kind, metadata };
  reconcileNamespace(def, out, target.namespace);
  if (target.name !== undefined) {
    if (metadata.name === undefined || metadata.name === "") metadata.name = target.name;
    else if (metadata.name !== target.name) {
      throw badRequest(
        `the name of the object (${
          String(metadata.name)
        }) does not match the name on the URL (${target.name})`,
      );
    }
  }
  if (metadata.name !== undefined && typeof metadata.name !== "string") {
    throw badRequest("metadata.name must be a string");
  }
  return out;
}

function reconcileNamespace(def: ResourceDef, obj: KubeObject, urlNamespace: string | undefined): void {
  const bodyNamespace = obj.metadata.namespace;
  if (!def.namespaced) {
    delete obj.metadata.namespace;
    return;
  }
  if (
    urlNamespace !== undefined && bodyNamespace !== undefined && bodyNamespace !== "" &&
    bodyNamespace !== urlNamespace
  ) {
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  obj.metadata.namespace = urlNamespace ?? (bodyNamespace || "default");
}

/** Metadata only the server sets; copied from the stored object on every update. */
const SYSTEM_META = [
  "uid",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "generation",
];

/** Copies server-owned metadata from the stored object onto an update candidate. */
export function carrySystemMeta(next: KubeObject, old: KubeObject): void {
  for (const key of SYSTEM_META) {
    if (old.metadata[key] === undefined) delete next.metadata[key];
    else next.metadata[key] = old.metadata[key];
  }
  delete next.metadata.managedFields;
}

/** Clears server-owned metadata on a create candidate. */
export function clearSystemMeta(obj: KubeObject): void {
  for (const key of [...SYSTEM_META, "resourceVersion", "managedFields", "selfLink"]) {
    delete obj.metadata[key];
  }
}

/** True when anything but metadata (and status, for resources with a status subresource) differs. */
export function specChanged(def: ResourceDef, a: KubeObject, b: KubeObject): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    if (key === "metadata" || key === "apiVersion" || key === "kind" || (def.status && key === "status")) {
      continue;
    }
    if (!jsonEqual(a[key], b[key])) return true;
  }
  return false;
}

/** True when two objects are equal apart from resourceVersion (a no-op write upstream skips). */
export function sameIgnoringVersion(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const metadata = { ...o.metadata };
    delete metadata.resourceVersion;
    return { ...o, metadata };
  };
  return jsonEqual(strip(a), strip(b));
}

/** An RFC 3339 timestamp with second precision, as metav1.Time serialises. */
export function rfc3339(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, "Z");
}

const NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

/** `generateName` + 5 random characters from upstream's alphabet. */
export function generatedName(prefix: string): string {
  let suffix = "";
  for (let i = 0; i < 5; i++) {
    suffix += NAME_SUFFIX_ALPHABET[Math.floor(Math.random() * NAME_SUFFIX_ALPHABET.length)];
  }
  return prefix + suffix;
}
