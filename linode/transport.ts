/**
 * The api-v4 set-up. api-v4 is a browser SDK: one module-global axios instance, a hard-coded
 * `https://api.linode.com/v4…` prefix and a token interceptor per `setToken` call. We install ONE
 * request interceptor, at import, that takes the base URL, token and abort signal of the current call
 * from an AsyncLocalStorage context, so several clients (and sims) can share the process.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { baseRequest } from "@linode/api-v4";
import { isRecord, kindForResponse, LinodeApiError, parseReasons, parseRetryAfterMs } from "./errors.ts";

/** The prefix api-v4 writes into every URL (`/v4` or `/v4beta` follows). */
export const API_ROOT = "https://api.linode.com/v4";

/** HTTP methods the client uses. */
export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** What the interceptor needs for one attempt; `sent` is set once the request leaves api-v4. */
export interface RequestContext {
  /** Where to send, ending in the API version: `http://127.0.0.1:1234/v4`. */
  readonly baseUrl: string;
  readonly token: string;
  readonly signal: AbortSignal;
  /** Sent as `User-Agent` when set: names the process, so API-side logs (and the emulator) tell replicas apart. */
  readonly userAgent?: string;
  sent: boolean;
  /** Reads a header of the response, once one arrived (success or HTTP error). */
  responseHeader?: (name: string) => unknown;
}

// api-v4 writes both /v4 and /v4beta; the configured version (LINODE_URL's last segment) wins, like
// linodego, which sends every call to one base URL.
const API_PREFIX = /^https:\/\/api\.linode\.com\/v4(beta)?(?=[/?]|$)/;

const contexts = new AsyncLocalStorage<RequestContext>();

type Interceptor = NonNullable<Parameters<typeof baseRequest.interceptors.request.use>[0]>;
type AxiosConfig = Parameters<Interceptor>[0];

function routeRequest(config: AxiosConfig): AxiosConfig {
  const ctx = contexts.getStore();
  // Refuse rather than send a request (with whatever token) somewhere we did not choose.
  if (!ctx) throw new Error("Linode requests must be made through a LinodeClient");
  const url = config.url ?? "";
  if (!API_PREFIX.test(url)) throw new Error("Refusing a Linode request outside the API root");
  config.url = url.replace(API_PREFIX, ctx.baseUrl);
  config.baseURL = undefined;
  config.headers.set("Authorization", `Bearer ${ctx.token}`);
  config.signal = ctx.signal;
  ctx.sent = true;
  return config;
}

const INSTALLED = Symbol.for("linode-ccm.transport");
const INSTALLED_RESPONSE = Symbol.for("linode-ccm.transport.response");

/** Keeps the response headers (for `X-RateLimit-*`) where the caller can read them; bodies stay with api-v4. */
function noteHeaders(response: unknown): void {
  const ctx = contexts.getStore();
  if (!ctx || !isRecord(response)) return;
  const headers = response.headers;
  ctx.responseHeader = (name) => header(headers, name);
}

type Transformer = Extract<
  NonNullable<typeof baseRequest.defaults.transformRequest>,
  readonly unknown[]
>[number];

/**
 * Sets the context's `User-Agent`. A request transform, not an interceptor: axios runs request interceptors
 * last-registered first, so api-v4's own (registered at its import, setting "linodejs") would run after ours.
 */
const setUserAgent: Transformer = function (data, headers) {
  const agent = contexts.getStore()?.userAgent;
  if (agent !== undefined) headers.set("User-Agent", agent);
  return data;
};

function installInterceptor(): void {
  // Marked on the shared instance, so even a second copy of this module installs nothing more.
  if (Object.hasOwn(baseRequest, INSTALLED)) return;
  Object.defineProperty(baseRequest, INSTALLED, { value: true });
  // The default node adapter reads proxy variables (broad env permission); fetch does not.
  baseRequest.defaults.adapter = "fetch";
  baseRequest.interceptors.request.use(routeRequest);
  const transforms = baseRequest.defaults.transformRequest;
  baseRequest.defaults.transformRequest = [
    ...(Array.isArray(transforms) ? transforms : transforms ? [transforms] : []),
    setUserAgent,
  ];
}

