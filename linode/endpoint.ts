/**
 * How a Linode call is declared and run. An `Endpoint` is one call as data: its method and route template
 * (what `ccm_linode_requests_total{method,route,status}` and `callCounts()` count it as), the linodego method
 * the Go CCM calls for it (`ccm_linode_client_requests_total`), the action its errors name, the shape its answer
 * must have, any retry rule beyond its method's, and how it is sent: through an api-v4 function, or with
 * `rawRequest` (`raw`) where api-v4's validation or body rewriting is in the way. `call`, `list`, `remove` and
 * `collection` declare endpoints (client.ts holds every one the CCM uses); `bind` makes a table of them an
 * object of methods, each running its call through one `ApiCaller` (caller.ts: paging, retries, fence, dry
 * run, counts).
 *
 * A method's arguments are its sender's (a list's but the page; a raw call's the route's `{…}` in order, then
 * the body of a POST or PUT); the per-call options come after them.
 */
import type { Filter, Params, ResourcePage } from "@linode/api-v4";
import type { ApiCaller, CallOptions, CallSpec, ShapeCheck } from "./caller.ts";
import { PAGE_SIZE } from "./caller.ts";
import { isNotFound, isRecord } from "./errors.ts";
import { type HttpMethod, rawRequest } from "./transport.ts";

/** `METHOD /route/template`, as counted: `GET /nodebalancers/{id}`. */
export type Route<M extends HttpMethod = HttpMethod> = `${M} /${string}`;

/** One declared call: `bind` makes it a method taking `A`, then the per-call options. */
export interface Endpoint<A extends unknown[], R> {
  readonly route: Route;
  /** The linodego method the Go CCM calls for it. */
  readonly goMethod: string;
  /** How many arguments come before the per-call options. */
  readonly arity: number;
  /** Runs the call with `args` through `caller`. */
  readonly run: (caller: ApiCaller, args: A, options?: CallOptions) => Promise<R>;
}

/** The method an endpoint becomes: its arguments, then the per-call options. */
export type Method<A extends unknown[], R> = (...args: [...A, options?: CallOptions]) => Promise<R>;

/** The object a table of endpoints becomes: one method per endpoint. */
export type Api<T> = {
  readonly [K in keyof T]: T[K] extends Endpoint<infer A, infer R> ? Method<A, R> : never;
};

/** A check that the body is `what`: an object with these fields of these types. */
export function shapeOf(
  what: string,
  want: Record<string, "number" | "string" | "array" | "object">,
): ShapeCheck {
  return (body) => {
    if (!isRecord(body) || Array.isArray(body)) return `the body is not ${what}`;
    for (const [name, type] of Object.entries(want)) {
      const value = body[name];
      const ok = type === "array"
        ? Array.isArray(value)
        : type === "object"
        ? isRecord(value)
        : type === "number"
        ? typeof value === "number"
        : typeof value === "string";
      if (!ok) return `the body is not ${what} (${name} is not a ${type})`;
    }
    return undefined;
  };
}

/** Any JSON object (a DELETE answers `{}`): an HTML page is not an answer. */
export const ANY_OBJECT: ShapeCheck = shapeOf("an API answer", {});

/** A call sent with `rawRequest` (see `raw`), taking `A` and answered with `R`. */
interface Raw<A extends unknown[], R> {
  readonly raw: true;
  /** Never set: carries the types. */
  readonly types?: (args: A) => R;
}

/**
 * Sent with `rawRequest`, past api-v4's validation and body rewriting: the route's `{…}` filled with the first
 * arguments in order, the next one the body of a POST or PUT (the page parameters of a list).
 */
export function raw<A extends unknown[], R>(): Raw<A, R> {
  return { raw: true };
}

/** How a call is sent: a function of its arguments (an api-v4 call), or `raw`. */
type Sender<A extends unknown[], R> = ((...args: A) => Promise<R>) | Raw<A, R>;

/**
 * A call answered by one object; `answer` picks what callers get of the (checked) body. A POST marked
 * `idempotent` (it sets a whole state) is retried like a PUT; any other is not repeated once it may have acted.
 */
export function call(
  route: Route<"GET" | "POST" | "PUT">,
  goMethod: string,
  action: string,
  shape: ShapeCheck,
  rules: { idempotent?: true } = {},
) {
  const { method, template, ids } = parse(route);
  const hasBody = method !== "GET";
  const declared = { ...rules, method, template, goMethod, action, shape };
  return <A extends unknown[], B, R = B>(sender: Sender<A, B>, answer?: (body: B) => R): Endpoint<A, R> => {
    const send = typeof sender === "function"
      ? sender
      : (...args: A) => rawRequest<B>(method, fill(template, args), hasBody ? { data: args[ids] } : {});
    return {
      route,
      goMethod,
      arity: typeof sender === "function" ? sender.length : ids + (hasBody ? 1 : 0),
      run: async (caller, args, options) => {
        const body = await caller.run(specOf(declared, args, options), () => send(...args));
        return answer ? answer(body) : body as unknown as R;
      },
    };
  };
}

