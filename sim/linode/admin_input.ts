/** Narrowing of `/__admin/` JSON bodies into world and fault inputs. */
import type { FaultRule } from "./faults.ts";
import { TRANSIENT_KINDS } from "./fault_answers.ts";
import { type Body, fieldError, isRecord, optBool, optEnum, optInt, optString, optStrings } from "./http.ts";
import { LINODE_STATUSES } from "./instance_shape.ts";
import type { RateLimitRule } from "./rate_limit.ts";
import type { AddInstanceInput } from "./store_instances.ts";

const MAX_ID = Number.MAX_SAFE_INTEGER;

/** `POST /__admin/world/instances` body → `addInstance` input. */
export function parseInstanceInput(body: Body): AddInstanceInput {
  const input: AddInstanceInput = {
    label: optString(body, "label"),
    region: optString(body, "region"),
    type: optString(body, "type"),
    status: optEnum(body, "status", LINODE_STATUSES),
    ipv4: optStrings(body, "ipv4"),
    tags: optStrings(body, "tags"),
    group: optString(body, "group"),
    privateIp: optBool(body, "privateIp"),
    lkeClusterId: optInt(body, "lkeClusterId", 1, MAX_ID),
    interfaceGeneration: optEnum(body, "interfaceGeneration", ["legacy_config", "linode"] as const),
  };
  if (body.ipv6 === null) input.ipv6 = null;
  else if (body.ipv6 !== undefined) input.ipv6 = optString(body, "ipv6");
  if (body.vpc !== undefined) {
    if (!isRecord(body.vpc)) throw fieldError("vpc", "vpc must be an object");
    const vpcId = optInt(body.vpc, "vpcId", 1, MAX_ID, "vpc.");
    const subnetId = optInt(body.vpc, "subnetId", 1, MAX_ID, "vpc.");
    if (vpcId === undefined || subnetId === undefined) {
      throw fieldError("vpc", "vpcId and subnetId are required");
    }
    input.vpc = {
      vpcId,
      subnetId,
      ipv4: optString(body.vpc, "ipv4", "vpc."),
      nat1to1: optBool(body.vpc, "nat1to1", "vpc."),
      ipRanges: optStrings(body.vpc, "ipRanges", "vpc."),
    };
  }
  return input;
}

function isErrorStatus(n: number): n is 500 | 502 | 503 | 504 {
  return n === 500 || n === 502 || n === 503 || n === 504;
}

const KINDS = [
  "latency",
  "error",
  "rateLimit",
  "hang",
  "outage",
  "truncatePage",
  "slowPages",
  ...TRANSIENT_KINDS,
] as const;

/** `POST /__admin/faults` body → a fault rule (further checked by `Faults.add`). */
export function parseFaultRule(body: Body): FaultRule {
  const kind = optEnum(body, "kind", KINDS);
  const match = {
    method: optString(body, "method"),
    route: optString(body, "route"),
    count: optInt(body, "count", 1, MAX_ID),
    probability: typeof body.probability === "number" ? body.probability : undefined,
    page: optInt(body, "page", 1, MAX_ID),
    agent: optString(body, "agent"),
  };
  const num = (field: string) => (typeof body[field] === "number" ? body[field] : undefined);
  switch (kind) {
    case "latency":
      return { kind, ms: num("ms") ?? 0, ...match };
    case "error": {
      const status = num("status") ?? 500;
      if (!isErrorStatus(status)) throw fieldError("status", "Must be 500, 502, 503 or 504");
      return { kind, status, ...match };
    }
    case "rateLimit":
      return { kind, retryAfterSec: num("retryAfterSec"), ...match };
    case "hang":
      return { kind, ...match };
    case "outage":
      return { kind, durationMs: num("durationMs") ?? 0, status: num("status"), ...match };
    case "truncatePage":
      return { kind, keep: num("keep"), ...match };
    case "slowPages":
      return { kind, msPerPage: num("msPerPage") ?? 0, ...match };
    case "busy":
    case "requestTimeout":
    case "maintenance":
    case "htmlOk":
      return { kind, ...match };
    case "htmlError": {
      const status = num("status") ?? 400;
      if (!(status === 400 || isErrorStatus(status)) || status === 500) {
        throw fieldError("status", "Must be 400, 502, 503 or 504");
      }
      return { kind, status, ...match };
    }
    case "wrongBody":
      return { kind, body: body.body, ...match };
    default:
      throw fieldError("kind", `kind must be one of ${KINDS.join(", ")}`);
  }
}

/** `PUT /__admin/rate-limits` `rules` → rate limit rules (further checked by `RateLimiter.configure`). */
export function parseRateLimitRules(value: unknown): RateLimitRule[] {
  if (!Array.isArray(value)) throw fieldError("rules", "rules (or preset) is required");
  return value.map((raw, i) => {
    const prefix = `rules[${i}].`;
    if (!isRecord(raw)) throw fieldError(`rules[${i}]`, "Must be an object");
    const rule: RateLimitRule = {
      name: optString(raw, "name", prefix) ?? `rule${i}`,
      limit: optInt(raw, "limit", 1, MAX_ID, prefix) ?? 0,
      windowMs: optInt(raw, "windowMs", 1, MAX_ID, prefix) ?? 0,
    };
    const method = optString(raw, "method", prefix);
    const route = optString(raw, "route", prefix);
    const list = optBool(raw, "list", prefix);
    const per = optEnum(raw, "per", ["route", "all"] as const, prefix);
    return {
      ...rule,
      ...(method ? { method } : {}),
      ...(route ? { route } : {}),
      ...(list ? { list } : {}),
      ...(per ? { per } : {}),
    };
  });
}
