/** VPCs and subnets: address allocation, membership of Linode interfaces, and the VPC IP listing. */
import type { Interface, Subnet, VPC, VPCIP } from "@linode/api-v4";
import type { Clock } from "../../common/clock.ts";
import { ApiError, apiTime, type Body, fieldError, isRecord, optString } from "./http.ts";
import type { Ids } from "./ids.ts";
import {
  type Cidr,
  cidrContains,
  cidrsOverlap,
  formatIpv4,
  isPrivateIpv4,
  maskOf,
  parseCidr,
  parseIpv4,
  sizeOf,
} from "./ip.ts";

/** Input of `world.createVpc`. */
export interface CreateVpcInput {
  label: string;
  region: string;
  description?: string;
  subnets?: { label: string; ipv4: string }[];
}

/** A `POST /vpcs` body (also `POST /__admin/world/vpcs`) → `create` input; wrong types are 400s on the field. */
export function parseVpcInput(body: Body): CreateVpcInput {
  const raw = body.subnets ?? [];
  if (!Array.isArray(raw)) throw fieldError("subnets", "subnets must be an array");
  return {
    label: optString(body, "label") ?? "",
    region: optString(body, "region") ?? "",
    description: optString(body, "description"),
    subnets: raw.map((s, i) => {
      if (!isRecord(s)) throw fieldError(`subnets[${i}]`, "Must be an object");
      const prefix = `subnets[${i}].`;
      return { label: optString(s, "label", prefix) ?? "", ipv4: optString(s, "ipv4", prefix) ?? "" };
    }),
  };
}

/** A Linode interface attached to a subnet. */
export interface VpcMember {
  linodeId: number;
  configId: number;
  region: string;
  iface: Interface;
}

/** One `GET /vpcs/ips` entry; `nat_1_1` is null without 1:1 NAT, as the API returns it. */
export type VpcIpEntry = Omit<VPCIP, "nat_1_1"> & { nat_1_1: string | null };

interface SubnetState {
  vpcId: number;
  subnet: Subnet;
  cidr: Cidr;
  used: Set<number>;
  members: Map<number, VpcMember>;
}

/** VPC and subnet labels: 1–64 ASCII letters, digits and dashes. */
function checkVpcLabel(label: string, field: string): void {
  if (!/^[a-zA-Z0-9-]{1,64}$/.test(label)) {
    throw fieldError(field, "Label must be 1-64 characters of ASCII letters, digits and dashes");
  }
}

/** Owns VPCs and their subnets. */
export class VpcStore {
  #vpcs = new Map<number, VPC>();
  #subnets = new Map<number, SubnetState>();
  readonly #ids: Ids;
  readonly #clock: Clock;
  /** NodeBalancers holding ranges of a subnet (set by the world; they block deletes and show in `subnet`). */
  nodeBalancersOf: (subnetId: number) => Subnet["nodebalancers"] = () => [];

  constructor(ids: Ids, clock: Clock) {
    this.#ids = ids;
    this.#clock = clock;
  }

