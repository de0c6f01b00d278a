/**
 * Service manifests out of text: YAML or JSON (JSON is YAML), several documents per file, `List` objects
 * (`kind: List`, `ServiceList`, what `kubectl get -o yaml` prints) unwrapped. Other kinds are skipped. Pure.
 */
import type { V1Service } from "@kubernetes/client-node";
import { loadAll, YAMLException } from "js-yaml";

/** One Service found, and where: `svc.yaml` (document 2), or the cluster. */
export interface FoundService {
  readonly service: V1Service;
  /** `file` or `file#N` (1-based document number when the file holds several). */
  readonly where: string;
}

/** Services of a text, or why it cannot be read as manifests. */
export type ManifestResult =
  | { readonly ok: true; readonly services: readonly FoundService[]; readonly skipped: number }
  | { readonly ok: false; readonly problem: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The objects of one document: the document, or the items of a List. */
function objectsOf(doc: unknown): unknown[] {
  if (
    isRecord(doc) && typeof doc.kind === "string" && doc.kind.endsWith("List") && Array.isArray(doc.items)
  ) {
    return doc.items.flatMap(objectsOf);
  }
  return [doc];
}

/** A Service as the apiserver would take it: kind Service (apiVersion v1 or absent, as in List items). */
function asService(obj: unknown): V1Service | undefined {
  if (!isRecord(obj) || obj.kind !== "Service") return undefined;
  if (obj.apiVersion !== undefined && obj.apiVersion !== "v1") return undefined;
  return obj as V1Service;
}

/** Reads every Service out of `text` (named `source` in the result). */
export function readManifests(text: string, source: string): ManifestResult {
  let docs: unknown[];
  try {
    docs = loadAll(text).filter((d) => d !== null && d !== undefined);
  } catch (e) {
    const why = e instanceof YAMLException ? e.message.split("\n")[0] : String(e);
    return { ok: false, problem: `${source}: not YAML or JSON: ${why}` };
  }
  const services: FoundService[] = [];
  let skipped = 0;
  docs.forEach((doc, i) => {
    const where = docs.length > 1 ? `${source}#${i + 1}` : source;
    for (const obj of objectsOf(doc)) {
      const service = asService(obj);
      if (service) services.push({ service, where });
      else skipped++;
    }
  });
  return { ok: true, services, skipped };
}
