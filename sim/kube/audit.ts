/**
 * The emulator's audit log: every request with the attributes the apiserver's RBAC authorizer decides on
 * (verb, API group, resource, subresource, namespace, name), so a test can compare a client's traffic with
 * the Roles that should allow it.
 */
import type { Route } from "./routing.ts";

/** One request, as the authorizer sees it (`k8s.io/apiserver` `RequestInfo`). */
export interface AuditEntry {
  /** RBAC verb: get, list, watch, create, update, patch, delete, deletecollection; or the HTTP method. */
  readonly verb: string;
  /** True for `/api/...` and `/apis/...` resource requests; false for discovery, `/version`, `/openapi`. */
  readonly resourceRequest: boolean;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  /** Namespace from the URL, `""` when cluster-scoped or across all namespaces. */
  readonly namespace: string;
  /** Object name from the URL, or from `fieldSelector=metadata.name=<name>` on a list or watch. */
  readonly name: string;
  /** The path of a non-resource request (`/version`, `/apis`); `""` for resource requests. */
  readonly path: string;
  /** HTTP status of the answer; 0 while it is being served (watches until they end). */
  status: number;
}

const METHOD_VERBS: Readonly<Record<string, string>> = {
  POST: "create",
  PUT: "update",
  PATCH: "patch",
};

/** The single name a list or watch is narrowed to, as upstream's RequestInfo reads it from the selector. */
function selectedName(query: URLSearchParams): string {
  const terms = (query.get("fieldSelector") ?? "").split(",");
  const byName = terms.map((t) => /^metadata\.name==?(.+)$/.exec(t.trim())?.[1]).filter((n) => n);
  return byName.length === 1 ? byName[0] ?? "" : "";
}

/** The authorizer's view of one request; `verb` is the emulator's (`GET`, `WATCH`, `PATCH`...). */
export function auditEntryOf(method: string, verb: string, route: Route, url: URL): AuditEntry {
  if (route.kind !== "resource") {
    return {
      verb: method.toLowerCase(),
      resourceRequest: false,
      apiGroup: "",
      resource: "",
      subresource: "",
      namespace: "",
      name: "",
      path: url.pathname,
      status: 0,
    };
  }
  const named = route.name !== undefined;
  const rbacVerb = verb === "WATCH"
    ? "watch"
    : method === "GET"
    ? (named ? "get" : "list")
    : method === "DELETE"
    ? (named ? "delete" : "deletecollection")
    : METHOD_VERBS[method] ?? method.toLowerCase();
  const listing = rbacVerb === "list" || rbacVerb === "watch";
  return {
    verb: rbacVerb,
    resourceRequest: true,
    apiGroup: route.def.group,
    resource: route.def.plural,
    subresource: route.subresource ?? "",
    // A Namespace is its own namespace (`get namespaces "kube-system"` is in the namespace "kube-system"), as
    // upstream's RequestInfo reads `/namespaces/{name}`: a RoleBinding there may grant it.
    namespace: route.namespace ?? (route.def.key === "namespaces" ? route.name ?? "" : ""),
    name: route.name ?? (listing ? selectedName(url.searchParams) : ""),
    path: "",
    status: 0,
  };
}

/** Most entries kept; the distinct set below is kept whole. */
const MAX_ENTRIES = 20_000;

/** Every request the emulator received, in order (bounded), and the distinct ones (unbounded but small). */
export class AuditLog {
  #entries: AuditEntry[] = [];
  readonly #distinct = new Map<string, AuditEntry>();

  /** Records a request as it arrives; the caller sets `status` once it is answered. */
  record(entry: AuditEntry): AuditEntry {
    this.#entries.push(entry);
    if (this.#entries.length > MAX_ENTRIES) this.#entries = this.#entries.slice(-MAX_ENTRIES / 2);
    const key = auditKey(entry);
    if (!this.#distinct.has(key)) this.#distinct.set(key, entry);
    return entry;
  }

  /** The most recent requests, oldest first. */
  get entries(): readonly AuditEntry[] {
    return this.#entries;
  }

  /** One entry per distinct (verb, group, resource, subresource, namespace, name, path), first seen first. */
  distinct(): AuditEntry[] {
    return [...this.#distinct.values()];
  }

  /** Forgets everything. */
  reset(): void {
    this.#entries = [];
    this.#distinct.clear();
  }
}

/** The identity of a request for `distinct()`. */
export function auditKey(e: AuditEntry): string {
  return JSON.stringify([e.verb, e.apiGroup, e.resource, e.subresource, e.namespace, e.name, e.path]);
}
