/** Applies triggered fault rules to one request: before handling (delay, fail, hang) and after (pages). */
import type { Clock } from "../../common/clock.ts";
import type { Faults, Triggered } from "./faults.ts";
import { TRANSIENT_KINDS, transientAnswer, type TransientFault } from "./fault_answers.ts";
import { errorResponse, isRecord, json } from "./http.ts";

const REASONS: Record<number, string> = {
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** What fault application needs from the sim. */
export interface FaultEnv {
  faults: Faults;
  clock: Clock;
  /** Aborts when the sim closes. */
  closing: AbortSignal;
}

function closingResponse(): Response {
  return errorResponse(503, [{ reason: "Service Unavailable" }]);
}

async function delay(env: FaultEnv, ms: number): Promise<boolean> {
  try {
    await env.clock.sleep(ms, env.closing);
    return true;
  } catch {
    return false;
  }
}

/** Runs latency, hang, outage, error and rate-limit rules; returns a response when the request is cut short. */
export async function applyBefore(
  env: FaultEnv,
  triggered: readonly Triggered[],
): Promise<{ response: Response; kind: string } | undefined> {
  for (const { spec } of triggered) {
    if (spec.kind === "latency" && !(await delay(env, spec.ms))) {
      return { response: closingResponse(), kind: "latency" };
    }
  }
  for (const { id, spec } of triggered) {
    if (spec.kind !== "hang") continue;
    // Not req.signal: Deno's legacy abort semantics warn on use. A hung request whose client gave up stays held
    // until the rule goes or the sim closes, which is what "never answered" means anyway.
    await env.faults.hold(id, env.closing);
    if (env.closing.aborted) return { response: closingResponse(), kind: "hang" };
  }
  for (const { spec } of triggered) {
    if (spec.kind === "outage") {
      const status = spec.status ?? 503;
      return {
        response: errorResponse(status, [{ reason: REASONS[status] ?? "Service Unavailable" }]),
        kind: "outage",
      };
    }
    if (spec.kind === "error") {
      const status = spec.status ?? 500;
      return { response: errorResponse(status, [{ reason: REASONS[status] ?? "Error" }]), kind: "error" };
    }
    if (isTransient(spec)) return { response: transientAnswer(spec), kind: spec.kind };
    if (spec.kind === "rateLimit") {
      const retryAfter = String(spec.retryAfterSec ?? 1);
      const response = errorResponse(429, [{ reason: "Too Many Requests" }], { "retry-after": retryAfter });
      return { response, kind: "rateLimit" };
    }
  }
  return undefined;
}

function isTransient(spec: { kind: string }): spec is TransientFault {
  return (TRANSIENT_KINDS as readonly string[]).includes(spec.kind);
}

/** Runs truncatePage and slowPages rules on a successful list response. */
export async function applyAfter(
  env: FaultEnv,
  triggered: readonly Triggered[],
  response: Response,
): Promise<Response> {
  const pageRules = triggered.filter((t) => t.spec.kind === "truncatePage" || t.spec.kind === "slowPages");
  if (pageRules.length === 0 || response.status !== 200) return response;
  const body: unknown = await response.json();
  if (!isRecord(body) || !Array.isArray(body.data) || typeof body.page !== "number") return json(body);
  const data: unknown[] = body.data;
  const page = body.page;
  for (const { spec } of pageRules) {
    if (spec.kind === "slowPages" && !(await delay(env, spec.msPerPage * page))) return closingResponse();
    if (spec.kind === "truncatePage") {
      // Fewer items than page_size, and `pages` claims this is the last page: a client trusting `pages` stops early.
      const keep = spec.keep ?? Math.floor(data.length / 2);
      body.data = data.slice(0, keep);
      body.pages = page;
    }
  }
  return json(body);
}
