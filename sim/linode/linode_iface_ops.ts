/**
 * Linode interfaces (`interface_generation: "linode"`): `/linode/instances/{id}/interfaces[/{id}]`, as the
 * techdocs pages `post-linode-interface`, `put-linode-interface` and `delete-linode-interface` document them.
 */
import { ApiError, apiTime, type Body, fieldError, isRecord, notFound } from "./http.ts";
import { newLinodeInterface, publicData, publicIpv4s } from "./iface_members.ts";
import type { SimLinodeInterface } from "./instance_shape.ts";
import { applyVpcPart, changesAddresses, optObject } from "./linode_iface_vpc.ts";
import type { InstanceRecord, InstanceStore } from "./store_instances.ts";
import type { FirewallStore } from "./store_firewalls.ts";
import type { VpcStore } from "./store_vpcs.ts";
import type { Ids } from "./ids.ts";
import type { Clock } from "../../common/clock.ts";

const KINDS = ["public", "vpc", "vlan"] as const;
type Kind = typeof KINDS[number];

/**
 * The parts of the Linode world the interface operations use. `World` implements it; naming the parts here,
 * not `World`, keeps `world.ts` (which updates interfaces) and this file out of an import circle.
 */
export interface IfaceWorld {
  readonly instances: InstanceStore;
  readonly firewallStore: FirewallStore;
  readonly vpcs: VpcStore;
  readonly ids: Ids;
  readonly clock: Clock;
}

/**
 * The 400 for a Linode interface call on a Linode using config profile interfaces. The docs only say
 * "The Linode needs to use `interfaces` and not configuration profile interfaces"; the reason mirrors the
 * one the API gives the other way round.
 */
export function legacyGenerationError(): ApiError {
  return new ApiError(400, [{
    reason: "Linode interfaces can't be used on a Linode that is configured to use legacy config interfaces",
  }]);
}

/** The record of a Linode that uses Linode interfaces (404 when unknown, 400 on the other generation). */
export function linodeGenRecord(world: IfaceWorld, linodeId: number): InstanceRecord {
  const rec = world.instances.require(linodeId);
  if (rec.linode.interface_generation !== "linode") throw legacyGenerationError();
  return rec;
}

/** One Linode interface, or a 404. */
export function linodeInterface(rec: InstanceRecord, ifaceId: number): SimLinodeInterface {
  const iface = rec.interfaces.find((i) => i.id === ifaceId);
  if (!iface) throw notFound();
  return iface;
}

function kindOf(iface: SimLinodeInterface): Kind {
  return iface.vpc ? "vpc" : iface.vlan ? "vlan" : "public";
}

/** "You can create, delete, or update interfaces when the Linode is either powered off or being created." */
function requireOff(rec: InstanceRecord, action: string): void {
  if (rec.linode.status !== "offline" && rec.linode.status !== "provisioning") {
    throw new ApiError(400, [{ reason: `The Linode must be powered off to ${action} an interface` }]);
  }
}

function hasIpv4(iface: SimLinodeInterface): boolean {
  return (iface.vpc?.ipv4.addresses.length ?? iface.public?.ipv4.addresses.length ?? 0) > 0;
}

type RoutePlan = { ipv4?: true; ipv6?: true };

/**
 * `default_route`: `true` gives the interface the role and takes it from the others; `false` is refused
 * while the interface can hold the role ("If the interface has an IPv4 address, the value can't be set as
 * false"); null keeps it. A VPC interface can hold the IPv4 route only, a VLAN interface neither.
 * `v4After`: whether the interface has an IPv4 address once the request is applied.
 */
function planDefaultRoute(kind: Kind, v4After: boolean, body: Body): RoutePlan {
  const route = optObject(body, "default_route");
  const plan: RoutePlan = {};
  for (const family of ["ipv4", "ipv6"] as const) {
    const value = route?.[family];
    if (value === undefined || value === null) continue;
    const field = `default_route.${family}`;
    if (typeof value !== "boolean") throw fieldError(field, `${family} must be a boolean`);
    const able = family === "ipv4" ? v4After && kind !== "vlan" : kind === "public";
    if (value && !able) throw fieldError(field, `This interface can't be the ${family} default route`);
    if (!value && able) throw fieldError(field, "Set the default route on another interface instead");
    if (value) plan[family] = true;
  }
  return plan;
}

