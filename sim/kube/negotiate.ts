/**
 * `Accept` negotiation for resource reads, after apiserver's `negotiation` package: the first acceptable
 * clause (by q, then specificity, then order) wins; `as=Table;g=meta.k8s.io;v=v1` asks for server-side
 * printing; a clause the server cannot satisfy is skipped, and nothing acceptable is a 406.
 */
import { StatusError } from "./status.ts";

/** A conversion the client asked for with `as=`; `g`/`v` are checked before one is returned. */
export type TransformKind = "Table" | "PartialObjectMetadata" | "PartialObjectMetadataList";

/** What a read answers with: the object(s) as stored, or a `meta.k8s.io` transformation of them. */
export type Representation =
  | { as: "object" }
  | { as: TransformKind; version: "v1" | "v1beta1" };

/** The serializers kube-apiserver offers; the emulator writes JSON for all of them, as it always has. */
const SERIALIZERS = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"] as const;

interface Clause {
  type: string;
  subtype: string;
  q: number;
  params: Map<string, string>;
}

function parseClause(text: string): Clause | undefined {
  const [range = "", ...rest] = text.split(";").map((p) => p.trim());
  const [type, subtype] = range.split("/");
  if (!type || !subtype) return undefined;
  const params = new Map<string, string>();
  let q = 1;
  for (const p of rest) {
    const eq = p.indexOf("=");
    if (eq < 0) continue;
    const key = p.slice(0, eq).trim();
    const value = p.slice(eq + 1).trim();
    if (key === "q") q = Number(value);
    else params.set(key, value);
  }
  return Number.isNaN(q) ? undefined : { type, subtype, q, params };
}

/** Clauses best first: higher q, then concrete types before wildcards; ties keep their order. */
function parseAccept(header: string): Clause[] {
  const clauses = header.split(",").map(parseClause).filter((c): c is Clause => c !== undefined);
  const rank = (c: Clause) => (c.type === "*" ? 2 : 0) + (c.subtype === "*" ? 1 : 0);
  return clauses.map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.q - a.c.q || rank(a.c) - rank(b.c) || a.i - b.i)
    .map(({ c }) => c);
}

function matches(clause: Clause, serializer: string): boolean {
  const [type, subtype] = serializer.split("/");
  if (clause.type === "*" && clause.subtype === "*") return true;
  return clause.type === type && (clause.subtype === subtype || clause.subtype === "*");
}

/** The representation a clause asks of a serializer, or undefined when the server cannot give it. */
function representation(clause: Clause, serializer: string): Representation | undefined {
  const as = clause.params.get("as");
  const g = clause.params.get("g");
  const v = clause.params.get("v");
  if (as === undefined && g === undefined && v === undefined) return { as: "object" };
  if (g !== "meta.k8s.io" || (v !== "v1" && v !== "v1beta1")) return undefined;
  if (as === "Table") {
    // Tables are JSON or YAML only.
    return serializer === "application/vnd.kubernetes.protobuf" ? undefined : { as, version: v };
  }
  if (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList") return { as, version: v };
  return undefined;
}

/** Picks the representation for a GET, list or watch; throws a 406 Status when nothing is acceptable. */
export function negotiate(accept: string | null): Representation {
  if (accept === null || accept.trim() === "") return { as: "object" };
  for (const clause of parseAccept(accept)) {
    for (const serializer of SERIALIZERS) {
      if (!matches(clause, serializer)) continue;
      const chosen = representation(clause, serializer);
      if (chosen) return chosen;
    }
  }
  throw new StatusError(
    406,
    "NotAcceptable",
    `only the following media types are accepted: ${SERIALIZERS.join(", ")}`,
  );
}
