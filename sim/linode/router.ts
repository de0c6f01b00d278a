/** A small table router over path segments, plus the list helper every collection uses. */
import { applyFilter, parseFilter } from "./filter.ts";
import { ApiError, json, notFound } from "./http.ts";
import { paginate, parsePaging } from "./paging.ts";
import type { World } from "./world.ts";

/** What an API handler gets: the request, numeric path params in order, address params in order, and the world. */
export interface RouteContext {
  req: Request;
  url: URL;
  params: number[];
  addresses: string[];
  world: World;
}

/**
 * One route: `path` uses `:id` for numeric segments ("linode/instances/:id/configs") and `:address` for an
 * IP address segment ("networking/reserved/ips/:address").
 */
export interface Route<C = RouteContext> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  handle(ctx: C): Response | Promise<Response>;
}

interface Compiled<C> {
  route: Route<C>;
  segments: string[];
}

/** Matches method + path segments against a route table. */
export class Router<C = RouteContext> {
  #routes: Compiled<C>[];

  constructor(routes: readonly Route<C>[]) {
    this.#routes = routes.map((route) => ({ route, segments: route.path.split("/") }));
  }

  /** Finds the route for a request; throws the API's 404, or 405 when the path exists under another method. */
  match(
    method: string,
    segments: readonly string[],
  ): { route: Route<C>; params: number[]; addresses: string[] } {
    let pathMatched = false;
    for (const { route, segments: pattern } of this.#routes) {
      const found = matchSegments(pattern, segments);
      if (!found) continue;
      pathMatched = true;
      if (route.method === method) return { route, ...found };
    }
    throw pathMatched ? new ApiError(405, [{ reason: "Method Not Allowed" }]) : notFound();
  }
}

/** An IP address path segment: IPv4-looking or containing a colon (IPv6); validity is the handler's to judge. */
export const ADDRESS_SEGMENT = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:.%]*:[0-9a-fA-F:.%]*)$/;

function matchSegments(
  pattern: readonly string[],
  segments: readonly string[],
): { params: number[]; addresses: string[] } | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: number[] = [];
  const addresses: string[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] ?? "";
    const s = segments[i] ?? "";
    if (p === ":id") {
      if (!/^\d{1,15}$/.test(s)) return undefined;
      params.push(Number(s));
    } else if (p === ":address") {
      if (!ADDRESS_SEGMENT.test(s)) return undefined;
      addresses.push(decodeURIComponent(s));
    } else if (p !== s) {
      return undefined;
    }
  }
  return { params, addresses };
}

/** The n-th address path param (routes guarantee their count). */
export function addressParam(ctx: { addresses: readonly string[] }, index: number): string {
  const value = ctx.addresses[index];
  if (value === undefined) throw new ApiError(500, [{ reason: "Route parameter missing" }]);
  return value;
}

/** The n-th path param (routes guarantee their count). */
export function param(ctx: { params: readonly number[] }, index: number): number {
  const value = ctx.params[index];
  if (value === undefined) throw new ApiError(500, [{ reason: "Route parameter missing" }]);
  return value;
}

/** Filters (X-Filter), orders and pages a collection into the API's envelope. */
export function listResponse(
  ctx: RouteContext,
  items: readonly unknown[],
  fields: ReadonlySet<string>,
): Response {
  const paging = parsePaging(ctx.url);
  const filter = parseFilter(ctx.req.headers.get("x-filter"), fields);
  return json(paginate(applyFilter(items, filter), paging));
}