/** A paged list, every page fetched by `page` (its first parameter the page, the rest the call's) or `raw`. */
export function list(route: Route<"GET">, goMethod: string, action: string, shape: ShapeCheck) {
  const { method, template, ids } = parse(route);
  const declared = { method, template, goMethod, action, shape };
  return <A extends unknown[], T>(
    page: ((params: Params, ...args: A) => Promise<ResourcePage<T>>) | Raw<A, T>,
  ): Endpoint<A, T[]> => {
    const fetch = typeof page === "function"
      ? page
      : (p: Params, ...args: A) =>
        rawRequest<ResourcePage<T>>("GET", fill(template, args), {
          params: { page: p.page ?? 1, page_size: p.page_size ?? PAGE_SIZE },
        });
    return {
      route,
      goMethod,
      arity: typeof page === "function" ? page.length - 1 : ids,
      run: (caller, args, options) => caller.list(specOf(declared, args, options), (p) => fetch(p, ...args)),
    };
  };
}

/**
 * A DELETE. A retry that finds the object gone (after an ambiguous failure) counts as done; with `goneIsDone`
 * any 404 does.
 */
export function remove(
  route: Route<"DELETE">,
  goMethod: string,
  action: string,
  rules: { goneIsDone?: true } = {},
) {
  const { method, template, ids } = parse(route);
  const declared = { method, template, goMethod, action, shape: ANY_OBJECT };
  return <A extends unknown[]>(sender: Sender<A, unknown>): Endpoint<A, void> => {
    const send = typeof sender === "function"
      ? sender
      : (...args: A) => rawRequest(method, fill(template, args));
    return {
      route,
      goMethod,
      arity: typeof sender === "function" ? sender.length : ids,
      run: async (caller, args, options) => {
        try {
          await caller.remove(specOf(declared, args, options), () => send(...args));
        } catch (e) {
          if (!(rules.goneIsDone && isNotFound(e))) throw e;
        }
      },
    };
  };
}

/** api-v4's functions of a top-level collection: its filtered list, and get, update and delete by id. */
type CollectionFunctions<T, U> = [
  list: (params?: Params, filter?: Filter) => Promise<ResourcePage<T>>,
  get: (id: number) => Promise<T>,
  update: (id: number, body: U) => Promise<T>,
  remove: (id: number) => Promise<unknown>,
];

/**
 * The five calls of a top-level collection (NodeBalancers, firewalls), routed (`<path>`, `<path>/{id}`), named
 * by linodego (`List<Noun>s`, `Get<Noun>`, `Create<Noun>`, …) and described ("get nodebalancer 12") alike. A
 * create body `C` is sent raw, as is (api-v4's validation refuses what the API takes, such as NodeBalancer
 * configs without nodes); the others go through api-v4's functions.
 */
export function collection<C>(path: `/${string}`, noun: string, shape: ShapeCheck) {
  const words = noun.toLowerCase();
  return <T, U>([getAll, getOne, updateOne, deleteOne]: CollectionFunctions<T, U>) => ({
    /** All of them matching `filter`. */
    list: list(`GET ${path}`, `List${noun}s`, `list ${words}s`, shape)(getAll),
    /** One by id; 404 → `LinodeApiError` with kind `not_found`. */
    get: call(`GET ${path}/{id}`, `Get${noun}`, `get ${words} {0}`, shape)(getOne),
    /** Creates one (sent as is). Not retried after a timeout: the API may have acted. */
    create: call(`POST ${path}`, `Create${noun}`, `create ${words}`, shape)(raw<[body: C], T>()),
    /** Updates one (a NodeBalancer's label, tags or throttles; a firewall's label, tags or status). */
    update: call(`PUT ${path}/{id}`, `Update${noun}`, `update ${words} {0}`, shape)(updateOne),
    /** Deletes one; a retry that finds it gone counts as done. */
    delete: remove(`DELETE ${path}/{id}`, `Delete${noun}`, `delete ${words} {0}`)(deleteOne),
  });
}

/** The methods of a table of endpoints, all sending through `caller`; the options follow each one's arguments. */
export function bind<T extends Record<string, Endpoint<never, unknown>>>(
  table: T,
  caller: ApiCaller,
): Api<T> {
  const methods: Record<string, unknown> = {};
  for (const [name, endpoint] of Object.entries(table)) {
    methods[name] = (...all: unknown[]) => {
      const options = all[endpoint.arity] as CallOptions | undefined;
      return endpoint.run(caller, all.slice(0, endpoint.arity) as never, options);
    };
  }
  return Object.freeze(methods) as Api<T>;
}

/** What a declared call says besides its sender. */
interface Declared {
  method: HttpMethod;
  template: string;
  goMethod: string;
  action: string;
  shape: ShapeCheck;
  idempotent?: true;
}

function parse(route: Route): { method: HttpMethod; template: string; ids: number } {
  const [method, template] = route.split(" ") as [HttpMethod, string];
  return { method, template, ids: template.split("{").length - 1 };
}

/** The route template with its `{…}` filled, in order, with `args`. */
function fill(template: string, args: readonly unknown[]): string {
  let i = 0;
  return template.replace(/\{\w+\}/g, () => encodeURIComponent(String(args[i++])));
}

/** The spec of one call with `args` (`{n}` in the action stands for argument n) and `options`. */
function specOf(declared: Declared, args: readonly unknown[], options?: CallOptions): CallSpec {
  const { template, ...rest } = declared;
  const action = declared.action.replace(/\{(\d+)\}/g, (_, n: string) => String(args[Number(n)]));
  return { ...rest, route: template, action, signal: options?.signal };
}
