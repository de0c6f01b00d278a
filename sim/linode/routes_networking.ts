/** `networking/reserved/ips` routes: reserve, list, view, retag and release reserved IPv4 addresses. */
import { json, readBody } from "./http.ts";
import { addressParam, listResponse, type Route, type RouteContext } from "./router.ts";

// Reserved IPs are newer than the reference's last complete spec (v4.208 has no such collection), so which
// fields filter is open; the sim keeps the ones its listing shows and Cloud Manager's filters use.
const RESERVED_FIELDS = new Set(["address", "region", "tags", "assigned_entity"]);

function ips(ctx: RouteContext) {
  return ctx.world.reservedIps;
}

/** The reserved IP routes. */
export const NETWORKING_ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: "networking/reserved/ips",
    handle: (ctx) => listResponse(ctx, ips(ctx).list(), RESERVED_FIELDS),
  },
  {
    method: "POST",
    path: "networking/reserved/ips",
    handle: async (ctx) => json(ips(ctx).reserve(await readBody(ctx.req))),
  },
  {
    method: "GET",
    path: "networking/reserved/ips/:address",
    handle: (ctx) => json(ips(ctx).get(addressParam(ctx, 0))),
  },
  {
    method: "PUT",
    path: "networking/reserved/ips/:address",
    handle: async (ctx) => json(ips(ctx).update(addressParam(ctx, 0), await readBody(ctx.req))),
  },
  {
    method: "DELETE",
    path: "networking/reserved/ips/:address",
    handle: (ctx) => (ips(ctx).delete(addressParam(ctx, 0)), json({})),
  },
];
