/**
 * NodeBalancer config bodies (one port each): field types and ranges, then the rules between fields.
 * Sources, in order of precedence:
 * - the API reference's NodeBalancerConfig schema (linode/linode-api-docs openapi.yaml 4.173): port 1–65535;
 *   protocols; algorithm, stickiness and check enums; check_timeout 1–30 and "less than check_interval";
 *   check_attempts 1–30; check_path pattern; proxy_protocol v1/v2 "Requires tcp protocol"; "http and tcp do not
 *   support ssl_cert and ssl_key", https "mutually required with ssl_cert and ssl_key"; `<REDACTED>` in responses;
 *   ssl_commonname/ssl_fingerprint derived from the certificate;
 * - the Sep 30 2026 changelog: UDP load balancing on premium NodeBalancers only;
 * - Linode's own client rules (@linode/validation 0.83 nodebalancers.schema, api-v4 types) where the reference is
 *   silent: UDP algorithms roundrobin/leastconn/ring_hash, UDP stickiness none/session/source_ip, UDP needs
 *   check_passive false and proxy_protocol none and no SSL fields, check_interval 2–3600, http checks need a
 *   path and http_body a body, TCP ports unique among TCP/HTTP/HTTPS and UDP among UDP;
 * - responses recorded from the API in linodego's fixtures for defaults (check_interval sent, check_timeout 30,
 *   check_attempts 3, UDP stickiness session and cipher_suite none, ssl_cert/ssl_key null when unset).
 */
import type { NodeBalancerConfig, Protocol } from "@linode/api-v4";
import { type Body, fieldError, optBool, optEnum, optInt, optString } from "./http.ts";
import { checkTlsPair } from "./nb_tls.ts";

/** A config as the API returns it: nodes are a sub-collection; SSL fields are null when unset. */
export type NbConfigWire = Omit<NodeBalancerConfig, "nodes" | "ssl_cert" | "ssl_key"> & {
  ssl_cert: string | null;
  ssl_key: string | null;
};

/** The settable fields of a config, plus what the API derives from them. */
export type NbConfigFields = Omit<NbConfigWire, "id" | "nodebalancer_id" | "nodes_status">;

type Patch = Partial<NbConfigFields>;

const PROTOCOLS = ["http", "https", "tcp", "udp"] as const;
const TCP_ALGORITHMS = ["roundrobin", "leastconn", "source"] as const;
const UDP_ALGORITHMS = ["roundrobin", "leastconn", "ring_hash"] as const;
const HTTP_STICKINESS = ["none", "table", "http_cookie"] as const;
// Cloud Manager offers none and table for TCP; http_cookie needs HTTP, and the API refuses it for tcp
// ("bad stickiness for tcp is displayed (on API response)", linode/manager#6334).
const TCP_STICKINESS = ["none", "table"] as const;
const UDP_STICKINESS = ["none", "session", "source_ip"] as const;
const CHECKS = ["none", "connection", "http", "http_body"] as const;
const CIPHERS = ["recommended", "legacy", "none"] as const;
const CHECK_PATH = /^\/[a-zA-Z0-9/\-%?&=.]*$/;

/** Defaults of a new config of `protocol`, as the API fills them. */
export function configDefaults(protocol: Protocol): NbConfigFields {
  const udp = protocol === "udp";
  return {
    port: 80,
    protocol,
    algorithm: "roundrobin",
    stickiness: udp ? "session" : "none",
    check: "none",
    // The reference's defaults: interval 31, timeout 30 (recorded responses show timeout 30 and attempts 3).
    check_interval: 31,
    check_timeout: 30,
    check_attempts: 3,
    check_path: "",
    check_body: "",
    check_passive: !udp,
    cipher_suite: udp ? "none" : "recommended",
    proxy_protocol: "none",
    ssl_cert: null,
    ssl_key: null,
    ssl_commonname: "",
    ssl_fingerprint: "",
    udp_check_port: 80,
    udp_session_timeout: 16,
  };
}

