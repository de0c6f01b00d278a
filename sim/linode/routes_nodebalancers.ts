/** `nodebalancers` routes: NodeBalancers, configs, config nodes, rebuild, VPC configs and firewalls. */
import { json, notFound, readBody } from "./http.ts";
import * as cfg from "./nb_configs.ts";
import type { NbRecord } from "./nb_records.ts";
import { listResponse, param, type Route, type RouteContext } from "./router.ts";
import { FIREWALL_FIELDS } from "./routes_firewalls.ts";

// X-Filter fields: those the reference (v4.208) marks `x-linode-filterable` on each collection's items (none
// on configs, nodes and VPC configs); any other is a 400 "Cannot filter on ...", as the API answers.
const NB_FIELDS = new Set(["ipv4", "label", "region", "tags"]);
const CONFIG_FIELDS = new Set<string>();
const NODE_FIELDS = new Set<string>();
const VPC_FIELDS = new Set<string>();

function nbs(ctx: RouteContext) {
  return ctx.world.nodeBalancerStore;
}

/** The NodeBalancer of the first path parameter, or a 404. */
function rec(ctx: RouteContext): NbRecord {
  return nbs(ctx).require(param(ctx, 0));
}

function vpcList(purpose?: "backend" | "frontend"): Route["handle"] {
  return (ctx) =>
    listResponse(ctx, rec(ctx).vpcs.filter((v) => !purpose || v.purpose === purpose), VPC_FIELDS);
}

const NB_ROUTES: readonly Route[] = [
  { method: "GET", path: "nodebalancers", handle: (ctx) => listResponse(ctx, nbs(ctx).list(), NB_FIELDS) },
  {
    method: "POST",
    path: "nodebalancers",
    handle: async (ctx) => json(ctx.world.createNodeBalancer(await readBody(ctx.req))),
  },
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
    path: "nodebalancers/:id/firewalls",
    handle: (ctx) => {
      const id = rec(ctx).nb.id;
      return listResponse(ctx, ctx.world.firewallStore.firewallsOf("nodebalancer", id), FIREWALL_FIELDS);
    },
  },
  { method: "GET", path: "nodebalancers/:id/vpcs", handle: vpcList() },
  { method: "GET", path: "nodebalancers/:id/backend_vpcs", handle: vpcList("backend") },
  { method: "GET", path: "nodebalancers/:id/frontend_vpcs", handle: vpcList("frontend") },
  {
    method: "GET",
    path: "nodebalancers/:id/vpcs/:id",
    handle: (ctx) => {
      const found = rec(ctx).vpcs.find((v) => v.id === param(ctx, 1));
      if (!found) throw notFound();
      return json(found);
    },
  },
];

const CONFIG_ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: "nodebalancers/:id/configs",
    handle: (ctx) =>
      listResponse(
        ctx,
        [...rec(ctx).configs.keys()].map((id) => cfg.configView(rec(ctx), id)),
        CONFIG_FIELDS,
      ),
  },
  {
    method: "POST",
    path: "nodebalancers/:id/configs",
    handle: async (ctx) => json(cfg.createConfig(rec(ctx), ctx.world.ids, await readBody(ctx.req))),
  },
  {
    method: "GET",
    path: "nodebalancers/:id/configs/:id",
    handle: (ctx) => json(cfg.configView(rec(ctx), param(ctx, 1))),
  },
  {
    method: "PUT",
    path: "nodebalancers/:id/configs/:id",
    handle: async (ctx) => json(cfg.updateConfig(rec(ctx), param(ctx, 1), await readBody(ctx.req))),
  },
  {
    method: "DELETE",
    path: "nodebalancers/:id/configs/:id",
    handle: (ctx) => (cfg.deleteConfig(rec(ctx), param(ctx, 1)), json({})),
  },
  {
    method: "POST",
    path: "nodebalancers/:id/configs/:id/rebuild",
    handle: async (ctx) =>
      json(cfg.rebuildConfig(rec(ctx), ctx.world.ids, param(ctx, 1), await readBody(ctx.req))),
  },
];

const NODE_ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: "nodebalancers/:id/configs/:id/nodes",
    handle: (ctx) =>
      listResponse(ctx, [...cfg.requireConfig(rec(ctx), param(ctx, 1)).nodes.values()], NODE_FIELDS),
  },
  {
    method: "POST",
    path: "nodebalancers/:id/configs/:id/nodes",
    handle: async (ctx) =>
      json(cfg.createNode(rec(ctx), ctx.world.ids, param(ctx, 1), await readBody(ctx.req))),
  },
  {
    method: "GET",
    path: "nodebalancers/:id/configs/:id/nodes/:id",
    handle: (ctx) => json(cfg.requireNode(rec(ctx), param(ctx, 1), param(ctx, 2))),
  },
  {
    method: "PUT",
    path: "nodebalancers/:id/configs/:id/nodes/:id",
    handle: async (ctx) =>
      json(cfg.updateNode(rec(ctx), param(ctx, 1), param(ctx, 2), await readBody(ctx.req))),
  },
  {
    method: "DELETE",
    path: "nodebalancers/:id/configs/:id/nodes/:id",
    handle: (ctx) => (cfg.deleteNode(rec(ctx), param(ctx, 1), param(ctx, 2)), json({})),
  },
];

/** The NodeBalancer routes. */
export const NODEBALANCER_ROUTES: readonly Route[] = [...NB_ROUTES, ...CONFIG_ROUTES, ...NODE_ROUTES];
