/** Test helper: points the module-global `@linode/api-v4` client at a sim, per async context. */
import { AsyncLocalStorage } from "node:async_hooks";
import { baseRequest } from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";

/** Where requests made inside `withSim` go. */
export interface SimTarget {
  origin: string;
  token: string;
  signal?: AbortSignal;
}

const TARGETS = new AsyncLocalStorage<SimTarget>();

// api-v4 has no base-URL setting and its interceptors are process-wide: install exactly one, which reads the
// target of the current async context, so parallel tests with several sims do not interfere.
baseRequest.defaults.adapter = "fetch";
baseRequest.interceptors.request.use((config) => {
  const target = TARGETS.getStore();
  if (!target) return config;
  if (config.url) config.url = config.url.replace(/^https:\/\/api\.linode\.com/, target.origin);
  config.headers.set("Authorization", `Bearer ${target.token}`);
  if (target.signal) config.signal = target.signal;
  return config;
});

/** Runs `fn` with api-v4 calls sent to `sim` (token and signal overridable). */
export function withSim<T>(
  sim: LinodeSim,
  fn: () => Promise<T>,
  overrides: Partial<Omit<SimTarget, "origin">> = {},
): Promise<T> {
  return TARGETS.run({ origin: sim.origin, token: sim.token, ...overrides }, fn);
}

/** What a rejected api-v4 call carried. */
export interface Failure {
  status: number;
  errors: { reason: string; field?: string }[];
  retryAfter?: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/** Awaits a call that must fail and returns its HTTP status and Linode errors (status 0 for client-side). */
export async function failure(call: Promise<unknown>): Promise<Failure> {
  try {
    await call;
  } catch (e) {
    if (Array.isArray(e)) return { status: 0, errors: e };
    const response = isObject(e) && isObject(e.response) ? e.response : undefined;
    if (!response) throw e;
    const data = isObject(response.data) ? response.data : {};
    const headers = isObject(response.headers) ? response.headers : {};
    const retryAfter = typeof headers["retry-after"] === "string" ? headers["retry-after"] : undefined;
    const errors = Array.isArray(data.errors) ? data.errors : [];
    return { status: Number(response.status), errors, ...(retryAfter ? { retryAfter } : {}) };
  }
  throw new Error("Expected the call to fail");
}

/** Sends a raw request through api-v4's axios instance (bypasses its client-side validation). */
export async function rawCall(method: "POST" | "PUT", path: string, body: unknown): Promise<unknown> {
  const url = `https://api.linode.com/v4${path}`;
  const res = method === "POST" ? await baseRequest.post(url, body) : await baseRequest.put(url, body);
  return res.data;
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