function optNullableString(body: Body, field: string, prefix: string): string | null | undefined {
  if (body[field] === null) return null;
  return optString(body, field, prefix);
}

/** The fields a body sets, type- and range-checked one by one. */
function readPatch(body: Body, prefix: string): Patch {
  const patch: Patch = {
    port: optInt(body, "port", 1, 65535, prefix),
    protocol: optEnum(body, "protocol", PROTOCOLS, prefix),
    algorithm: optEnum(body, "algorithm", [...TCP_ALGORITHMS, "ring_hash"] as const, prefix),
    stickiness: optEnum(body, "stickiness", [...HTTP_STICKINESS, "session", "source_ip"] as const, prefix),
    check: optEnum(body, "check", CHECKS, prefix),
    check_interval: optInt(body, "check_interval", 2, 3600, prefix),
    check_timeout: optInt(body, "check_timeout", 1, 30, prefix),
    check_attempts: optInt(body, "check_attempts", 1, 30, prefix),
    check_path: optString(body, "check_path", prefix),
    check_body: optString(body, "check_body", prefix),
    check_passive: optBool(body, "check_passive", prefix),
    cipher_suite: optEnum(body, "cipher_suite", CIPHERS, prefix),
    proxy_protocol: optEnum(body, "proxy_protocol", ["none", "v1", "v2"] as const, prefix),
    udp_check_port: optInt(body, "udp_check_port", 1, 65535, prefix),
  };
  const cert = optNullableString(body, "ssl_cert", prefix);
  const key = optNullableString(body, "ssl_key", prefix);
  if (cert !== undefined) patch.ssl_cert = cert || null;
  if (key !== undefined) patch.ssl_key = key || null;
  for (const k of Object.keys(patch) as (keyof Patch)[]) if (patch[k] === undefined) delete patch[k];
  return patch;
}

function allowedAlgorithms(protocol: Protocol): readonly string[] {
  return protocol === "udp" ? UDP_ALGORITHMS : TCP_ALGORITHMS;
}

function allowedStickiness(protocol: Protocol): readonly string[] {
  if (protocol === "udp") return UDP_STICKINESS;
  return protocol === "tcp" ? TCP_STICKINESS : HTTP_STICKINESS;
}

/**
 * Inherited values the new protocol does not allow fall back to its defaults. The reference does not say what
 * the API does with them on a protocol change; values the body sends are still checked strictly.
 */
function fitInherited(base: NbConfigFields, protocol: Protocol): NbConfigFields {
  if (base.protocol === protocol) return base;
  const d = configDefaults(protocol);
  const out: NbConfigFields = { ...base, protocol };
  if (!allowedAlgorithms(protocol).includes(out.algorithm)) out.algorithm = d.algorithm;
  if (!allowedStickiness(protocol).includes(out.stickiness)) out.stickiness = d.stickiness;
  if (protocol === "udp" || base.protocol === "udp") {
    out.check_passive = d.check_passive;
    out.cipher_suite = d.cipher_suite;
  }
  if (protocol !== "tcp") out.proxy_protocol = "none";
  if (protocol !== "https") {
    Object.assign(out, { ssl_cert: null, ssl_key: null, ssl_commonname: "", ssl_fingerprint: "" });
  }
  return out;
}

