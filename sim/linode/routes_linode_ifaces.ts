/** `linode/instances/{id}/interfaces` routes: Linode interfaces (`interface_generation: "linode"`). */
import { json, readBody } from "./http.ts";
import {
  createLinodeInterface,
  deleteLinodeInterface,
  interfaceSettings,
  linodeGenRecord,
  linodeInterface,
  updateLinodeInterface,
} from "./linode_iface_ops.ts";
import { param, type Route, type RouteContext } from "./router.ts";

function ids(ctx: RouteContext): { linodeId: number; ifaceId: number } {
  return { linodeId: param(ctx, 0), ifaceId: param(ctx, 1) };
}

/** The Linode interface routes. */
export const LINODE_IFACE_ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: "linode/instances/:id/interfaces",
    // Not a page: `{"interfaces": [...]}`, as api-v4's `LinodeInterfaces` and the spec's examples have it.
    handle: (ctx) => json({ interfaces: linodeGenRecord(ctx.world, param(ctx, 0)).interfaces }),
  },
  {
    method: "POST",
    path: "linode/instances/:id/interfaces",
    handle: async (ctx) => json(createLinodeInterface(ctx.world, param(ctx, 0), await readBody(ctx.req))),
  },
  {
    method: "GET",
    path: "linode/instances/:id/interfaces/settings",
    handle: (ctx) => json(interfaceSettings(linodeGenRecord(ctx.world, param(ctx, 0)))),
  },
  {
    method: "GET",
    path: "linode/instances/:id/interfaces/:id",
    handle: (ctx) => json(linodeInterface(linodeGenRecord(ctx.world, param(ctx, 0)), param(ctx, 1))),
  },
  {
    method: "PUT",
    path: "linode/instances/:id/interfaces/:id",
    handle: async (ctx) => json(updateLinodeInterface(ctx.world, ids(ctx), await readBody(ctx.req))),
  },
  {
    method: "DELETE",
    path: "linode/instances/:id/interfaces/:id",
    handle: (ctx) => (deleteLinodeInterface(ctx.world, ids(ctx)), json({})),
  },
];