function installResponseInterceptor(): void {
  if (Object.hasOwn(baseRequest, INSTALLED_RESPONSE)) return;
  Object.defineProperty(baseRequest, INSTALLED_RESPONSE, { value: true });
  baseRequest.interceptors.response.use((response) => {
    noteHeaders(response);
    return response;
  }, (error: unknown) => {
    if (isRecord(error)) noteHeaders(error.response);
    return Promise.reject(error);
  });
}

installInterceptor();
installResponseInterceptor();

/** Runs `send` (an api-v4 call or `rawRequest`) with the context its requests will use. */
export function withRequestContext<T>(ctx: RequestContext, send: () => Promise<T>): Promise<T> {
  return contexts.run(ctx, send);
}

/** Options of `rawRequest`. */
export interface RawRequestOptions {
  data?: unknown;
  params?: Record<string, string | number>;
}

/**
 * Sends through api-v4's axios instance without its validation and body rewriting (which reject
 * zero-node NodeBalancer configs and drop node ids), keeping the interceptor. `path` starts with `/`.
 */
export async function rawRequest<T>(
  method: HttpMethod,
  path: string,
  options: RawRequestOptions = {},
): Promise<T> {
  const response = await baseRequest.request<T>({
    method,
    url: `${API_ROOT}${path}`,
    data: options.data,
    params: options.params,
  });
  return response.data;
}

/** Where a failed attempt came from. */
export interface FailureContext {
  action: string;
  method: HttpMethod;
  route: string;
  /** Our timeout fired (as opposed to another failure without a response). */
  timedOut: boolean;
  nowMs: number;
  /** Upper bound of a parsed `Retry-After`. */
  maxRetryAfterMs: number;
}

function header(headers: unknown, name: string): unknown {
  if (!isRecord(headers)) return undefined;
  const get = headers.get;
  if (typeof get === "function") return get.call(headers, name);
  return headers[name];
}

function networkCause(e: Record<string, unknown>): Error {
  // Only a code and the fetch error's text (which names the URL, never headers) survive.
  const code = typeof e.code === "string" ? e.code : "ERR_NETWORK";
  const inner = e.cause instanceof Error ? e.cause.message : "";
  return new Error(inner ? `${code}: ${inner}` : code);
}

/**
 * Turns whatever api-v4 rejected with (an AxiosError, an `APIError[]` from client-side validation,
 * or an interceptor refusal) into a `LinodeApiError` that holds no header, token or raw body.
 */
export function toLinodeApiError(e: unknown, ctx: FailureContext): LinodeApiError {
  const base = { method: ctx.method, route: ctx.route };
  if (Array.isArray(e)) {
    return new LinodeApiError(ctx.action, { ...base, status: 0, kind: "client", reasons: parseReasons(e) });
  }
  if (ctx.timedOut) return new LinodeApiError(ctx.action, { ...base, status: 0, kind: "timeout" });
  if (isRecord(e) && e.isAxiosError === true) {
    const response = e.response;
    if (isRecord(response) && typeof response.status === "number") {
      const status = response.status;
      const retryAfterMs = parseRetryAfterMs(
        header(response.headers, "retry-after"),
        ctx.nowMs,
        ctx.maxRetryAfterMs,
      );
      return new LinodeApiError(ctx.action, {
        ...base,
        status,
        kind: kindForResponse(status, response.data),
        reasons: parseReasons(response.data),
        retryAfterMs,
      });
    }
    return new LinodeApiError(ctx.action, { ...base, status: 0, kind: "network", cause: networkCause(e) });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new LinodeApiError(ctx.action, { ...base, status: 0, kind: "network", cause: new Error(message) });
}
