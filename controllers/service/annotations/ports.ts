/**
 * One NodeBalancer config per Service port: protocol, Proxy Protocol, algorithm, stickiness, TLS Secret and
 * UDP check port, each from the port's JSON annotation, else the `default-*` annotation, else the built-in
 * default, as the Go CCM resolves them. A value that does not fit the port (http on a UDP port, ring_hash on
 * tcp) is an error naming the annotation it came from. Pure.
 */
import type { V1ServicePort } from "@kubernetes/client-node";
import type { Algorithm, NodeBalancerProxyProtocol, Protocol, Stickiness } from "@linode/api-v4";
import { type AnnotationReader, parseWholeNumber } from "./table.ts";
import type { HealthCheckSpec, PortFamily, PortSpec } from "./spec.ts";

const PROTOCOLS: readonly Protocol[] = ["tcp", "udp", "http", "https"];
const PROXY_PROTOCOLS: readonly NodeBalancerProxyProtocol[] = ["none", "v1", "v2"];
const ALGORITHMS: Readonly<Record<PortFamily, readonly Algorithm[]>> = {
  tcp: ["roundrobin", "leastconn", "source"],
  udp: ["roundrobin", "leastconn", "ring_hash"],
};
const STICKINESS: Readonly<Record<"http" | "udp", readonly Stickiness[]>> = {
  http: ["none", "table", "http_cookie"],
  udp: ["none", "session", "source_ip"],
};
const PORT_JSON_KEYS = [
  "protocol",
  "proxy-protocol",
  "tls-secret-name",
  "algorithm",
  "stickiness",
  "udp-check-port",
] as const;
type PortJsonKey = typeof PORT_JSON_KEYS[number];
type PortJson = Partial<Record<PortJsonKey, string>>;

/** The Go CCM's UDP health check port when none is given. */
export const DEFAULT_UDP_CHECK_PORT = 80;

/** A setting's value and the annotation it came from (`null`: built-in default). */
interface Setting {
  readonly value: string;
  readonly source: string | null;
}

/** Service-wide values the ports fall back to; checked once, before any port. */
export interface PortDefaults {
  readonly protocol: string | undefined;
  readonly proxyProtocol: Setting | undefined;
  readonly algorithm: string | undefined;
  readonly stickiness: string | undefined;
  readonly udpCheckPort: number | undefined;
}

/** Reads and checks the `default-*` annotations (values valid for some port; per-port fit comes later). */
export function readPortDefaults(reader: AnnotationReader): PortDefaults {
  const deprecated = reader.oneOf("proxy-protocol", PROXY_PROTOCOLS);
  if (reader.has("proxy-protocol")) {
    reader.warn("proxy-protocol", "deprecated: use default-proxy-protocol");
  }
  const proxy = reader.oneOf("default-proxy-protocol", PROXY_PROTOCOLS);
  return {
    protocol: reader.oneOf("default-protocol", PROTOCOLS),
    proxyProtocol: proxy !== undefined
      ? { value: proxy, source: "default-proxy-protocol" }
      : deprecated !== undefined
      ? { value: deprecated, source: "proxy-protocol" }
      : undefined,
    algorithm: reader.oneOf("default-algorithm", [...new Set([...ALGORITHMS.tcp, ...ALGORITHMS.udp])]),
    stickiness: reader.oneOf("default-stickiness", [...new Set([...STICKINESS.http, ...STICKINESS.udp])]),
    udpCheckPort: reader.int("udp-check-port", 1, 65535),
  };
}

/** The port's JSON annotation; `undefined` when it is invalid (the error is recorded). */
function readPortJson(reader: AnnotationReader, port: number): PortJson | undefined {
  const name = `port-${port}`;
  const raw = reader.raw(name);
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return reader.fail(name, raw);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return reader.fail(name, raw);
  const out: PortJson = {};
  for (const [key, value] of Object.entries(parsed)) {
    const known = PORT_JSON_KEYS.find((k) => k === key);
    if (!known) {
      reader.warn(name, `unknown key "${key}" ignored`);
    } else if (typeof value === "string") {
      out[known] = value;
    } else if (known === "udp-check-port" && typeof value === "number") {
      out[known] = String(value);
    } else {
      return reader.fail(name, raw);
    }
  }
  return out;
}

