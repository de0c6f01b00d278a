/**
 * NodeBalancer backend nodes: body validation, then the checks that depend on the NodeBalancer and config.
 * Sources: the reference's NodeBalancerNode schema (address, label 3–32 of `[a-zA-Z0-9-_.]`, weight 1–255, modes),
 * the Jun 30 2025 changelog (VPC backends with `subnet_id`; "either VPC or non-VPC backend nodes"), the
 * Sep 30 2026 changelog (public IPv6 backends; premium NodeBalancers take VPC or IPv6 backends only; at most
 * 1,000 nodes per config on common, 2,000 on premium), and the API's own answers recorded in linodego's fixtures
 * ("Must be in address:port format", new nodes report status "Unknown").
 */
import type { NodeBalancerConfigNodeMode } from "@linode/api-v4";
import { type Body, fieldError, isRecord, optEnum, optInt, optString } from "./http.ts";
import { type Cidr, cidrContains, LINODE_PRIVATE_NETWORK, parseIpv4 } from "./ip.ts";

/** How a backend is reached: Linode private network, a VPC subnet, or public IPv6. */
export type AddressKind = "private" | "vpc" | "ipv6";

/** A node body after its own checks. */
export interface NodeInput {
  id?: number;
  address: string;
  kind: AddressKind;
  /** The IPv4 part of a `private` or `vpc` address. */
  ipv4?: number;
  label: string;
  weight: number;
  /** As sent; the config's protocol decides the stored mode. */
  mode?: NodeBalancerConfigNodeMode;
  subnetId?: number;
}

/** What the checks of a node need from its NodeBalancer and config. */
export interface NodeContext {
  premium: boolean;
  udp: boolean;
  /** The NodeBalancer's backend VPC subnets, with the VPC config id nodes in them report. */
  subnets: ReadonlyMap<number, { cidr: Cidr; vpcConfigId: number }>;
}

const MODES = ["accept", "reject", "drain", "backup", "none"] as const;
const ADDRESS_FORMAT = "Must be in address:port format";

function parsePort(text: string | undefined, field: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw fieldError(field, ADDRESS_FORMAT);
  return port;
}

/** True for an IPv6 address routable on the internet: not unspecified, loopback, ULA, link-local or multicast. */
function isPublicIpv6(normalized: string): boolean {
  const first = parseInt(normalized.split(":")[0] || "0", 16);
  if (normalized === "::" || normalized === "::1" || normalized.startsWith("::ffff:")) return false;
  return (first & 0xfe00) !== 0xfc00 && (first & 0xffc0) !== 0xfe80 && (first & 0xff00) !== 0xff00;
}

function parseIpv6Address(
  host: string,
  port: string | undefined,
  field: string,
): Pick<NodeInput, "address" | "kind"> {
  let normalized: string;
  try {
    normalized = new URL(`http://[${host}]/`).hostname.slice(1, -1);
  } catch {
    throw fieldError(field, ADDRESS_FORMAT);
  }
  if (!isPublicIpv6(normalized)) throw fieldError(field, "Must be a public IPv6 address");
  return { address: `[${normalized}]:${parsePort(port, field)}`, kind: "ipv6" };
}

/**
 * `ip:port` or `[ipv6]:port`. Without `subnet_id` an IPv4 backend must be on Linode's private network,
 * 192.168.128.0/17: the reference says only "the private IPv4 address", Cloud Manager offers only a
 * Linode's private addresses for non-VPC backends (linode/manager#12287), private addresses come from that
 * block only, and other RFC 1918 blocks exist on Linode only inside VPC subnets, which need `subnet_id`.
 */
function parseAddress(value: unknown, field: string, inVpc: boolean): Omit<NodeInput, "label" | "weight"> {
  if (typeof value !== "string") throw fieldError(field, "address is required");
  const v6 = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(value);
  if (v6) return parseIpv6Address(v6[1] ?? "", v6[2], field);
  const v4 = /^([0-9.]+):(\d{1,5})$/.exec(value);
  const ip = parseIpv4(v4?.[1] ?? "");
  if (!v4 || ip === undefined) throw fieldError(field, ADDRESS_FORMAT);
  const port = parsePort(v4[2], field);
  if (!inVpc && !cidrContains(LINODE_PRIVATE_NETWORK, ip)) {
    throw fieldError(field, "Must be a private IPv4 address");
  }
  return { address: `${v4[1]}:${port}`, kind: inVpc ? "vpc" : "private", ipv4: ip };
}

