/** `nodebalancers` routes: NodeBalancers, configs, config nodes, rebuild and firewalls. */
import { fieldError, json, notFound, readBody } from "./http.ts";
import { listResponse, param, type Route, type RouteContext } from "./router.ts";
import { FIREWALL_FIELDS } from "./routes_firewalls.ts";

const NB_FIELDS = new Set([
  "id",
  "label",
  "region",
  "tags",
  "ipv4",
  "ipv6",
  "hostname",
  "created",
  "updated",
]);
const CONFIG_FIELDS = new Set(["id", "port", "protocol", "algorithm", "stickiness", "check"]);
const NODE_FIELDS = new Set(["id", "label", "address", "mode", "status", "weight"]);

async function createNodeBalancer(ctx: RouteContext): Promise<Response> {
  const body = await readBody(ctx.req);
  const firewallId = body.firewall_id;
  if (firewallId !== undefined && firewallId !== null) {
    if (typeof firewallId !== "number" || !ctx.world.firewallStore.list().some((f) => f.id === firewallId)) {
      throw fieldError("firewall_id", "Firewall not found");
    }
  }
  const nb = ctx.world.nodeBalancerStore.create(body);
  if (typeof firewallId === "number") {
    ctx.world.firewallStore.addDevice(firewallId, { id: nb.id, type: "nodebalancer" });
  }
  return json(nb);
}

function nbs(ctx: RouteContext) {
  return ctx.world.nodeBalancerStore;
}

/** The NodeBalancer routes. */
export const NODEBALANCER_ROUTES: readonly Route[] = [
  { method: "GET", path: "nodebalancers", handle: (ctx) => listResponse(ctx, nbs(ctx).list(), NB_FIELDS) },
  { method: "POST", path: "nodebalancers", handle: createNodeBalancer },
  { method: "GET", path: "nodebalancers/:id", handle: (ctx) => json(nbs(ctx).get(param(ctx, 0))) },
  {
    method: "PUT",
    path: "nodebalancers/:id",
    handle: async (ctx) => json(nbs(ctx).update(param(ctx, 0), await readBody(ctx.req))),
  },
  {
    method: "DELETE",
    path: "nodebalancers/:id",
    handle: (ctx) => {
      if (!ctx.world.deleteNodeBalancer(param(ctx, 0))) throw notFound();
      return json({});
    },
  },
  {
    method: "GET",
    path: "nodebalancers/:id/configs",
    handle: (ctx) => listResponse(ctx, nbs(ctx).configs(param(ctx, 0)), CONFIG_FIELDS),
  },
  {
    method: "POST",
    path: "nodebalancers/:id/configs",
    handle: async (ctx) => json(nbs(ctx).createConfig(param(ctx, 0), await readBody(ctx.req))),
  },
  {
    method: "GET",
    path: "nodebalancers/:id/configs/:id",
    handle: (ctx) => json(nbs(ctx).config(param(ctx, 0), param(ctx, 1))),
  },
  {
    method: "PUT",
    path: "nodebalancers/:id/configs/:id",
    handle: async (ctx) => json(nbs(ctx).updateConfig(param(ctx, 0), param(ctx, 1), await readBody(ctx.req))),
  },
  {
    method: "DELETE",
    path: "nodebalancers/:id/configs/:id",
    handle: (ctx) => {
      nbs(ctx).deleteConfig(param(ctx, 0), param(ctx, 1));
      return json({});
    },
  },
  {
    method: "POST",
    path: "nodebalancers/:id/configs/:id/rebuild",
    handle: async (ctx) =>
      json(nbs(ctx).rebuildConfig(param(ctx, 0), param(ctx, 1), await readBody(ctx.req))),
  },
  {
    method: "GET",
    path: "nodebalancers/:id/configs/:id/nodes",
    handle: (ctx) => listResponse(ctx, nbs(ctx).nodes(param(ctx, 0), param(ctx, 1)), NODE_FIELDS),
  },
  {
    method: "POST",
    path: "nodebalancers/:id/configs/:id/nodes",
    handle: async (ctx) => json(nbs(ctx).createNode(param(ctx, 0), param(ctx, 1), await readBody(ctx.req))),
  },
  {
    method: "GET",
    path: "nodebalancers/:id/configs/:id/nodes/:id",
    handle: (ctx) => json(nbs(ctx).node(param(ctx, 0), param(ctx, 1), param(ctx, 2))),
  },
  {
    method: "PUT",
    path: "nodebalancers/:id/configs/:id/nodes/:id",
    handle: async (ctx) =>
      json(nbs(ctx).updateNode(param(ctx, 0), param(ctx, 1), param(ctx, 2), await readBody(ctx.req))),
  },
  {
    method: "DELETE",
    path: "nodebalancers/:id/configs/:id/nodes/:id",
    handle: (ctx) => {
      nbs(ctx).deleteNode(param(ctx, 0), param(ctx, 1), param(ctx, 2));
      return json({});
    },
  },
  {
    method: "GET",
    path: "nodebalancers/:id/firewalls",
    handle: (ctx) => {
      const id = nbs(ctx).get(param(ctx, 0)).id;
      return listResponse(ctx, ctx.world.firewallStore.firewallsOf("nodebalancer", id), FIREWALL_FIELDS);
    },
  },
];
