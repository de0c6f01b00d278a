/** `networking/firewalls` routes: firewalls, rules and devices. */
import { json, notFound, readBody } from "./http.ts";
import { listResponse, param, type Route, type RouteContext } from "./router.ts";

/** Fields a firewall list may be filtered on (also the Linode and NodeBalancer `/firewalls` lists). */
/** X-Filter fields of firewall lists: those the reference (v4.208) marks `x-linode-filterable`. */
export const FIREWALL_FIELDS = new Set(["created", "id", "label", "tags", "updated"]);
const DEVICE_FIELDS = new Set(["created", "id", "updated"]);

function fws(ctx: RouteContext) {
  return ctx.world.firewallStore;
}

/** The firewall routes. */
export const FIREWALL_ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: "networking/firewalls",
    handle: (ctx) => listResponse(ctx, fws(ctx).list(), FIREWALL_FIELDS),
  },
  {
    method: "POST",
    path: "networking/firewalls",
    handle: async (ctx) => json(fws(ctx).create(await readBody(ctx.req))),
  },
  { method: "GET", path: "networking/firewalls/:id", handle: (ctx) => json(fws(ctx).get(param(ctx, 0))) },
  {
    method: "PUT",
    path: "networking/firewalls/:id",
    handle: async (ctx) => json(fws(ctx).update(param(ctx, 0), await readBody(ctx.req))),
  },
  {
    method: "DELETE",
    path: "networking/firewalls/:id",
    handle: (ctx) => {
      if (!fws(ctx).delete(param(ctx, 0))) throw notFound();
      return json({});
    },
  },
  {
    method: "GET",
    path: "networking/firewalls/:id/rules",
    handle: (ctx) => json(fws(ctx).get(param(ctx, 0)).rules),
  },
  {
    method: "PUT",
    path: "networking/firewalls/:id/rules",
    handle: async (ctx) => json(fws(ctx).setRules(param(ctx, 0), await readBody(ctx.req))),
  },
  {
    method: "GET",
    path: "networking/firewalls/:id/devices",
    handle: (ctx) => listResponse(ctx, fws(ctx).devices(param(ctx, 0)), DEVICE_FIELDS),
  },
  {
    method: "POST",
    path: "networking/firewalls/:id/devices",
    handle: async (ctx) => json(fws(ctx).addDevice(param(ctx, 0), await readBody(ctx.req))),
  },
  {
    method: "GET",
    path: "networking/firewalls/:id/devices/:id",
    handle: (ctx) => json(fws(ctx).device(param(ctx, 0), param(ctx, 1))),
  },
  {
    method: "DELETE",
    path: "networking/firewalls/:id/devices/:id",
    handle: (ctx) => {
      fws(ctx).removeDevice(param(ctx, 0), param(ctx, 1));
      return json({});
    },
  },
];
