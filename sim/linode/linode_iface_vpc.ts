/**
 * The `vpc` part of a Linode interface, created or replaced as `post-linode-interface` and
 * `put-linode-interface` document it: `subnet_id` (required; a change moves the interface and applies
 * default addresses), `ipv4.addresses` (`auto` or a free subnet address, one primary, optional
 * `nat_1_1_address`) and `ipv4.ranges` (CIDR inside the subnet, or a size like `/28`). Omitted or null
 * parts keep their values. Everything is checked before anything changes.
 */
import { ApiError, type Body, fieldError, isRecord } from "./http.ts";
import { linodeMember, publicIpv4s } from "./iface_members.ts";
import type { SimLinodeInterface, SimVpcInterfaceData } from "./instance_shape.ts";
import type { InstanceRecord } from "./store_instances.ts";
import type { VpcStore } from "./store_vpcs.ts";
import { checkRanges } from "./vpc_ranges.ts";

type VpcAddressSpec = SimVpcInterfaceData["ipv4"]["addresses"][number];
const AUTO_ADDRESS: Body = { address: "auto", primary: true };

/** A nested object field: absent or null is undefined; anything else but an object is a 400. */
export function optObject(body: Body, key: string, field = key): Body | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw fieldError(field, `${field} must be an object`);
  return value;
}