function pick(
  json: PortJson,
  key: PortJsonKey,
  port: number,
  fallback: Setting | undefined,
): Setting | undefined {
  const own = json[key];
  if (own !== undefined && own !== "") return { value: own, source: `port-${port}` };
  return fallback;
}

function fromDefault(value: string | undefined, source: string): Setting | undefined {
  return value === undefined ? undefined : { value, source };
}

/** Checks a setting against `allowed`; a mismatch is reported on the annotation it came from. */
function check<T extends string>(
  reader: AnnotationReader,
  setting: Setting,
  allowed: readonly T[],
  accepted: string,
): T | undefined {
  const lower = setting.value.toLowerCase();
  const found = allowed.find((a) => a === lower);
  if (found !== undefined) return found;
  if (setting.source !== null) {
    reader.fail(setting.source, reader.raw(setting.source) ?? setting.value, accepted);
  }
  return undefined;
}

function orList(values: readonly string[]): string {
  return values.length < 2 ? values.join("") : `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`;
}

/** The family of a Service port (`TCP`, `UDP`), or undefined for SCTP and anything else. */
export function portFamily(servicePort: V1ServicePort): PortFamily | undefined {
  const p = (servicePort.protocol ?? "TCP").toUpperCase();
  return p === "TCP" ? "tcp" : p === "UDP" ? "udp" : undefined;
}

/**
 * A valid protocol of the other family (http on a UDP port, udp on a TCP one), from `default-protocol` or the
 * port's own JSON: the Go CCM applies it to that port as it is (`getPortProtocol` checks only that it is one
 * of tcp, udp, http, https); here the port keeps its own family's protocol (an existing config keeps its
 * protocol). Undefined for anything else (a built-in default never mismatches; an unknown protocol is an error).
 */
function otherFamilyProtocol(
  reader: AnnotationReader,
  setting: Setting,
  port: number,
  family: PortFamily,
  allowed: readonly Protocol[],
): { protocol: Protocol; keep: true } | undefined {
  const value = setting.value.toLowerCase();
  if (setting.source === null || !PROTOCOLS.some((p) => p === value)) return undefined;
  reader.tolerate(
    setting.source,
    reader.raw(setting.source) ?? setting.value,
    `${family} on ${family.toUpperCase()} port ${port} when new; an existing config keeps its protocol`,
    `protocol ${orList(allowed)} for ${family.toUpperCase()} port ${port}`,
  );
  return { protocol: family, keep: true };
}

function resolveProtocol(
  reader: AnnotationReader,
  json: PortJson,
  port: number,
  family: PortFamily,
  defaults: PortDefaults,
): { protocol: Protocol; keep: boolean } | undefined {
  const setting = pick(json, "protocol", port, fromDefault(defaults.protocol, "default-protocol")) ??
    { value: family, source: null };
  const allowed: readonly Protocol[] = family === "udp" ? ["udp"] : ["tcp", "http", "https"];
  // Lower-cased, not trimmed, as the Go CCM reads it.
  const found = allowed.find((a) => a === setting.value.toLowerCase());
  if (found !== undefined) return { protocol: found, keep: false };
  const lenient = otherFamilyProtocol(reader, setting, port, family, allowed);
  if (lenient !== undefined) return lenient;
  check(reader, setting, allowed, `protocol ${orList(allowed)} for ${family.toUpperCase()} port ${port}`);
  return undefined;
}

