/**
 * `PUT /linode/instances/{id}/configs/{configId}/interfaces/{interfaceId}`, as the API documents it
 * (techdocs `put-linode-config-interface`): a `public` interface takes `primary`; a `vpc` interface takes
 * `ip_ranges`, `ipv4` (`vpc`, `nat_1_1`) and `primary`; a `vlan` interface takes nothing.
 */
import { ApiError, type Body, fieldError, isRecord, optBool } from "./http.ts";
import { publicIpv4s } from "./iface_members.ts";
import type { SimInterface } from "./instance_shape.ts";
import { parseIpv4 } from "./ip.ts";
import type { InstanceRecord, InstanceStore } from "./store_instances.ts";
import type { VpcStore } from "./store_vpcs.ts";
import { checkRanges } from "./vpc_ranges.ts";

/** Which config profile interface a PUT addresses. */
export interface ConfigIfaceIds {
  linodeId: number;
  configId: number;
  ifaceId: number;
}

/**
 * Attributes fixed at creation: "You need to add a new configuration profile interface ... if you need new
 * values for any other attribute". Sending the current value is accepted; read-only keys (`id`, `active`)
 * and unknown keys are ignored, which the docs leave open.
 */
const FIXED = ["purpose", "vpc_id", "subnet_id", "label", "ipam_address"] as const;

/** The 400 a config-interface write gets on a Linode using Linode interfaces (seen in the wild). */
export function linodeGenerationError(): ApiError {
  return new ApiError(400, [{
    field: "interfaces",
    reason: "Option cannot be set on a Linode that is configured to use Linode Interfaces",
  }]);
}

function checkFixed(iface: SimInterface, body: Body): void {
  for (const key of FIXED) {
    if (body[key] !== undefined && body[key] !== iface[key]) {
      throw fieldError(key, `${key} can't be updated; add a new interface to use another value`);
    }
  }
  if (iface.purpose === "vlan") {
    throw new ApiError(400, [{ reason: "Interfaces with a purpose of vlan can't be updated" }]);
  }
  if (iface.purpose !== "vpc") {
    for (const key of ["ip_ranges", "ipv4"] as const) {
      if (body[key] !== undefined && body[key] !== null) {
        throw fieldError(key, `${key} is not allowed for interfaces that do not have a purpose set to vpc.`);
      }
    }
  }
}

/** `ipv4.nat_1_1`: "any" takes the Linode's public IPv4, "" removes, null keeps, else one of its own. */
function natOf(rec: InstanceRecord, value: unknown, current: string | null): string | null {
  if (value === undefined || value === null) return current;
  if (value === "") return null;
  const pub = publicIpv4s(rec.linode);
  if (value === "any") {
    if (!pub[0]) throw fieldError("ipv4.nat_1_1", "This Linode has no public IPv4 address");
    return pub[0];
  }
  if (typeof value !== "string" || parseIpv4(value) === undefined || !pub.includes(value)) {
    throw fieldError("ipv4.nat_1_1", "Must be `any` or a public IPv4 address assigned to this Linode");
  }
  return value;
}

/** `ip_ranges`: omitted or null keeps them (the docs only say "omit"), `[]` removes them all. */
function rangesOf(vpcs: VpcStore, iface: SimInterface, value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw fieldError("ip_ranges", "ip_ranges must be an array of IPv4 CIDR ranges");
  const target = {
    subnetId: iface.subnet_id ?? 0,
    interfaceId: iface.id,
    generation: "legacy_config",
  } as const;
  return checkRanges(vpcs, target, value, (i) => `ip_ranges[${i}]`);
}

/** Moves the VPC address (documented as updatable), keeping the old one on a refusal. */
function moveAddress(vpcs: VpcStore, iface: SimInterface, wanted: unknown): void {
  const ipv4 = iface.ipv4;
  if (wanted === undefined || wanted === null || !ipv4 || wanted === ipv4.vpc) return;
  if (typeof wanted !== "string") throw fieldError("ipv4.vpc", "Must be an IPv4 address");
  const subnetId = iface.subnet_id ?? 0;
  const old = ipv4.vpc ?? undefined;
  if (old !== undefined) vpcs.release(subnetId, old);
  try {
    ipv4.vpc = vpcs.allocate(subnetId, wanted, "ipv4.vpc");
  } catch (e) {
    if (old !== undefined) vpcs.allocate(subnetId, old, "ipv4.vpc");
    throw e;
  }
}

/** Applies the PUT and returns the interface; every refusal is a 400 that changes nothing. */
export function updateConfigInterface(
  instances: InstanceStore,
  ids: ConfigIfaceIds,
  body: Body,
): SimInterface {
  const rec = instances.require(ids.linodeId);
  if (rec.linode.interface_generation === "linode") throw linodeGenerationError();
  const iface = instances.interface(ids.linodeId, ids.configId, ids.ifaceId);
  checkFixed(iface, body);
  if (body.ipv6 !== undefined && body.ipv6 !== null) {
    // Not emulated over HTTP: seed VPC IPv6 with `world.addInstance({ vpc: { ipv6: true } })`.
    throw fieldError("ipv6", "The emulator sets up VPC interface IPv6 only through its world");
  }
  if (body.ipv4 !== undefined && body.ipv4 !== null && !isRecord(body.ipv4)) {
    throw fieldError("ipv4", "ipv4 must be an object");
  }
  const ipv4 = isRecord(body.ipv4) ? body.ipv4 : {};
  const primary = optBool(body, "primary");
  const ranges = rangesOf(instances.vpcs, iface, body.ip_ranges);
  const nat = iface.ipv4 ? natOf(rec, ipv4.nat_1_1, iface.ipv4.nat_1_1 ?? null) : null;
  const oldRanges = iface.ip_ranges;
  // New ranges are in place before the address moves, so the address may not land in one of them.
  if (ranges !== undefined) iface.ip_ranges = ranges;
  try {
    moveAddress(instances.vpcs, iface, ipv4.vpc);
  } catch (e) {
    iface.ip_ranges = oldRanges;
    throw e;
  }
  if (iface.ipv4) iface.ipv4.nat_1_1 = nat;
  if (primary === true) { for (const other of rec.config.interfaces) other.primary = false; }
  if (primary !== undefined) iface.primary = primary;
  instances.touch(ids.linodeId);
  return iface;
}
