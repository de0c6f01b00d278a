/** Validation of NodeBalancer config and node bodies, with the API's field paths. */
import type { NodeBalancerConfig, NodeBalancerConfigNodeMode } from "@linode/api-v4";
import { type Body, checkLabel, fieldError, isRecord, optBool, optEnum, optInt, optString } from "./http.ts";
import { isPrivateIpv4, parseIpv4 } from "./ip.ts";

/** A config as the API returns it (nodes are a sub-collection, not inline). */
export type NbConfigWire = Omit<NodeBalancerConfig, "nodes">;

/** The settable fields of a config. */
export type NbConfigFields = Omit<NbConfigWire, "id" | "nodebalancer_id" | "nodes_status">;

/** A validated node body. */
export interface NodeInput {
  id?: number;
  address: string;
  label: string;
  weight: number;
  mode: NodeBalancerConfigNodeMode;
  subnetId?: number;
}

const PROTOCOLS = ["http", "https", "tcp", "udp"] as const;
const ALGORITHMS = ["roundrobin", "leastconn", "source", "ring_hash"] as const;
const STICKINESS = ["none", "table", "http_cookie", "session", "source_ip"] as const;
const CHECKS = ["none", "connection", "http", "http_body"] as const;
const MODES = ["accept", "reject", "drain", "backup", "none"] as const;

/** Defaults of a new config, as the API fills them. */
export const CONFIG_DEFAULTS: NbConfigFields = {
  port: 80,
  protocol: "http",
  algorithm: "roundrobin",
  stickiness: "none",
  check: "none",
  check_interval: 5,
  check_timeout: 3,
  check_attempts: 3,
  check_path: "",
  check_body: "",
  check_passive: true,
  cipher_suite: "recommended",
  proxy_protocol: "none",
  ssl_cert: "",
  ssl_key: "",
  ssl_commonname: "",
  ssl_fingerprint: "",
  udp_check_port: 80,
  udp_session_timeout: 16,
};

/** Merges a body over `base`; `prefix` is the field path ("configs[0].") for error messages. */
export function parseConfigFields(body: Body, base: NbConfigFields, prefix = ""): NbConfigFields {
  const out: NbConfigFields = { ...base };
  out.port = optInt(body, "port", 1, 65535, prefix) ?? out.port;
  out.protocol = optEnum(body, "protocol", PROTOCOLS, prefix) ?? out.protocol;
  out.algorithm = optEnum(body, "algorithm", ALGORITHMS, prefix) ?? out.algorithm;
  out.stickiness = optEnum(body, "stickiness", STICKINESS, prefix) ?? out.stickiness;
  out.check = optEnum(body, "check", CHECKS, prefix) ?? out.check;
  out.check_interval = optInt(body, "check_interval", 2, 3600, prefix) ?? out.check_interval;
  out.check_timeout = optInt(body, "check_timeout", 1, 30, prefix) ?? out.check_timeout;
  out.check_attempts = optInt(body, "check_attempts", 1, 30, prefix) ?? out.check_attempts;
  out.check_path = optString(body, "check_path", prefix) ?? out.check_path;
  out.check_body = optString(body, "check_body", prefix) ?? out.check_body;
  out.check_passive = optBool(body, "check_passive", prefix) ?? out.check_passive;
  out.cipher_suite = optEnum(body, "cipher_suite", ["recommended", "legacy", "none"], prefix) ??
    out.cipher_suite;
  out.proxy_protocol = optEnum(body, "proxy_protocol", ["none", "v1", "v2"], prefix) ?? out.proxy_protocol;
  out.udp_check_port = optInt(body, "udp_check_port", 1, 65535, prefix) ?? out.udp_check_port;
  const cert = optString(body, "ssl_cert", prefix);
  const key = optString(body, "ssl_key", prefix);
  if (cert !== undefined) out.ssl_cert = cert;
  if (key !== undefined) out.ssl_key = key;
  if (out.protocol === "https" && (!out.ssl_cert || !out.ssl_key)) {
    throw fieldError(
      prefix + (out.ssl_cert ? "ssl_key" : "ssl_cert"),
      "SSL certificate and key are required for HTTPS",
    );
  }
  if (out.protocol === "https") out.ssl_commonname = "example.com";
  return out;
}

/** Hides the certificate and key as the API does. */
export function redactConfig(config: NbConfigWire): NbConfigWire {
  return {
    ...config,
    ssl_cert: config.ssl_cert ? "<REDACTED>" : "",
    ssl_key: config.ssl_key ? "<REDACTED>" : "",
  };
}

function parseAddress(value: unknown, field: string, inVpc: boolean): string {
  const match = typeof value === "string" ? /^([0-9.]+):(\d{1,5})$/.exec(value) : null;
  const port = Number(match?.[2]);
  if (!match || parseIpv4(match[1] ?? "") === undefined || port < 1 || port > 65535) {
    throw fieldError(field, "Must be a valid IPv4 address and port, as ip:port");
  }
  if (!inVpc && !isPrivateIpv4(match[1] ?? "")) throw fieldError(field, "Must be a private IPv4 address");
  return `${match[1]}:${port}`;
}

/** Validates a node body; `partial` allows omitted fields (PUT), filled from `base`. */
export function parseNode(value: unknown, prefix: string, base?: NodeInput): NodeInput {
  if (!isRecord(value)) throw fieldError(prefix.replace(/\.$/, ""), "Must be an object");
  const subnetId = optInt(value, "subnet_id", 1, Number.MAX_SAFE_INTEGER, prefix) ?? base?.subnetId;
  const address = value.address === undefined && base
    ? base.address
    : parseAddress(value.address, `${prefix}address`, subnetId !== undefined);
  const labelRaw = optString(value, "label", prefix) ?? base?.label;
  if (labelRaw === undefined) throw fieldError(`${prefix}label`, "Label is required");
  const node: NodeInput = {
    address,
    label: checkLabel(labelRaw, `${prefix}label`),
    weight: optInt(value, "weight", 1, 255, prefix) ?? base?.weight ?? 100,
    mode: optEnum(value, "mode", MODES, prefix) ?? base?.mode ?? "accept",
  };
  const id = optInt(value, "id", 1, Number.MAX_SAFE_INTEGER, prefix);
  if (id !== undefined) node.id = id;
  if (subnetId !== undefined) node.subnetId = subnetId;
  return node;
}

/** Validates an optional `nodes` array. */
export function parseNodes(value: unknown, prefix: string): NodeInput[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw fieldError(`${prefix}nodes`, "nodes must be an array");
  return value.map((n, i) => parseNode(n, `${prefix}nodes[${i}].`));
}
