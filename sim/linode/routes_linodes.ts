/** `linode/instances` routes: instances, IPs, config profiles and their interfaces. */
import { updateConfigInterface } from "./config_ifaces.ts";
import { json, readBody } from "./http.ts";
import type { SimConfig } from "./instance_shape.ts";
import { linodeIps } from "./instance_ops.ts";
import { listResponse, param, type Route, type RouteContext } from "./router.ts";
import { FIREWALL_FIELDS } from "./routes_firewalls.ts";
import type { InstanceRecord } from "./store_instances.ts";

// X-Filter fields: those the reference (v4.208) marks `x-linode-filterable` on each collection's items; any
// other is a 400 "Cannot filter on ...", as the API answers. Nested ones (placement_group.label) are left out.
const INSTANCE_FIELDS = new Set(["group", "id", "image", "ipv4", "label", "region", "tags"]);
const CONFIG_FIELDS = new Set(["label"]);

function instance(ctx: RouteContext): InstanceRecord {
  return ctx.world.instances.require(param(ctx, 0));
}

function config(ctx: RouteContext): SimConfig {
  return ctx.world.instances.config(param(ctx, 0), param(ctx, 1));
}

/** The instance routes. */
export const LINODE_ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: "linode/instances",
    handle: (ctx) => listResponse(ctx, ctx.world.instances.list(), INSTANCE_FIELDS),
  },
  { method: "GET", path: "linode/instances/:id", handle: (ctx) => json(instance(ctx).linode) },
  {
    method: "GET",
    path: "linode/instances/:id/ips",
    handle: (ctx) => json(linodeIps(instance(ctx), ctx.world.vpcs)),
  },
  {
    method: "GET",
    path: "linode/instances/:id/configs",
    handle: (ctx) => listResponse(ctx, [instance(ctx).config], CONFIG_FIELDS),
  },
  { method: "GET", path: "linode/instances/:id/configs/:id", handle: (ctx) => json(config(ctx)) },
  {
    method: "GET",
    path: "linode/instances/:id/configs/:id/interfaces",
    // The API answers this one with a bare array, not a page.
    handle: (ctx) => json(config(ctx).interfaces),
  },
  {
    method: "GET",
    path: "linode/instances/:id/configs/:id/interfaces/:id",
    handle: (ctx) => json(ctx.world.instances.interface(param(ctx, 0), param(ctx, 1), param(ctx, 2))),
  },
  {
    method: "PUT",
    path: "linode/instances/:id/configs/:id/interfaces/:id",
    handle: async (ctx) => {
      const body = await readBody(ctx.req);
      const ids = { linodeId: param(ctx, 0), configId: param(ctx, 1), ifaceId: param(ctx, 2) };
      return json(updateConfigInterface(ctx.world.instances, ids, body));
    },
  },
  {
    method: "GET",
    path: "linode/instances/:id/firewalls",
    handle: (ctx) =>
      listResponse(
        ctx,
        ctx.world.firewallStore.firewallsOf("linode", instance(ctx).linode.id),
        FIREWALL_FIELDS,
      ),
  },
];
