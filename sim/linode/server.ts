/** `startLinodeSim()`: a Linode API v4 emulator on 127.0.0.1 serving `/v4` and `/v4beta`. */
import { type Clock, systemClock } from "../../common/clock.ts";
import { handleAdmin } from "./admin.ts";
import { CallCounter, type CallRecord } from "./calls.ts";
import { ContractLog } from "./contract.ts";
import { applyAfter, applyBefore, type FaultEnv } from "./fault_apply.ts";
import { Faults } from "./faults.ts";
import { ApiError, errorResponse, notFound } from "./http.ts";
import { Router } from "./router.ts";
import { FIREWALL_ROUTES } from "./routes_firewalls.ts";
import { LINODE_IFACE_ROUTES } from "./routes_linode_ifaces.ts";
import { LINODE_ROUTES } from "./routes_linodes.ts";
import { NETWORKING_ROUTES } from "./routes_networking.ts";
import { NODEBALANCER_ROUTES } from "./routes_nodebalancers.ts";
import { PROFILE_ROUTES } from "./routes_profile.ts";
import { RateLimiter, type RateLimitRule } from "./rate_limit.ts";
import { VPC_ROUTES } from "./routes_vpcs.ts";
import { World } from "./world.ts";

/** Options of `startLinodeSim`. */
export interface LinodeSimOptions {
  /** Bearer token to accept; random when omitted. */
  token?: string;
  /** Port on 127.0.0.1; random when omitted. */
  port?: number;
  /** Clock for timestamps, latency and outage windows; the system clock by default. */
  clock?: Clock;
  /** Random source for fault probabilities (0..1); Math.random by default. */
  random?: () => number;
  /** How many requests `calls.log` keeps. */
  callLogLimit?: number;
  /** Rate limits (`DOCUMENTED_RATE_LIMITS` for the reference's); generous by default so no test meets them. */
  rateLimits?: readonly RateLimitRule[];
  /** Check every POST/PUT body against `@linode/validation`'s schemas for its route (see `contract.ts`). */
  contract?: boolean;
}