  /** Creates a VPC with its subnets; validation errors are 400s with `field`. */
  create(input: CreateVpcInput): VPC {
    if (!input.region) throw fieldError("region", "region is required");
    checkVpcLabel(input.label ?? "", "label");
    const now = apiTime(this.#clock.now());
    const id = this.#ids.next("vpc");
    const specs = input.subnets ?? [];
    const cidrs = specs.map((s, i) => this.#checkSubnet(s, i));
    cidrs.forEach((c, i) => {
      if (cidrs.slice(0, i).some((o) => cidrsOverlap(o, c))) {
        throw fieldError(`subnets[${i}].ipv4`, "Subnet ranges must not overlap");
      }
    });
    const vpc: VPC = {
      id,
      label: input.label,
      description: input.description ?? "",
      region: input.region,
      subnets: [],
      created: now,
      updated: now,
    };
    specs.forEach((s, i) => vpc.subnets.push(this.#addSubnet(id, s, cidrs[i] as Cidr, now)));
    this.#vpcs.set(id, vpc);
    return this.get(id) as VPC;
  }

  #checkSubnet(spec: { label: string; ipv4: string }, i: number): Cidr {
    checkVpcLabel(spec.label ?? "", `subnets[${i}].label`);
    const cidr = parseCidr(spec.ipv4 ?? "");
    if (!cidr || !isPrivateIpv4(spec.ipv4.split("/")[0] ?? "") || cidr.prefix > 29) {
      throw fieldError(`subnets[${i}].ipv4`, "Must be a valid private IPv4 CIDR range of size /29 or larger");
    }
    return cidr;
  }

  #addSubnet(vpcId: number, spec: { label: string; ipv4: string }, cidr: Cidr, now: string): Subnet {
    const subnet: Subnet = {
      id: this.#ids.next("subnet"),
      label: spec.label,
      ipv4: spec.ipv4,
      linodes: [],
      nodebalancers: [],
      created: now,
      updated: now,
    };
    this.#subnets.set(subnet.id, { vpcId, subnet, cidr, used: new Set(), members: new Map() });
    return subnet;
  }

  /** The wire shape of one VPC, subnets listing their Linodes. */
  get(id: number): VPC | undefined {
    const vpc = this.#vpcs.get(id);
    if (!vpc) return undefined;
    return { ...vpc, subnets: vpc.subnets.map((s) => this.subnet(s.id) as Subnet) };
  }

  /**
   * Deletes a VPC and its subnets: false when there is no such VPC; a 400 while any interface is still
   * attached to one of its subnets, as the API refuses it.
   */
  delete(id: number): boolean {
    const vpc = this.#vpcs.get(id);
    if (!vpc) return false;
    const inUse = (id: number) =>
      (this.#subnets.get(id)?.members.size ?? 0) > 0 || this.nodeBalancersOf(id).length > 0;
    if (vpc.subnets.some((s) => inUse(s.id))) {
      throw new ApiError(400, [{
        reason: "Cannot delete a VPC while Linodes or NodeBalancers use its subnets",
      }]);
    }
    for (const s of vpc.subnets) this.#subnets.delete(s.id);
    this.#vpcs.delete(id);
    return true;
  }

  /** Every VPC, by id. */
  list(): VPC[] {
    return [...this.#vpcs.keys()].map((id) => this.get(id) as VPC);
  }

  /** One subnet in wire shape: `linodes: [{id, interfaces: [{id, active, config_id}]}]`. */
  subnet(subnetId: number): Subnet | undefined {
    const state = this.#subnets.get(subnetId);
    if (!state) return undefined;
    const byLinode = new Map<number, Subnet["linodes"][number]>();
    for (const m of state.members.values()) {
      const entry = byLinode.get(m.linodeId) ?? { id: m.linodeId, interfaces: [] };
      entry.interfaces.push({ id: m.iface.id, active: m.iface.active, config_id: m.configId });
      byLinode.set(m.linodeId, entry);
    }
    return {
      ...state.subnet,
      linodes: [...byLinode.values()],
      nodebalancers: this.nodeBalancersOf(subnetId),
    };
  }

  /** The VPC a subnet belongs to. */
  vpcOfSubnet(subnetId: number): number | undefined {
    return this.#subnets.get(subnetId)?.vpcId;
  }

  /** Reserves an address in a subnet: `wanted` if free, else the next free host after the gateway. */
  allocate(subnetId: number, wanted?: string): string {
    const state = this.#subnets.get(subnetId);
    if (!state) throw fieldError("subnet_id", "Subnet not found");
    if (wanted !== undefined) {
      const ip = parseIpv4(wanted);
      if (
        ip === undefined || !cidrContains(state.cidr, ip) || ip <= state.cidr.base + 1 || state.used.has(ip)
      ) {
        throw fieldError("ipv4.vpc", `Address ${wanted} is not available in subnet ${subnetId}`);
      }
      state.used.add(ip);
      return wanted;
    }
    for (let ip = state.cidr.base + 2; ip < state.cidr.base + sizeOf(state.cidr) - 1; ip++) {
      if (!state.used.has(ip)) {
        state.used.add(ip);
        return formatIpv4(ip);
      }
    }
    throw new ApiError(400, [{ field: "subnet_id", reason: "No addresses are available in this subnet" }]);
  }

  /** Frees an address taken with `allocate` outside any interface (a NodeBalancer's VPC range). */
  release(subnetId: number, ip: string): void {
    const n = parseIpv4(ip);
    if (n !== undefined) this.#subnets.get(subnetId)?.used.delete(n);
  }

  /** Records an interface as a member of its subnet. */
  attach(subnetId: number, member: VpcMember): void {
    this.#subnets.get(subnetId)?.members.set(member.iface.id, member);
  }

  /** Removes an interface from its subnet and frees its address. */
  detach(subnetId: number, ifaceId: number): void {
    const state = this.#subnets.get(subnetId);
    const member = state?.members.get(ifaceId);
    if (!state || !member) return;
    state.members.delete(ifaceId);
    const ip = parseIpv4(member.iface.ipv4?.vpc ?? "");
    if (ip !== undefined) state.used.delete(ip);
  }

  /** The first range of another interface in the same VPC that overlaps `cidr`, if any. */
  rangeConflict(vpcId: number, ifaceId: number, cidr: Cidr): string | undefined {
    for (const state of this.#subnets.values()) {
      if (state.vpcId !== vpcId) continue;
      for (const m of state.members.values()) {
        if (m.iface.id === ifaceId) continue;
        const hit = (m.iface.ip_ranges ?? []).find((r) => {
          const other = parseCidr(r);
          return other !== undefined && cidrsOverlap(other, cidr);
        });
        if (hit !== undefined) return hit;
      }
    }
    return undefined;
  }

  /** VPC IP entries (addresses and ip_ranges) of one VPC or all. */
  ips(vpcId?: number): VpcIpEntry[] {
    const out: VpcIpEntry[] = [];
    for (const state of this.#subnets.values()) {
      if (vpcId !== undefined && state.vpcId !== vpcId) continue;
      for (const m of state.members.values()) out.push(...this.#memberIps(state, m));
    }
    return out;
  }

  /** VPC IP entries of one interface (for `GET /linode/instances/{id}/ips`). */
  ipsOfInterface(subnetId: number, ifaceId: number): VpcIpEntry[] {
    const state = this.#subnets.get(subnetId);
    const member = state?.members.get(ifaceId);
    return state && member ? this.#memberIps(state, member) : [];
  }

  #memberIps(state: SubnetState, m: VpcMember): VpcIpEntry[] {
    const base = {
      active: m.iface.active,
      config_id: m.configId,
      interface_id: m.iface.id,
      linode_id: m.linodeId,
      nodebalancer_id: null,
      region: m.region,
      subnet_id: state.subnet.id,
      subnet_mask: formatIpv4(maskOf(state.cidr.prefix)),
      vpc_id: state.vpcId,
      ipv6_addresses: [],
      ipv6_is_public: null,
      ipv6_range: null,
    };
    const address: VpcIpEntry = {
      ...base,
      address: m.iface.ipv4?.vpc ?? null,
      address_range: null,
      gateway: formatIpv4(state.cidr.base + 1),
      nat_1_1: m.iface.ipv4?.nat_1_1 ?? null,
      prefix: state.cidr.prefix,
    };
    const ranges = (m.iface.ip_ranges ?? []).map((range): VpcIpEntry => ({
      ...base,
      address: null,
      address_range: range,
      gateway: null,
      nat_1_1: null,
      prefix: null,
    }));
    return [address, ...ranges];
  }

  /** Forgets every VPC. */
  reset(): void {
    this.#vpcs.clear();
    this.#subnets.clear();
  }
}
