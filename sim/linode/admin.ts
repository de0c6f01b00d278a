/** The `/__admin/` endpoint (no token): calls, faults and world shaping over HTTP. */
import { parseFaultRule, parseInstanceInput, parseRateLimitRules } from "./admin_input.ts";
import type { CallCounter } from "./calls.ts";
import type { Faults } from "./faults.ts";
import { ApiError, type Body, fieldError, json, notFound, optEnum, optString, readBody } from "./http.ts";
import { LINODE_STATUSES } from "./instance_shape.ts";
import { optNodeStatus } from "./nb_node_input.ts";
import { DOCUMENTED_RATE_LIMITS, GENEROUS_RATE_LIMITS, type RateLimiter } from "./rate_limit.ts";
import { param, type Route, Router } from "./router.ts";
import { parseVpcInput } from "./vpc_input.ts";
import type { World } from "./world.ts";

/** What admin handlers reach. */
export interface AdminContext {
  req: Request;
  params: number[];
  world: World;
  faults: Faults;
  calls: CallCounter;
  rateLimits: RateLimiter;
  /** Rotates the accepted API token. */
  setToken(token: string): void;
}

function addInstances(ctx: AdminContext, body: Body): Response {
  const count = body.count;
  const input = parseInstanceInput(body);
  if (count === undefined) return json(ctx.world.addInstance(input));
  if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > 100_000) {
    throw fieldError("count", "count must be an integer between 1 and 100000");
  }
  return json({ data: ctx.world.addInstances(count, input) });
}

function addFault(ctx: AdminContext, body: Body): Response {
  try {
    return json({ id: ctx.faults.add(parseFaultRule(body)) });
  } catch (e) {
    if (e instanceof RangeError) throw new ApiError(400, [{ reason: e.message }]);
    throw e;
  }
}

function setRateLimits(ctx: AdminContext, body: Body): Response {
  const preset = optEnum(body, "preset", ["documented", "generous"]);
  const rules = preset === "documented"
    ? DOCUMENTED_RATE_LIMITS
    : preset === "generous"
    ? GENEROUS_RATE_LIMITS
    : parseRateLimitRules(body.rules);
  try {
    ctx.rateLimits.configure(rules);
  } catch (e) {
    if (e instanceof RangeError) throw new ApiError(400, [{ reason: e.message }]);
    throw e;
  }
  return json({ data: ctx.rateLimits.rules() });
}

const ROUTES: readonly Route<AdminContext>[] = [
  { method: "GET", path: "calls", handle: (ctx) => json({ ...ctx.calls.snapshot(), log: ctx.calls.log }) },
  { method: "DELETE", path: "calls", handle: (ctx) => (ctx.calls.reset(), json({})) },
  { method: "GET", path: "faults", handle: (ctx) => json({ data: ctx.faults.list() }) },
  { method: "POST", path: "faults", handle: async (ctx) => addFault(ctx, await readBody(ctx.req)) },
  { method: "DELETE", path: "faults", handle: (ctx) => (ctx.faults.clear(), json({})) },
  {
    method: "DELETE",
    path: "faults/:id",
    handle: (ctx) => {
      if (!ctx.faults.remove(`f${param(ctx, 0)}`)) throw notFound();
      return json({});
    },
  },
  { method: "POST", path: "world/reset", handle: (ctx) => (ctx.world.reset(), json({})) },
  { method: "GET", path: "rate-limits", handle: (ctx) => json({ data: ctx.rateLimits.rules() }) },
  { method: "PUT", path: "rate-limits", handle: async (ctx) => setRateLimits(ctx, await readBody(ctx.req)) },
  {
    method: "POST",
    path: "world/vpcs",
    handle: async (ctx) => json(ctx.world.createVpc(parseVpcInput(await readBody(ctx.req)))),
  },
  {
    method: "POST",
    path: "world/instances",
    handle: async (ctx) => addInstances(ctx, await readBody(ctx.req)),
  },
  { method: "GET", path: "world/instances", handle: (ctx) => json({ data: ctx.world.listInstances() }) },
  {
    method: "GET",
    path: "world/instances/:id",
    handle: (ctx) => {
      const linode = ctx.world.instance(param(ctx, 0));
      if (!linode) throw notFound();
      return json(linode);
    },
  },
  {
    method: "PUT",
    path: "world/instances/:id/status",
    handle: async (ctx) => {
      const status = optEnum(await readBody(ctx.req), "status", LINODE_STATUSES);
      if (status === undefined) throw fieldError("status", "status is required");
      return json(ctx.world.setStatus(param(ctx, 0), status));
    },
  },
  {
    method: "DELETE",
    path: "world/instances/:id",
    handle: (ctx) => {
      if (!ctx.world.deleteInstance(param(ctx, 0))) throw notFound();
      return json({});
    },
  },
  {
    method: "GET",
    path: "world/instances/:id/ip_ranges",
    handle: (ctx) => {
      ctx.world.instances.require(param(ctx, 0));
      return json({ ip_ranges: ctx.world.ipRanges(param(ctx, 0)) });
    },
  },
  {
    method: "PUT",
    path: "token",
    handle: async (ctx) => {
      const body = await readBody(ctx.req);
      if (typeof body.token !== "string" || body.token === "") throw fieldError("token", "token is required");
      ctx.setToken(body.token);
      return json({});
    },
  },
  { method: "GET", path: "world/nodebalancers", handle: (ctx) => json({ data: ctx.world.nodeBalancers() }) },
  {
    method: "POST",
    path: "world/nodebalancers",
    handle: async (ctx) => {
      const body = await readBody(ctx.req);
      const ipv4 = optString(body, "seedIpv4");
      return json(ctx.world.addNodeBalancer(body, ipv4 === undefined ? {} : { ipv4 }));
    },
  },
  {
    method: "PUT",
    path: "world/nodebalancers/:id/configs/:id/nodes/:id/status",
    handle: async (ctx) => {
      const status = optNodeStatus(await readBody(ctx.req));
      if (status === undefined) throw fieldError("status", "status is required");
      return json(ctx.world.setNodeStatus(param(ctx, 0), param(ctx, 1), param(ctx, 2), status));
    },
  },
  { method: "GET", path: "world/firewalls", handle: (ctx) => json({ data: ctx.world.firewalls() }) },
];

const ADMIN_ROUTER = new Router<AdminContext>(ROUTES);

/** Answers one `/__admin/...` request; throws `ApiError`s for the caller to answer. Not counted in `calls`. */
export async function handleAdmin(
  req: Request,
  path: string,
  env: Omit<AdminContext, "req" | "params">,
): Promise<Response> {
  const segments = path.replace(/^\/__admin\//, "").replace(/\/$/, "").split("/");
  // Fault ids are "f<n>"; accept them in the path as-is.
  const normalized = segments.map((s) => s.replace(/^f(\d+)$/, "$1"));
  const found = ADMIN_ROUTER.match(req.method, normalized);
  return await found.route.handle({ req, params: found.params, ...env });
}
