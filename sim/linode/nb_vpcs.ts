/**
 * VPC configs of NodeBalancers: backend ranges the NodeBalancer reaches VPC nodes from, and a frontend address.
 * Rules from the Jun 30 2025 changelog: the subnet must be in the NodeBalancer's data centre, the range must lie
 * in the subnet and all of it be free, one VPC per NodeBalancer, and neither VPC nor subnet can be deleted while
 * attached. `ipv4_range_auto_assign` carves a /30 out of the given range (Terraform's linode_nodebalancer docs);
 * without a range the sim carves a /30 out of the subnet (the size the API picks is not documented).
 * `backend_vpcs`/`frontend_vpcs` are the names linodego's NodeBalancer frontend preview sends; `vpcs` is the
 * deprecated spelling of `backend_vpcs`. What a frontend VPC does to `ipv4`, `ipv6` and `hostname` is not
 * documented; the sim gives the NodeBalancer the range's first free address and no IPv6.
 */
import { ApiError, type Body, fieldError, isRecord, optBool, optInt, optString } from "./http.ts";
import { type Cidr, cidrContains, formatIpv4, parseCidr, sizeOf } from "./ip.ts";

/** A VPC config as `GET /nodebalancers/{id}/vpcs` lists it. */
export interface NbVpcConfig {
  id: number;
  nodebalancer_id: number;
  vpc_id: number;
  subnet_id: number;
  ipv4_range: string | null;
  ipv6_range: string | null;
  purpose: "backend" | "frontend";
}

/** What NodeBalancer VPC configs need from the VPC store. */
export interface SubnetPool {
  /** The subnet's VPC, region and IPv4 block, or undefined. */
  subnetInfo(subnetId: number): { vpcId: number; region: string; cidr: Cidr } | undefined;
  /** Takes one free address of the subnet; an ApiError when taken or reserved. */
  allocate(subnetId: number, ip: string): string;
  /** Gives an address back. */
  release(subnetId: number, ip: string): void;
}

/** A validated `vpcs`/`backend_vpcs`/`frontend_vpcs` entry. */
export interface VpcRequest {
  purpose: "backend" | "frontend";
  subnetId: number;
  vpcId: number;
  cidr: Cidr;
  range?: Cidr;
  autoAssign: boolean;
  field: string;
}

function parseEntry(
  value: unknown,
  field: string,
  purpose: VpcRequest["purpose"],
  pool: SubnetPool,
  region: string,
) {
  if (!isRecord(value)) throw fieldError(field, "Must be an object");
  const subnetId = optInt(value, "subnet_id", 1, Number.MAX_SAFE_INTEGER, `${field}.`);
  if (subnetId === undefined) throw fieldError(`${field}.subnet_id`, "subnet_id is required");
  const info = pool.subnetInfo(subnetId);
  if (!info) throw fieldError(`${field}.subnet_id`, "Subnet not found");
  if (info.region !== region) {
    throw fieldError(`${field}.subnet_id`, "The subnet must be in the same region as the NodeBalancer");
  }
  const rangeText = optString(value, "ipv4_range", `${field}.`);
  const range = rangeText === undefined ? undefined : parseCidr(rangeText);
  if (
    rangeText !== undefined &&
    (!range || !cidrContains(info.cidr, range.base) || range.prefix < info.cidr.prefix)
  ) {
    throw fieldError(`${field}.ipv4_range`, "Must be an IPv4 CIDR range within the subnet's range");
  }
  if (optString(value, "ipv6_range", `${field}.`) !== undefined) {
    throw fieldError(`${field}.ipv6_range`, "IPv6 VPC ranges are not available in this emulator");
  }
  const autoAssign = optBool(value, "ipv4_range_auto_assign", `${field}.`) ?? false;
  const req: VpcRequest = { purpose, subnetId, vpcId: info.vpcId, cidr: info.cidr, autoAssign, field };
  if (range) req.range = range;
  return req;
}

function entries(body: Body, key: string): unknown[] {
  const raw = body[key];
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw fieldError(key, `${key} must be an array`);
  return raw;
}

/** Validates the VPC fields of a create body (no side effects). */
export function parseVpcRequests(body: Body, pool: SubnetPool, region: string): VpcRequest[] {
  if (body.vpcs !== undefined && body.backend_vpcs !== undefined) {
    throw fieldError("vpcs", "Use backend_vpcs or the deprecated vpcs, not both");
  }
  const backendKey = body.backend_vpcs !== undefined ? "backend_vpcs" : "vpcs";
  const backend = entries(body, backendKey).map((v, i) =>
    parseEntry(v, `${backendKey}[${i}]`, "backend", pool, region)
  );
  const frontend = entries(body, "frontend_vpcs").map((v, i) =>
    parseEntry(v, `frontend_vpcs[${i}]`, "frontend", pool, region)
  );
  if (frontend.length > 1) throw fieldError("frontend_vpcs", "At most one frontend VPC subnet is allowed");
  backend.forEach((r, i) => {
    if (backend.slice(0, i).some((o) => o.subnetId === r.subnetId)) {
      throw fieldError(`${r.field}.subnet_id`, "Subnet IDs must be unique");
    }
    if (r.vpcId !== backend[0]?.vpcId) {
      throw fieldError(`${r.field}.subnet_id`, "Only one VPC can be attached");
    }
  });
  return [...backend, ...frontend];
}

/** Takes every address of `range`, or none: undefined when one of them is not free. */
function takeRange(pool: SubnetPool, subnetId: number, range: Cidr): string[] | undefined {
  const taken: string[] = [];
  for (let ip = range.base; ip < range.base + sizeOf(range); ip++) {
    try {
      taken.push(pool.allocate(subnetId, formatIpv4(ip)));
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      for (const t of taken) pool.release(subnetId, t);
      return undefined;
    }
  }
  return taken;
}

function carve(pool: SubnetPool, req: VpcRequest, within: Cidr, size: number): Cidr | undefined {
  const prefix = 32 - Math.log2(size);
  for (let base = within.base; base + size <= within.base + sizeOf(within); base += size) {
    const candidate = { base, prefix };
    if (takeRange(pool, req.subnetId, candidate)) return candidate;
  }
  return undefined;
}

/**
 * Reserves the addresses of one request: the exact range, or a carved /30 (backend) or single address
 * (frontend). Returns the range held; a 400 on the entry's field when the addresses are not free.
 */
export function reserveVpcRange(pool: SubnetPool, req: VpcRequest): Cidr {
  const within = req.range ?? req.cidr;
  const exact = req.range !== undefined && !req.autoAssign && req.purpose === "backend";
  if (exact && req.range) {
    if (!takeRange(pool, req.subnetId, req.range)) {
      throw fieldError(`${req.field}.ipv4_range`, "All addresses in the range must be free");
    }
    return req.range;
  }
  const got = carve(pool, req, within, req.purpose === "frontend" ? 1 : 4);
  if (!got) throw fieldError(`${req.field}.ipv4_range`, "No free addresses are left for this range");
  return got;
}

/** Gives a VPC config's addresses back to its subnet. */
export function releaseVpcRange(pool: SubnetPool, config: NbVpcConfig): void {
  const range = config.ipv4_range === null ? undefined : parseCidr(config.ipv4_range);
  if (!range) return;
  for (let ip = range.base; ip < range.base + sizeOf(range); ip++) {
    pool.release(config.subnet_id, formatIpv4(ip));
  }
}