function commitDefaultRoute(rec: InstanceRecord, iface: SimLinodeInterface, plan: RoutePlan): void {
  for (const family of ["ipv4", "ipv6"] as const) {
    if (!plan[family]) continue;
    for (const other of rec.interfaces) delete other.default_route[family];
    iface.default_route[family] = true;
  }
}

function checkVlan(vlan: Body): { vlan_label: string; ipam_address: string | null } {
  const label = vlan.vlan_label;
  if (typeof label !== "string" || !/^[a-zA-Z0-9-]{1,64}$/.test(label)) {
    throw fieldError("vlan.vlan_label", "vlan_label must be 1-64 ASCII letters, digits and dashes");
  }
  const ipam = vlan.ipam_address ?? null;
  if (ipam !== null && (typeof ipam !== "string" || !/^[\d.]+\/\d{1,2}$/.test(ipam))) {
    throw fieldError("vlan.ipam_address", "ipam_address must be an IPv4 address in CIDR notation");
  }
  return { vlan_label: label, ipam_address: ipam };
}

/** Public IPv4 addresses: the sim cannot allocate new public addresses, so `auto` and explicit ones name the Linode's own. */
function publicAddresses(rec: InstanceRecord, pub: Body): string[] | undefined {
  const ipv4 = optObject(pub, "ipv4", "public.ipv4");
  const raw = ipv4?.addresses;
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw fieldError("public.ipv4.addresses", "addresses must be an array");
  const own = publicIpv4s(rec.linode);
  return raw.map((a, i) => {
    const address = isRecord(a) ? a.address ?? "auto" : undefined;
    const found = address === "auto" ? own[i] : own.find((ip) => ip === address);
    if (!found) {
      throw fieldError(`public.ipv4.addresses[${i}].address`, "Not a public IPv4 address of this Linode");
    }
    return found;
  });
}

function checkPublicIpv6(pub: Body): void {
  const ranges = optObject(pub, "ipv6", "public.ipv6")?.ranges;
  if (Array.isArray(ranges) && ranges.length > 0) {
    // The API routes /64 and /56 ranges here; the sim has no IPv6 ranges to hand out.
    throw fieldError("public.ipv6.ranges", "The sim does not allocate IPv6 ranges");
  }
}

function typeOfBody(body: Body): Kind {
  const set = KINDS.filter((k) => body[k] !== undefined && body[k] !== null);
  if (set.length !== 1) throw new ApiError(400, [{ reason: "Set exactly one of vpc, public or vlan" }]);
  return set[0] as Kind;
}

function checkLimits(rec: InstanceRecord, kind: Kind, body: Body): void {
  if (rec.interfaces.length >= 3) {
    throw new ApiError(400, [{ reason: "A Linode can have up to three interfaces" }]);
  }
  if (kind !== "vlan" && rec.interfaces.some((i) => kindOf(i) === kind)) {
    throw fieldError(kind, `Only one ${kind} interface is allowed on a Linode`);
  }
  const label = isRecord(body.vlan) ? body.vlan.vlan_label : undefined;
  if (kind === "vlan" && rec.interfaces.some((i) => i.vlan?.vlan_label === label)) {
    throw fieldError("vlan.vlan_label", "The Linode is already attached to this VLAN");
  }
}

/** `POST /linode/instances/{id}/interfaces`. */
export function createLinodeInterface(world: IfaceWorld, linodeId: number, body: Body): SimLinodeInterface {
  const rec = linodeGenRecord(world, linodeId);
  requireOff(rec, "add");
  const kind = typeOfBody(body);
  checkLimits(rec, kind, body);
  const firewall = body.firewall_id;
  if (firewall !== undefined && firewall !== null) {
    if (typeof firewall !== "number" || !world.firewallStore.list().some((f) => f.id === firewall)) {
      throw fieldError("firewall_id", "Firewall not found");
    }
  }
  const now = apiTime(world.clock.now());
  const iface = newLinodeInterface(world.ids.next("interface"), now, { default_route: {} });
  if (kind === "vlan") iface.vlan = checkVlan(body.vlan as Body);
  if (kind === "public") {
    checkPublicIpv6(body.public as Body);
    iface.public = publicData(
      publicAddresses(rec, body.public as Body) ?? publicIpv4s(rec.linode).slice(0, 1),
      rec.slaac,
    );
  }
  const route = planDefaultRoute(kind, kind === "vpc" || hasIpv4(iface), body);
  if (kind === "vpc") applyVpcPart(world.vpcs, rec, iface, body.vpc as Body);
  commitDefaultRoute(rec, iface, route);
  rec.interfaces.push(iface);
  return iface;
}