function checkProtocolRules(c: NbConfigFields, prefix: string, premium: boolean): void {
  const udp = c.protocol === "udp";
  if (udp && !premium) {
    throw fieldError(`${prefix}protocol`, "UDP is supported on premium NodeBalancers only");
  }
  if (!allowedAlgorithms(c.protocol).includes(c.algorithm)) {
    throw fieldError(`${prefix}algorithm`, `Must be one of ${allowedAlgorithms(c.protocol).join(", ")}`);
  }
  if (!allowedStickiness(c.protocol).includes(c.stickiness)) {
    throw fieldError(`${prefix}stickiness`, `Must be one of ${allowedStickiness(c.protocol).join(", ")}`);
  }
  if (c.proxy_protocol !== "none" && c.protocol !== "tcp") {
    throw fieldError(`${prefix}proxy_protocol`, "Proxy protocol requires the tcp protocol");
  }
  if (udp && c.check_passive) {
    throw fieldError(`${prefix}check_passive`, "Passive checks are not supported for UDP");
  }
  if (udp && c.cipher_suite !== "none") {
    throw fieldError(`${prefix}cipher_suite`, "UDP configs have no cipher suite");
  }
  if (!udp && c.cipher_suite === "none") {
    throw fieldError(`${prefix}cipher_suite`, "Must be recommended or legacy");
  }
}

function checkHealthRules(c: NbConfigFields, prefix: string): void {
  if (c.check === "http" || c.check === "http_body") {
    if (!c.check_path) throw fieldError(`${prefix}check_path`, "An HTTP path is required for http checks");
  }
  if (c.check_path && !CHECK_PATH.test(c.check_path)) {
    throw fieldError(`${prefix}check_path`, "Must be a URL path of letters, digits and /-%?&=.");
  }
  if (c.check === "http_body" && !c.check_body) {
    throw fieldError(`${prefix}check_body`, "A body regex is required for http_body checks");
  }
  if (c.check_timeout >= c.check_interval) {
    throw fieldError(`${prefix}check_timeout`, "check_timeout must be less than check_interval");
  }
}

function checkSsl(c: NbConfigFields, patch: Patch, prefix: string): void {
  const sent = (patch.ssl_cert ?? null) !== null || (patch.ssl_key ?? null) !== null;
  if (c.protocol !== "https") {
    if (sent) {
      throw fieldError(`${prefix}ssl_cert`, "SSL certificates are only supported by the https protocol");
    }
    return;
  }
  if (!c.ssl_cert) throw fieldError(`${prefix}ssl_cert`, "SSL certificate is required for https");
  if (!c.ssl_key) throw fieldError(`${prefix}ssl_key`, "SSL key is required for https");
  if (sent || !c.ssl_fingerprint) {
    const facts = checkTlsPair(c.ssl_cert, c.ssl_key, prefix);
    c.ssl_commonname = facts.commonName;
    c.ssl_fingerprint = facts.fingerprint;
  }
}

/**
 * Merges a body over `base` (a PUT or rebuild) or over the defaults (a create) and checks every rule;
 * `prefix` ("configs[0].") starts each error's field.
 */
export function parseConfigFields(
  body: Body,
  base: NbConfigFields | undefined,
  options: { prefix?: string; premium: boolean },
): NbConfigFields {
  const prefix = options.prefix ?? "";
  const patch = readPatch(body, prefix);
  const protocol = patch.protocol ?? base?.protocol ?? "http";
  const start = base ? fitInherited(base, protocol) : configDefaults(protocol);
  const merged: NbConfigFields = { ...start, ...patch };
  checkProtocolRules(merged, prefix, options.premium);
  checkHealthRules(merged, prefix);
  checkSsl(merged, patch, prefix);
  return merged;
}

/** Shows the certificate and key as the API does: `<REDACTED>` when set, null when not. */
export function redactConfig(config: NbConfigWire): NbConfigWire {
  return {
    ...config,
    ssl_cert: config.ssl_cert ? "<REDACTED>" : null,
    ssl_key: config.ssl_key ? "<REDACTED>" : null,
  };
}

/** TCP, HTTP and HTTPS configs share one port space; UDP has its own. */
export function samePort(
  a: Pick<NbConfigFields, "port" | "protocol">,
  b: Pick<NbConfigFields, "port" | "protocol">,
): boolean {
  return a.port === b.port && (a.protocol === "udp") === (b.protocol === "udp");
}
