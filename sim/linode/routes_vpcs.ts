/** `vpcs` routes: VPCs, subnets and the VPC IP listings. */
import { json, notFound, readBody } from "./http.ts";
import { listResponse, param, type Route, type RouteContext } from "./router.ts";
import { parseVpcInput } from "./vpc_input.ts";
import { VPC_IP_FILTER_FIELDS } from "./vpc_ips.ts";

const VPC_FIELDS = new Set(["id", "label", "region", "description", "created", "updated"]);
const SUBNET_FIELDS = new Set(["id", "label", "ipv4", "created", "updated"]);

function vpcOr404(ctx: RouteContext) {
  const vpc = ctx.world.vpcs.get(param(ctx, 0));
  if (!vpc) throw notFound();
  return vpc;
}

/** The VPC routes. */
export const VPC_ROUTES: readonly Route[] = [
  { method: "GET", path: "vpcs", handle: (ctx) => listResponse(ctx, ctx.world.vpcs.list(), VPC_FIELDS) },
  {
    method: "POST",
    path: "vpcs",
    handle: async (ctx) => json(ctx.world.vpcs.create(parseVpcInput(await readBody(ctx.req)))),
  },
  {
    method: "GET",
    path: "vpcs/ips",
    handle: (ctx) => listResponse(ctx, ctx.world.vpcs.ips(), VPC_IP_FILTER_FIELDS),
  },
  { method: "GET", path: "vpcs/:id", handle: (ctx) => json(vpcOr404(ctx)) },
  {
    method: "DELETE",
    path: "vpcs/:id",
    handle: (ctx) => {
      if (!ctx.world.vpcs.delete(param(ctx, 0))) throw notFound();
      return json({});
    },
  },
  {
    method: "GET",
    path: "vpcs/:id/subnets",
    handle: (ctx) => listResponse(ctx, vpcOr404(ctx).subnets, SUBNET_FIELDS),
  },
  {
    method: "GET",
    path: "vpcs/:id/subnets/:id",
    handle: (ctx) => {
      const subnet = vpcOr404(ctx).subnets.find((s) => s.id === param(ctx, 1));
      if (!subnet) throw notFound();
      return json(subnet);
    },
  },
  {
    method: "GET",
    path: "vpcs/:id/ips",
    handle: (ctx) => listResponse(ctx, ctx.world.vpcs.ips(vpcOr404(ctx).id), VPC_IP_FILTER_FIELDS),
  },
  {
    method: "GET",
    path: "vpcs/:id/ipv6s",
    handle: (ctx) => listResponse(ctx, ctx.world.vpcs.ipv6s(vpcOr404(ctx).id), VPC_IP_FILTER_FIELDS),
  },
];
