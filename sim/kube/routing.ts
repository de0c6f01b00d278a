/** URL → resource route, and the `VERB /route/{template}` key that counters and faults use. */
import { resourceByPath, type ResourceDef } from "./resources.ts";

/** A request for a resource collection, object or subresource. */
export interface ResourceRoute {
  kind: "resource";
  def: ResourceDef;
  /** Namespace from the URL; undefined for cluster-scoped resources and all-namespace collections. */
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  /** Legacy `/watch/` path prefix. */
  watchPath: boolean;
  template: string;
}

/** Any other path: discovery, version, openapi, health, or unknown. */
export interface OtherRoute {
  kind: "other";
  template: string;
}

/** A parsed request path. */
export type Route = ResourceRoute | OtherRoute;

/** Parses `/api/v1/...` and `/apis/<group>/<version>/...`; anything else is an `other` route. */
export function parseRoute(path: string): Route {
  const segs = path.split("/").filter((s) => s !== "").map(decodeURIComponent);
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (segs[0] === "api") {
    [group, version, rest] = ["", segs[1], segs.slice(2)];
  } else if (segs[0] === "apis") {
    [group, version, rest] = [segs[1] ?? "", segs[2], segs.slice(3)];
  } else return { kind: "other", template: path };
  if (version === undefined || rest.length === 0) return { kind: "other", template: path };
  let template = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
  const watchPath = rest[0] === "watch";
  if (watchPath) rest = rest.slice(1);
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3 && resourceByPath(group, version, rest[2]!)?.namespaced) {
    namespace = rest[1];
    rest = rest.slice(2);
    template += "/namespaces/{namespace}";
  }
  const def = resourceByPath(group, version, rest[0]!);
  if (!def || rest.length > 3) return { kind: "other", template: path };
  template += `/${def.plural}`;
  const name = rest[1];
  const subresource = rest[2];
  if (name !== undefined) template += "/{name}";
  if (subresource !== undefined) template += `/${subresource}`;
  if (def.namespaced && namespace === undefined && name !== undefined) {
    return { kind: "other", template: path };
  }
  return { kind: "resource", def, namespace, name, subresource, watchPath, template };
}

/** The verb used in counter keys: `WATCH` for watches, otherwise the HTTP method. */
export function verbOf(method: string, route: Route, query: URLSearchParams): string {
  if (route.kind !== "resource" || method !== "GET") return method;
  const watch = query.get("watch");
  if (route.watchPath || watch === "true" || watch === "1") return "WATCH";
  return "GET";
}