/** A running emulator. */
export interface LinodeSim {
  /** "http://127.0.0.1:PORT/v4" (the same server also answers "/v4beta"). */
  readonly url: string;
  /** "http://127.0.0.1:PORT". */
  readonly origin: string;
  /** The bearer token it accepts now. */
  readonly token: string;
  /** Rotates the accepted token (the old one answers 401 from now on), as revoking a token would. */
  setToken(token: string): void;
  /** The account's objects, shaped from TypeScript. */
  readonly world: World;
  /** Fault injection rules. */
  readonly faults: Faults;
  /** Request counters by route template. */
  readonly calls: CallCounter;
  /** Rate limits and the `X-RateLimit-*` headers; `configure()` replaces the rules at run time. */
  readonly rateLimits: RateLimiter;
  /** The request-body contract's findings (undefined unless started with `contract: true`). */
  readonly contract: ContractLog | undefined;
  /** Stops the server; hung and delayed requests end first. Idempotent. */
  close(): Promise<void>;
  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

const API_ROUTER = new Router([
  ...LINODE_ROUTES,
  ...LINODE_IFACE_ROUTES,
  ...VPC_ROUTES,
  ...NODEBALANCER_ROUTES,
  ...FIREWALL_ROUTES,
  ...NETWORKING_ROUTES,
  ...PROFILE_ROUTES,
]);

interface SimState extends FaultEnv {
  token: string;
  setToken(token: string): void;
  world: World;
  calls: CallCounter;
  rateLimits: RateLimiter;
  contract: ContractLog | undefined;
}

/** Routing and handlers throw `ApiError`; anything else is a sim bug, answered as the API would: 500. */
function toErrorResponse(e: unknown): Response {
  if (e instanceof ApiError) return errorResponse(e.status, e.errors);
  return errorResponse(500, [{ reason: "Internal Server Error" }]);
}

async function routeApi(req: Request, url: URL, state: SimState): Promise<Response> {
  const match = /^\/v4(?:beta)?\/(.+?)\/?$/.exec(url.pathname);
  if (!match) throw notFound();
  if (req.headers.get("authorization") !== `Bearer ${state.token}`) {
    throw new ApiError(401, [{ reason: "Invalid Token" }]);
  }
  const found = API_ROUTER.match(req.method, (match[1] ?? "").split("/"));
  return await found.route.handle({
    req,
    url,
    params: found.params,
    addresses: found.addresses,
    world: state.world,
  });
}

/** A copy of `response` with `headers` added (responses built elsewhere may have immutable headers). */
function withHeaders(response: Response, headers: Record<string, string>): Response {
  const out = new Response(response.body, response);
  for (const [k, v] of Object.entries(headers)) out.headers.set(k, v);
  return out;
}

async function answerApi(req: Request, url: URL, state: SimState, call: CallRecord): Promise<Response> {
  const pathTemplate = call.key.slice(call.key.indexOf(" ") + 1);
  const rate = state.rateLimits.check(call.method, pathTemplate);
  if (rate.retryAfterSec !== undefined) {
    call.fault = "rateLimited";
    const headers = { ...rate.headers, "retry-after": String(rate.retryAfterSec) };
    return errorResponse(429, [{ reason: "Too many requests" }], headers);
  }
  const response = await answerUnlimited(req, url, state, call, pathTemplate).catch(toErrorResponse);
  return withHeaders(response, rate.headers);
}

async function answerUnlimited(
  req: Request,
  url: URL,
  state: SimState,
  call: CallRecord,
  pathTemplate: string,
): Promise<Response> {
  const page = Number(url.searchParams.get("page") ?? "1");
  const triggered = state.faults.select(
    call.method,
    pathTemplate,
    Number.isInteger(page) ? page : 1,
    call.userAgent,
  );
  const cut = await applyBefore(state, triggered);
  if (cut) {
    call.fault = cut.kind;
    return cut.response;
  }
  const response = await routeApi(req, url, state);
  return await applyAfter(state, triggered, response);
}

/** The JSON body of a write, read from a copy so the handler still reads its own. */
async function requestBody(req: Request): Promise<unknown> {
  const text = await req.clone().text().catch(() => "");
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function handle(req: Request, state: SimState): Promise<Response> {
  const url = new URL(req.url);
  if (url.pathname.startsWith("/__admin/")) {
    return await handleAdmin(req, url.pathname, state).catch(toErrorResponse);
  }
  const userAgent = req.headers.get("user-agent") ?? "";
  const call = state.calls.record(req.method, url.pathname, state.clock.now(), userAgent);
  if (req.method === "POST" || req.method === "PUT") {
    call.body = await requestBody(req);
    state.contract?.check(call.key, call.body, userAgent);
  }
  const filter = req.headers.get("x-filter");
  if (filter !== null) call.filter = filter;
  const response = await answerApi(req, url, state, call).catch(toErrorResponse);
  state.calls.answered(call, response.status, response.headers.get("retry-after"));
  return response;
}

/** Starts the emulator on 127.0.0.1 (random port unless given). */
export async function startLinodeSim(options: LinodeSimOptions = {}): Promise<LinodeSim> {
  const clock = options.clock ?? systemClock;
  const closer = new AbortController();
  const state: SimState = {
    token: options.token ?? `sim-${crypto.randomUUID()}`,
    setToken: (token) => state.token = token,
    world: new World(clock),
    calls: new CallCounter(options.callLogLimit),
    rateLimits: new RateLimiter(clock, options.rateLimits),
    contract: options.contract ? new ContractLog() : undefined,
    faults: new Faults(clock, options.random),
    clock,
    closing: closer.signal,
  };
  const { promise: listening, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen: (addr) => resolve(addr as Deno.NetAddr) },
    (req) => handle(req, state),
  );
  const addr = await listening;
  const origin = `http://127.0.0.1:${addr.port}`;
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      closer.abort();
      await server.shutdown();
    })();
    return closed;
  };
  return {
    url: `${origin}/v4`,
    origin,
    get token() {
      return state.token;
    },
    setToken: state.setToken,
    world: state.world,
    faults: state.faults,
    calls: state.calls,
    rateLimits: state.rateLimits,
    contract: state.contract,
    close,
    [Symbol.asyncDispose]: close,
  };
}