function resolveTls(
  reader: AnnotationReader,
  json: PortJson,
  port: number,
  protocol: Protocol,
): string | null {
  // As written: the Go CCM looks the Secret up by it.
  const name = json["tls-secret-name"] || null;
  if (protocol === "https" && name === null) {
    reader.fail(`port-${port}`, reader.raw(`port-${port}`) ?? "", `"tls-secret-name" for https port ${port}`);
  } else if (protocol === "udp" && name !== null) {
    reader.fail(`port-${port}`, reader.raw(`port-${port}`) ?? "", `no "tls-secret-name" on udp port ${port}`);
  } else if (protocol !== "https" && name !== null) {
    reader.warn(`port-${port}`, `"tls-secret-name" is used only with protocol https`);
  }
  return protocol === "https" ? name : null;
}

function resolveUdpCheckPort(reader: AnnotationReader, json: PortJson, port: number, defaults: PortDefaults) {
  const own = json["udp-check-port"];
  if (own === undefined || own === "") return defaults.udpCheckPort ?? DEFAULT_UDP_CHECK_PORT;
  const n = parseWholeNumber(own);
  if (n !== undefined && n >= 1 && n <= 65535) return n;
  reader.fail(`port-${port}`, reader.raw(`port-${port}`) ?? own, `"udp-check-port" from 1 to 65535`);
  return undefined;
}

function resolveStickiness(
  reader: AnnotationReader,
  json: PortJson,
  port: number,
  protocol: Protocol,
  defaults: PortDefaults,
): Stickiness | null | undefined {
  if (protocol === "tcp") {
    if (json.stickiness) reader.warn(`port-${port}`, `"stickiness" does not apply to tcp and is ignored`);
    return null;
  }
  const kind = protocol === "udp" ? "udp" : "http";
  const builtIn: Setting = { value: kind === "udp" ? "session" : "table", source: null };
  const setting = pick(json, "stickiness", port, fromDefault(defaults.stickiness, "default-stickiness")) ??
    builtIn;
  return check(reader, setting, STICKINESS[kind], `stickiness ${orList(STICKINESS[kind])} for ${protocol}`);
}

/** Resolves one TCP or UDP Service port; `undefined` when something about it is invalid (recorded). */
export function resolvePort(
  reader: AnnotationReader,
  servicePort: V1ServicePort,
  defaults: PortDefaults,
  health: (protocol: Protocol) => HealthCheckSpec | undefined,
): PortSpec | undefined {
  const port = servicePort.port;
  const family = portFamily(servicePort);
  const json = readPortJson(reader, port);
  if (family === undefined || json === undefined) return undefined;
  const resolved = resolveProtocol(reader, json, port, family, defaults);
  if (resolved === undefined) return undefined;
  const protocol = resolved.protocol;
  const proxySetting = pick(json, "proxy-protocol", port, defaults.proxyProtocol) ??
    { value: "none", source: null };
  const proxyAllowed: readonly NodeBalancerProxyProtocol[] = family === "udp" ? ["none"] : PROXY_PROTOCOLS;
  const proxyProtocol = check(
    reader,
    proxySetting,
    proxyAllowed,
    `proxy protocol ${orList(proxyAllowed)} for ${protocol}`,
  );
  const algoSetting = pick(json, "algorithm", port, fromDefault(defaults.algorithm, "default-algorithm")) ??
    { value: "roundrobin", source: null };
  const algorithm = check(
    reader,
    algoSetting,
    ALGORITHMS[family],
    `algorithm ${orList(ALGORITHMS[family])} for ${protocol}`,
  );
  const stickiness = resolveStickiness(reader, json, port, protocol, defaults);
  const tlsSecretName = resolveTls(reader, json, port, protocol);
  const udpCheckPort = family === "udp" ? resolveUdpCheckPort(reader, json, port, defaults) : null;
  const checkSpec = health(protocol);
  if (
    proxyProtocol === undefined || algorithm === undefined || stickiness === undefined ||
    udpCheckPort === undefined || checkSpec === undefined
  ) return undefined;
  return {
    port,
    family,
    protocol,
    proxyProtocol,
    algorithm,
    stickiness,
    tlsSecretName,
    udpCheckPort,
    check: checkSpec,
    keep: [
      ...(resolved.keep ? ["protocol" as const] : []),
      ...(checkSpec.keepPath ? ["check_path" as const] : []),
    ],
  };
}