function optArray(body: Body | undefined, key: string, field: string): unknown[] | undefined {
  const value = body?.[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw fieldError(field, `${field} must be an array`);
  return value;
}

/** The subnet of a VPC interface: an integer naming a subnet of a VPC in the Linode's region. */
function subnetOf(vpcs: VpcStore, rec: InstanceRecord, vpc: Body): number {
  const id = vpc.subnet_id;
  if (id === undefined || id === null) throw fieldError("vpc.subnet_id", "subnet_id is required");
  const info = typeof id === "number" ? vpcs.subnetInfo(id) : undefined;
  if (!info) throw fieldError("vpc.subnet_id", "Subnet not found");
  if (info.region !== rec.linode.region) {
    throw fieldError("vpc.subnet_id", "The subnet's VPC must be in the Linode's region");
  }
  return info.id;
}

/** `nat_1_1_address`: null for none, `auto` for the Linode's public IPv4, else one of its own. */
function natOf(rec: InstanceRecord, value: unknown, primary: boolean, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (!primary) throw fieldError(field, "A 1:1 NAT address needs primary set to true");
  const pub = publicIpv4s(rec.linode);
  const nat = value === "auto" ? pub[0] : pub.find((ip) => ip === value);
  if (!nat) throw fieldError(field, "Must be auto or a public IPv4 address assigned to this Linode");
  return nat;
}

/** Checks the address list's shape and primaries; returns the specs with their requested addresses. */
function addressSpecs(
  rec: InstanceRecord,
  values: readonly unknown[],
): (VpcAddressSpec & { wanted?: string })[] {
  const field = "vpc.ipv4.addresses";
  // The docs leave an interface without IPv4 open; the sim's VPCs have no IPv6, so one is required.
  if (values.length === 0) throw fieldError(field, "A VPC interface must have an IPv4 address");
  const specs = values.map((v, i) => {
    if (!isRecord(v)) throw fieldError(`${field}[${i}]`, "Must be an object");
    const address = v.address ?? "auto";
    if (typeof address !== "string") {
      throw fieldError(`${field}[${i}].address`, "Must be auto or an IPv4 address");
    }
    if (v.primary !== undefined && v.primary !== null && typeof v.primary !== "boolean") {
      throw fieldError(`${field}[${i}].primary`, "primary must be a boolean");
    }
    const primary = values.length === 1 ? v.primary !== false : v.primary === true;
    if (values.length === 1 && !primary) {
      throw fieldError(`${field}[0].primary`, "A single address must be primary");
    }
    const nat = natOf(rec, v.nat_1_1_address, primary, `${field}[${i}].nat_1_1_address`);
    return { address, primary, nat_1_1_address: nat, ...(address === "auto" ? {} : { wanted: address }) };
  });
  if (specs.filter((s) => s.primary).length !== 1) {
    throw fieldError(field, "primary must be set to true for exactly one address");
  }
  return specs;
}

/** The new `vpc` part of `iface` (or a new interface) as the body asks; nothing is reserved yet. */
interface VpcPlan {
  subnetId: number;
  addresses?: ReturnType<typeof addressSpecs>;
  ranges?: unknown[];
}

function planVpc(
  vpcs: VpcStore,
  rec: InstanceRecord,
  current: SimVpcInterfaceData | null,
  vpc: Body,
): VpcPlan {
  const subnetId = subnetOf(vpcs, rec, vpc);
  const ipv4 = optObject(vpc, "ipv4", "vpc.ipv4");
  const moved = current === null || current.subnet_id !== subnetId;
  const raw = optArray(ipv4, "addresses", "vpc.ipv4.addresses") ?? (moved ? [AUTO_ADDRESS] : undefined);
  const ranges = optArray(ipv4, "ranges", "vpc.ipv4.ranges")?.map((r, i) => {
    if (!isRecord(r)) throw fieldError(`vpc.ipv4.ranges[${i}]`, "Must be an object with a range");
    return r.range;
  }) ?? (moved ? [] : undefined);
  return { subnetId, addresses: raw && addressSpecs(rec, raw), ranges };
}

/** Reserves the plan's addresses in its subnet; releases them again and rethrows on a refusal. */
function reserve(
  vpcs: VpcStore,
  plan: VpcPlan,
  addresses: NonNullable<VpcPlan["addresses"]>,
): VpcAddressSpec[] {
  const done: VpcAddressSpec[] = [];
  try {
    addresses.forEach((a, i) => {
      const field = `vpc.ipv4.addresses[${i}].address`;
      done.push({ ...a, address: vpcs.allocate(plan.subnetId, a.wanted, field) });
    });
  } catch (e) {
    for (const a of done) vpcs.release(plan.subnetId, a.address);
    throw e;
  }
  return done.map(({ address, primary, nat_1_1_address }) => ({ address, primary, nat_1_1_address }));
}

/**
 * Applies `vpc` to a Linode VPC interface (or gives a new interface its `vpc` part) and attaches it to its
 * subnet. On any refusal the interface and the subnets are as they were.
 */
export function applyVpcPart(
  vpcs: VpcStore,
  rec: InstanceRecord,
  iface: SimLinodeInterface,
  vpc: Body,
): void {
  const current = iface.vpc;
  if (vpc.ipv6 !== undefined && vpc.ipv6 !== null) {
    // Not emulated over HTTP: seed VPC IPv6 with `world.addInstance({ vpc: { ipv6: true } })`.
    throw fieldError("vpc.ipv6", "The emulator sets up VPC interface IPv6 only through its world");
  }
  const plan = planVpc(vpcs, rec, current, vpc);
  const info = vpcs.subnetInfo(plan.subnetId);
  if (!info) throw new ApiError(500, [{ reason: "Subnet missing" }]);
  // The IPv6 range stays with the interface while it stays in its subnet (a routed-range update).
  const ipv6 = current?.subnet_id === plan.subnetId ? current.ipv6 : undefined;
  if (current) vpcs.detach(current.subnet_id, iface.id, true);
  const keep = current?.ipv4.addresses.map((a) => ({ ...a, wanted: a.address }));
  try {
    const addresses = reserve(vpcs, plan, plan.addresses ?? keep ?? []);
    try {
      const target = { subnetId: plan.subnetId, interfaceId: iface.id, generation: "linode" } as const;
      const ranges = plan.ranges === undefined
        ? current?.ipv4.ranges.map((r) => r.range) ?? []
        : checkRanges(vpcs, target, plan.ranges, (i) => `vpc.ipv4.ranges[${i}].range`);
      const ipv4 = { addresses, ranges: ranges.map((range) => ({ range })) };
      iface.vpc = { vpc_id: info.vpcId, subnet_id: plan.subnetId, ipv4, ...(ipv6 ? { ipv6 } : {}) };
    } catch (e) {
      for (const a of addresses) vpcs.release(plan.subnetId, a.address);
      throw e;
    }
  } catch (e) {
    if (current) restore(vpcs, rec, iface, current);
    throw e;
  }
  if (current && !ipv6) vpcs.releaseIpv6(current.subnet_id, iface.id);
  vpcs.attach(plan.subnetId, linodeMember(rec.linode, iface));
}

function restore(
  vpcs: VpcStore,
  rec: InstanceRecord,
  iface: SimLinodeInterface,
  vpc: SimVpcInterfaceData,
): void {
  for (const a of vpc.ipv4.addresses) vpcs.allocate(vpc.subnet_id, a.address, "vpc.ipv4.addresses");
  iface.vpc = vpc;
  vpcs.attach(vpc.subnet_id, linodeMember(rec.linode, iface));
}

/** True when a body would change the interface's addresses (Network Helper wants the Linode off then). */
export function changesAddresses(iface: SimLinodeInterface, vpc: Body): boolean {
  const ipv4 = isRecord(vpc.ipv4) ? vpc.ipv4 : undefined;
  if (iface.vpc && vpc.subnet_id !== iface.vpc.subnet_id) return true;
  if (!Array.isArray(ipv4?.addresses)) return false;
  const now = iface.vpc?.ipv4.addresses ?? [];
  const asked = ipv4.addresses;
  return asked.length !== now.length || asked.some((a, i) => {
    const cur = now[i];
    return !isRecord(a) || !cur || a.address !== cur.address || (a.primary ?? cur.primary) !== cur.primary;
  });
}