/** A node label as the reference's pattern `[a-zA-Z0-9-_.]{3,32}` allows it. */
export function checkNodeLabel(label: string, field: string): string {
  if (label.length < 3 || label.length > 32) {
    throw fieldError(field, "Label must be between 3 and 32 characters");
  }
  if (!/^[a-zA-Z0-9._-]+$/.test(label)) {
    throw fieldError(field, "Label may only contain letters, numbers, periods, dashes, and underscores");
  }
  return label;
}

/** Validates one node body; `base` fills fields a partial PUT leaves out. */
export function parseNode(value: unknown, prefix: string, base?: NodeInput): NodeInput {
  if (!isRecord(value)) throw fieldError(prefix.replace(/\.$/, ""), "Must be an object");
  const subnetId = optInt(value, "subnet_id", 1, Number.MAX_SAFE_INTEGER, prefix) ??
    (value.address === undefined ? base?.subnetId : undefined);
  const where = value.address === undefined && base
    ? { address: base.address, kind: base.kind, ipv4: base.ipv4 }
    : parseAddress(value.address, `${prefix}address`, subnetId !== undefined);
  if (where.kind === "ipv6" && subnetId !== undefined) {
    throw fieldError(`${prefix}subnet_id`, "subnet_id is only allowed with an IPv4 VPC address");
  }
  const label = optString(value, "label", prefix) ?? base?.label;
  if (label === undefined) throw fieldError(`${prefix}label`, "label is required");
  const node: NodeInput = {
    ...where,
    label: checkNodeLabel(label, `${prefix}label`),
    // The reference gives no default weight; 100 is what Cloud Manager and the Go CCM send.
    weight: optInt(value, "weight", 1, 255, prefix) ?? base?.weight ?? 100,
    mode: optEnum(value, "mode", MODES, prefix) ?? base?.mode,
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

/** The mode stored for a node: UDP configs take none (api-v4: "They don't support different modes"). */
export function storedMode(node: NodeInput, udp: boolean, field: string): NodeBalancerConfigNodeMode {
  if (udp) {
    if (node.mode !== undefined && node.mode !== "none") {
      throw fieldError(field, "UDP nodes do not support modes");
    }
    return "none";
  }
  if (node.mode === "none") throw fieldError(field, "Must be one of accept, reject, drain, backup");
  return node.mode ?? "accept";
}

/** Checks a node against its NodeBalancer: backend kind, VPC subnet and range. */
export function checkNodeContext(node: NodeInput, ctx: NodeContext, prefix: string): void {
  if (node.kind === "vpc") {
    const subnet = ctx.subnets.get(node.subnetId ?? 0);
    if (!subnet) {
      throw fieldError(`${prefix}subnet_id`, "Subnet is not a backend VPC subnet of this NodeBalancer");
    }
    if (!cidrContains(subnet.cidr, node.ipv4 ?? 0)) {
      throw fieldError(`${prefix}address`, "Address must be within the subnet's IPv4 range");
    }
    return;
  }
  if (node.kind === "private" && ctx.subnets.size > 0) {
    // "A NodeBalancer can have either VPC or non-VPC backends nodes" (Jun 30 2025 changelog).
    throw fieldError(`${prefix}address`, "A NodeBalancer with VPC backends takes only VPC backend nodes");
  }
  if (node.kind === "private" && ctx.premium) {
    throw fieldError(`${prefix}address`, "Premium NodeBalancers support only VPC or public IPv6 backends");
  }
}

/** Checks a config's whole node list: per-kind rules, distinct addresses and the per-type node limit. */
export function checkNodeList(nodes: readonly NodeInput[], ctx: NodeContext, prefix: string): void {
  const limit = ctx.premium ? 2000 : 1000;
  if (nodes.length > limit) throw fieldError(`${prefix}nodes`, `A config may have at most ${limit} nodes`);
  const seen = new Set<string>();
  nodes.forEach((node, i) => {
    const at = `${prefix}nodes[${i}].`;
    checkNodeContext(node, ctx, at);
    storedMode(node, ctx.udp, `${at}mode`);
    // The reference does not say whether two nodes of a config may share an address; the sim refuses it,
    // since such nodes would be indistinguishable backends.
    if (seen.has(node.address)) throw fieldError(`${at}address`, "Address is already used by another node");
    seen.add(node.address);
  });
}

/** Reads an optional node `status` for seeding (`UP`, `DOWN`, `Unknown`); not part of the API's bodies. */
export function optNodeStatus(body: Body, prefix = ""): "UP" | "DOWN" | "Unknown" | undefined {
  return optEnum(body, "status", ["UP", "DOWN", "Unknown"] as const, prefix);
}
