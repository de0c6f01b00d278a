/**
 * The health check annotations (`check-*`), read once per Service and applied to each port: the type
 * defaults to `none` for udp and `connection` otherwise; interval, timeout and attempts default to the Go
 * CCM's 5, 3 and 2; `check-passive` defaults to the README's false and is always false for udp. Pure.
 */
import type { Protocol } from "@linode/api-v4";
import type { AnnotationReader } from "./values.ts";
import type { CheckType, HealthCheckSpec } from "./spec.ts";

const CHECK_TYPES: readonly CheckType[] = ["none", "connection", "http", "http_body"];

/** Built-in health check values (seconds, attempts). */
export const HEALTH_DEFAULTS = Object.freeze({
  intervalSec: 5,
  timeoutSec: 3,
  attempts: 2,
  passive: false,
  path: "/",
});

/** Reads the `check-*` annotations; the result builds each port's check, or undefined when invalid. */
export function readHealthCheck(
  reader: AnnotationReader,
): (protocol: Protocol) => HealthCheckSpec | undefined {
  const type = reader.oneOf("check-type", CHECK_TYPES);
  const { path, keepPath } = readPath(reader, type === "http" || type === "http_body");
  const body = reader.raw("check-body");
  const intervalSec = reader.int("check-interval", 2, 3600) ?? HEALTH_DEFAULTS.intervalSec;
  const timeoutSec = reader.int("check-timeout", 1, 30) ?? HEALTH_DEFAULTS.timeoutSec;
  const attempts = reader.int("check-attempts", 1, 30) ?? HEALTH_DEFAULTS.attempts;
  const passive = reader.bool("check-passive") ?? HEALTH_DEFAULTS.passive;
  // The API refuses a timeout that is not shorter than the interval; blame the annotation that was set.
  if (timeoutSec >= intervalSec) {
    const blamed = reader.has("check-timeout") ? "check-timeout" : "check-interval";
    reader.fail(blamed, reader.raw(blamed) ?? "");
  }
  if (type === "http_body" && (body === undefined || body === "")) {
    reader.fail("check-body", body ?? "", "a non-empty regular expression (check-type is http_body)");
  }
  if (!["http", "http_body"].includes(type ?? "") && (reader.has("check-path") || reader.has("check-body"))) {
    const name = reader.has("check-path") ? "check-path" : "check-body";
    reader.warn(name, "used only with check-type http or http_body");
  }
  const invalid = reader.has("check-type") && type === undefined;
  return (protocol) => {
    if (invalid) return undefined;
    const t = type ?? (protocol === "udp" ? "none" : "connection");
    const isHttp = t === "http" || t === "http_body";
    return {
      type: t,
      path: isHttp ? path ?? HEALTH_DEFAULTS.path : null,
      body: t === "http_body" ? body ?? null : null,
      intervalSec,
      timeoutSec,
      attempts,
      passive: protocol === "udp" ? false : passive,
      keepPath: isHttp && keepPath,
    };
  };
}

/**
 * The Go CCM sends a path without its leading `/` (or with spaces around it) as it is, which the API refuses
 * (its `check_path` pattern), failing that port's update: here an existing config keeps its path and a new
 * one gets `/`. An empty path is the Go CCM's `/`.
 */
function readPath(reader: AnnotationReader, used: boolean): { path: string | undefined; keepPath: boolean } {
  const path = reader.raw("check-path");
  // Unused without an http check (a warning says so below), as the Go CCM ignores it then.
  if (!used || path === undefined || path === "") return { path: undefined, keepPath: false };
  if (path.startsWith("/") && path === path.trim()) return { path, keepPath: false };
  reader.tolerate(
    "check-path",
    path,
    `${HEALTH_DEFAULTS.path} on a new config; an existing config keeps its path`,
  );
  return { path: undefined, keepPath: true };
}