function checkType(iface: SimLinodeInterface, body: Body): void {
  for (const kind of KINDS) {
    if (kind !== kindOf(iface) && body[kind] !== undefined && body[kind] !== null) {
      throw fieldError(kind, "The interface type can't be changed");
    }
  }
}

function updateVlan(iface: SimLinodeInterface, vlan: Body | undefined): void {
  if (!vlan || !iface.vlan) return;
  if (vlan.vlan_label !== undefined && vlan.vlan_label !== iface.vlan.vlan_label) {
    throw fieldError("vlan.vlan_label", "vlan_label can't be updated");
  }
  const ipam = vlan.ipam_address;
  if (ipam !== undefined && ipam !== null && ipam !== iface.vlan.ipam_address) {
    throw fieldError("vlan.ipam_address", "ipam_address can't be updated");
  }
}

/**
 * `PUT /linode/instances/{id}/interfaces/{interfaceId}`. Ranges and NAT change on a running Linode; with
 * Network Helper on (the sim's only setting) addresses and `primary` need it powered off, as documented.
 */
export function updateLinodeInterface(
  world: IfaceWorld,
  ids: { linodeId: number; ifaceId: number },
  body: Body,
): SimLinodeInterface {
  const rec = linodeGenRecord(world, ids.linodeId);
  const iface = linodeInterface(rec, ids.ifaceId);
  checkType(iface, body);
  const vpc = optObject(body, "vpc");
  const pub = optObject(body, "public");
  updateVlan(iface, optObject(body, "vlan"));
  if (vpc && (vpc.subnet_id === undefined || vpc.subnet_id === null)) {
    throw fieldError("vpc.subnet_id", "subnet_id is required");
  }
  if (vpc && changesAddresses(iface, vpc) && rec.linode.status !== "offline") {
    throw fieldError(
      "vpc.ipv4.addresses",
      "Shut the Linode down to change addresses while Network Helper is on",
    );
  }
  if (pub) checkPublicIpv6(pub);
  const addresses = pub && publicAddresses(rec, pub);
  const now = iface.public?.ipv4.addresses.map((x) => x.address);
  if (addresses && JSON.stringify(addresses) !== JSON.stringify(now) && rec.linode.status !== "offline") {
    throw fieldError(
      "public.ipv4.addresses",
      "Shut the Linode down to change addresses while Network Helper is on",
    );
  }
  const v4After = iface.vpc !== null || (addresses ?? iface.public?.ipv4.addresses ?? []).length > 0;
  const route = planDefaultRoute(kindOf(iface), v4After, body);
  if (vpc) applyVpcPart(world.vpcs, rec, iface, vpc);
  commitDefaultRoute(rec, iface, route);
  if (addresses && iface.public) iface.public = publicData(addresses, rec.slaac);
  iface.version++;
  iface.updated = apiTime(world.clock.now());
  return iface;
}

/** `DELETE /linode/instances/{id}/interfaces/{interfaceId}`: powered off only; frees its VPC addresses. */
export function deleteLinodeInterface(world: IfaceWorld, ids: { linodeId: number; ifaceId: number }): void {
  const rec = linodeGenRecord(world, ids.linodeId);
  const iface = linodeInterface(rec, ids.ifaceId);
  requireOff(rec, "delete");
  if (iface.vpc) world.vpcs.detach(iface.vpc.subnet_id, iface.id);
  rec.interfaces = rec.interfaces.filter((i) => i !== iface);
}

/** `GET /linode/instances/{id}/interfaces/settings`: Network Helper and the default-route holders. */
export function interfaceSettings(rec: InstanceRecord) {
  const holder = (f: "ipv4" | "ipv6") => rec.interfaces.find((i) => i.default_route[f])?.id ?? null;
  const eligible = (f: "ipv4" | "ipv6") =>
    rec.interfaces.filter((i) => f === "ipv4" ? hasIpv4(i) && !i.vlan : i.public !== null).map((i) => i.id);
  return {
    network_helper: true,
    default_route: {
      ipv4_interface_id: holder("ipv4"),
      ipv4_eligible_interface_ids: eligible("ipv4"),
      ipv6_interface_id: holder("ipv6"),
      ipv6_eligible_interface_ids: eligible("ipv6"),
    },
  };
}
