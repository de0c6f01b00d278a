/** HTTP handlers for resource routes: get, list, watch, create, update, patch, delete. */
import * as yaml from "js-yaml";
import { listResponse } from "./list.ts";
import { negotiate, type Representation } from "./negotiate.ts";
import { apiVersionOf, isRecord, type KubeObject } from "./resources.ts";
import type { ResourceRoute } from "./routing.ts";
import { compileSelector } from "./selectors.ts";
import { badRequest, notFound, StatusError } from "./status.ts";
import type { KubeStore, PatchType } from "./store.ts";
import { represent, watchRenderer } from "./table.ts";
import type { WatchHub } from "./watch.ts";

/** What resource handlers work on. */
export interface HandlerContext {
  store: KubeStore;
  watches: WatchHub;
}

const PATCH_TYPES: Record<string, PatchType> = {
  "application/json-patch+json": "json",
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
};

/** The headers the apiserver sends with JSON bodies and watch streams. */
const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-cache, private" };

/** A JSON response. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

async function readBody(req: Request, emptyAs?: unknown): Promise<unknown> {
  const text = await req.text();
  if (emptyAs !== undefined && text.trim() === "") return emptyAs;
  const type = req.headers.get("content-type") ?? "";
  try {
    if (type.includes("yaml") && !type.includes("apply-patch")) return yaml.load(text);
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(
      `the body of the request could not be decoded: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

function isDryRun(query: URLSearchParams): boolean {
  const dry = query.getAll("dryRun");
  if (dry.some((d) => d !== "All")) throw badRequest(`dryRun: Unsupported value: "${dry.join(",")}"`);
  return dry.length > 0;
}

function methodNotAllowed(): StatusError {
  return new StatusError(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
  );
}

function watch(
  ctx: HandlerContext,
  route: ResourceRoute,
  query: URLSearchParams,
  chosen: Representation,
): Response {
  let fieldSelector = query.get("fieldSelector");
  if (route.name !== undefined) {
    const byName = `metadata.name=${route.name}`;
    fieldSelector = fieldSelector ? `${fieldSelector},${byName}` : byName;
  }
  const timeout = Number(query.get("timeoutSeconds") ?? "");
  const stream = ctx.watches.open({
    def: route.def,
    namespace: route.namespace,
    selector: compileSelector(route.def, query.get("labelSelector"), fieldSelector),
    resourceVersion: query.get("resourceVersion") ?? undefined,
    allowBookmarks: query.get("allowWatchBookmarks") === "true",
    sendInitialEvents: query.get("sendInitialEvents") === "true",
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout * 1000 : undefined,
    render: watchRenderer(route.def, chosen, { query, now: () => ctx.store.now() }),
  });
  return new Response(stream, { status: 200, headers: JSON_HEADERS });
}

function deleteOptions(body: unknown): { uid?: string; resourceVersion?: string } {
  if (!isRecord(body) || !isRecord(body.preconditions)) return {};
  const p = body.preconditions;
  return {
    uid: typeof p.uid === "string" ? p.uid : undefined,
    resourceVersion: typeof p.resourceVersion === "string" ? p.resourceVersion : undefined,
  };
}

function deletedStatus(route: ResourceRoute, obj: KubeObject): Record<string, unknown> {
  const details: Record<string, unknown> = {
    name: obj.metadata.name,
    kind: route.def.plural,
    uid: obj.metadata.uid,
  };
  if (route.def.group !== "") details.group = route.def.group;
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details };
}

async function remove(ctx: HandlerContext, req: Request, route: ResourceRoute, query: URLSearchParams) {
  const body = await readBody(req, {});
  const result = ctx.store.deleteRaw(route.def, route.name!, {
    namespace: route.namespace,
    dryRun: isDryRun(query),
    ...deleteOptions(body),
  });
  if (result.deleted && !route.def.returnsDeleted) return json(deletedStatus(route, result.object));
  return json(result.object);
}

function removeCollection(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams): Response {
  const selector = compileSelector(route.def, query.get("labelSelector"), query.get("fieldSelector"));
  const targets = ctx.store.select(route.def, route.namespace, selector);
  const items = targets.map((o) =>
    ctx.store.deleteRaw(route.def, o.metadata.name ?? "", { namespace: o.metadata.namespace }).object
  );
  return json({
    kind: `${route.def.kind}List`,
    apiVersion: apiVersionOf(route.def),
    metadata: { resourceVersion: ctx.store.resourceVersion },
    items,
  });
}

async function write(ctx: HandlerContext, req: Request, route: ResourceRoute, query: URLSearchParams) {
  const subresource = route.subresource === "status" ? "status" : undefined;
  const target = {
    namespace: route.namespace,
    name: route.name,
    subresource,
    dryRun: isDryRun(query),
  } as const;
  if (req.method === "PUT") return json(ctx.store.updateRaw(route.def, await readBody(req), target));
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim();
  const patchType = PATCH_TYPES[type];
  if (!patchType) {
    throw new StatusError(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: ${
        Object.keys(PATCH_TYPES).join(", ")
      }`,
    );
  }
  return json(
    ctx.store.patchRaw(route.def, route.name!, await readBody(req), { ...target, type: patchType }),
  );
}

/** GET of an object or a list, or a watch, in the representation the `Accept` header negotiates. */
function read(
  ctx: HandlerContext,
  req: Request,
  route: ResourceRoute,
  query: URLSearchParams,
  verb: string,
): Response {
  // Like the apiserver: 406 before the read, request errors (404, 410) next, includeObject last.
  const chosen = negotiate(req.headers.get("accept"));
  if (verb === "WATCH") return watch(ctx, route, query, chosen);
  let result: Record<string, unknown>;
  if (route.name === undefined) result = listResponse(ctx.store, route, query);
  else {
    const obj = ctx.store.lookup(route.def, route.name, route.namespace);
    if (!obj) throw notFound(route.def, route.name);
    result = obj;
  }
  return json(represent(route.def, result, chosen, { query, nowMs: ctx.store.now() }));
}

/** Serves one resource request; StatusErrors propagate to the caller, which writes them out. */
export async function handleResource(
  ctx: HandlerContext,
  req: Request,
  route: ResourceRoute,
  query: URLSearchParams,
  verb: string,
): Promise<Response> {
  const { def, name, subresource } = route;
  if (subresource !== undefined && !(subresource === "status" && def.status)) {
    throw new StatusError(404, "NotFound", "the server could not find the requested resource");
  }
  if (req.method === "GET") return read(ctx, req, route, query, verb);
  if (name === undefined) {
    if (req.method === "POST" && (route.namespace !== undefined || !def.namespaced)) {
      const created = ctx.store.createRaw(def, await readBody(req), {
        namespace: route.namespace,
        dryRun: isDryRun(query),
      });
      return json(created, 201);
    }
    if (req.method === "DELETE") return removeCollection(ctx, route, query);
    throw methodNotAllowed();
  }
  switch (req.method) {
    case "PUT":
    case "PATCH":
      return await write(ctx, req, route, query);
    case "DELETE":
      if (subresource !== undefined) throw methodNotAllowed();
      return await remove(ctx, req, route, query);
    default:
      throw methodNotAllowed();
  }
}
