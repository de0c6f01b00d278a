/** Test helper: sends `@linode/api-v4` calls to a sim through the CCM's own transport (linode/transport.ts). */
import { rawRequest, withRequestContext } from "../../../linode/transport.ts";
import { isRecord } from "../http.ts";
import type { LinodeSim } from "../server.ts";

/** Runs `fn` with api-v4 calls sent to `sim` (token and signal overridable), as a `LinodeClient` sends them. */
export function withSim<T>(
  sim: LinodeSim,
  fn: () => Promise<T>,
  overrides: { token?: string; signal?: AbortSignal } = {},
): Promise<T> {
  const ctx = {
    baseUrl: sim.url,
    token: overrides.token ?? sim.token,
    signal: overrides.signal ?? new AbortController().signal,
    sent: false,
  };
  return withRequestContext(ctx, fn);
}

/** Creates a VPC with one subnet (default 10.0.0.0/24) and returns what `addInstance({ vpc })` takes. */
export function oneSubnetVpc(
  sim: LinodeSim,
  options: { label?: string; ipv4?: string; ipv6?: boolean } = {},
): { vpcId: number; subnetId: number } {
  // With `ipv6`: a /52 for the VPC (the first, 2600:3c05:0:1000::/52) and a /56 of it for the subnet.
  const vpc = sim.world.createVpc({
    label: options.label ?? "vpc-1",
    region: "us-east",
    ...(options.ipv6 ? { ipv6: [{ range: "/52" }] } : {}),
    subnets: [{
      label: "sn",
      ipv4: options.ipv4 ?? "10.0.0.0/24",
      ...(options.ipv6 ? { ipv6: [{ range: "auto" }] } : {}),
    }],
  });
  const subnet = vpc.subnets[0];
  if (!subnet) throw new Error("createVpc returned no subnet");
  return { vpcId: vpc.id, subnetId: subnet.id };
}

/** What a rejected api-v4 call carried. */
export interface Failure {
  status: number;
  errors: { reason: string; field?: string }[];
  retryAfter?: string;
}

/** Awaits a call that must fail and returns its HTTP status and Linode errors (status 0 for client-side). */
export async function failure(call: Promise<unknown>): Promise<Failure> {
  try {
    await call;
  } catch (e) {
    if (Array.isArray(e)) return { status: 0, errors: e };
    const response = isRecord(e) && isRecord(e.response) ? e.response : undefined;
    if (!response) throw e;
    const data = isRecord(response.data) ? response.data : {};
    const headers = isRecord(response.headers) ? response.headers : {};
    const retryAfter = typeof headers["retry-after"] === "string" ? headers["retry-after"] : undefined;
    const errors = Array.isArray(data.errors) ? data.errors : [];
    return { status: Number(response.status), errors, ...(retryAfter ? { retryAfter } : {}) };
  }
  throw new Error("Expected the call to fail");
}

/** Sends a raw request through api-v4's axios instance (bypasses its client-side validation). */
export function rawCall(
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
): Promise<unknown> {
  return rawRequest(method, path, body === undefined ? {} : { data: body });
}

/** What `apiFetch` got back: status, headers and the parsed JSON body. */
export interface FetchResult {
  status: number;
  headers: Headers;
  body: unknown;
}

/** Sends one request with plain `fetch` (for headers and raw bodies); `path` is under `/v4`. */
export async function apiFetch(
  sim: LinodeSim,
  method: string,
  path: string,
  body?: string,
): Promise<FetchResult> {
  const headers: Record<string, string> = { authorization: `Bearer ${sim.token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${sim.url}${path}`, { method, headers, body });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** Polls `condition` every millisecond until it holds; throws after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("waitFor timed out");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Tracks whether a promise has settled, without awaiting it. */
export function settled(promise: Promise<unknown>): () => boolean {
  let done = false;
  promise.then(() => (done = true), () => (done = true));
  return () => done;
}
