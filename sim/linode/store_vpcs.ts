/** VPCs and subnets: address allocation and the interfaces (of either generation) attached to subnets. */
import type { Subnet, VPC } from "@linode/api-v4";
import type { Clock } from "../../common/clock.ts";
import { ApiError, apiTime, fieldError } from "./http.ts";
import type { Ids } from "./ids.ts";
import type { VpcMember } from "./vpc_member.ts";
import {
  type Cidr,
  cidrContains,
  cidrsOverlap,
  formatIpv4,
  isPrivateCidr,
  LINODE_PRIVATE_NETWORK,
  parseCidr,
  parseIpv4,
  sizeOf,
} from "./ip.ts";
import type { CreateVpcInput } from "./vpc_input.ts";
import { type Cidr6, formatCidr6 } from "../../common/net.ts";
import { pickInterfaceRange, planVpcIpv6 } from "./vpc_ipv6.ts";
import { memberEntries, memberIpv6Entries, nodeBalancerEntry, type VpcIpEntry } from "./vpc_ips.ts";

/** A subnet as the range rules see it. */
export interface SubnetInfo {
  id: number;
  vpcId: number;
  label: string;
  region: string;
  cidr: Cidr;
}

interface SubnetState extends SubnetInfo {
  subnet: Subnet;
  used: Set<number>;
  members: Map<number, VpcMember>;
  /** The subnet's IPv6 range, and the SLAAC `/64` of each interface holding one. */
  ipv6?: Cidr6;
  ipv6Used: Map<number, Cidr6>;
}

/** VPC and subnet labels: 1–64 ASCII letters, digits and dashes. */
function checkVpcLabel(label: string, field: string): void {
  if (!/^[a-zA-Z0-9-]{1,64}$/.test(label)) {
    throw fieldError(field, "Label must be 1-64 characters of ASCII letters, digits and dashes");
  }
}

function checkSubnet(spec: { label: string; ipv4: string }, i: number): Cidr {
  checkVpcLabel(spec.label ?? "", `subnets[${i}].label`);
  const cidr = parseCidr(spec.ipv4 ?? "");
  const field = `subnets[${i}].ipv4`;
  if (!cidr || !isPrivateCidr(cidr) || cidr.prefix > 29) {
    throw fieldError(field, "Must be a valid private IPv4 CIDR range of size /29 or larger");
  }
  if (cidrsOverlap(cidr, LINODE_PRIVATE_NETWORK)) {
    throw fieldError(field, "The range must not overlap with 192.168.128.0/17");
  }
  return cidr;
}

/** True for the first two and last two addresses of a subnet, which the API never assigns. */
function isReserved(cidr: Cidr, ip: number): boolean {
  return ip <= cidr.base + 1 || ip >= cidr.base + sizeOf(cidr) - 2;
}

/** Owns VPCs and their subnets. */
export class VpcStore {
  #vpcs = new Map<number, VPC>();
  #subnets = new Map<number, SubnetState>();
  readonly #parsedRanges = new Map<string, Cidr | undefined>();
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
    const specs = input.subnets ?? [];
    const cidrs = specs.map((s, i) => checkSubnet(s, i));
    cidrs.forEach((c, i) => {
      if (cidrs.slice(0, i).some((o) => cidrsOverlap(o, c))) {
        throw fieldError(`subnets[${i}].ipv4`, "Subnet ranges must not overlap");
      }
    });
    const taken = [...this.#vpcs.values()].flatMap((v) => v.ipv6 ?? []).map((r) => r.range ?? "");
    const v6 = planVpcIpv6(input, taken);
    const id = this.#ids.next("vpc");
    const vpc: VPC = {
      id,
      label: input.label,
      description: input.description ?? "",
      region: input.region,
      subnets: [],
      created: now,
      updated: now,
    };
    // Without IPv6 the key is left out (the API's shape for such VPCs is not documented).
    if (v6.vpc) vpc.ipv6 = [{ range: formatCidr6(v6.vpc) }];
    specs.forEach((s, i) => vpc.subnets.push(this.#addSubnet(vpc, s, cidrs[i] as Cidr, now, v6.subnets[i])));
    this.#vpcs.set(id, vpc);
    return this.get(id) as VPC;
  }

  #addSubnet(vpc: VPC, spec: { label: string; ipv4: string }, cidr: Cidr, now: string, ipv6?: Cidr6): Subnet {
    const id = this.#ids.next("subnet");
    const subnet: Subnet = {
      id,
      label: spec.label,
      ipv4: spec.ipv4,
      linodes: [],
      nodebalancers: [],
      created: now,
      updated: now,
    };
    if (ipv6) subnet.ipv6 = [{ range: formatCidr6(ipv6) }];
    const info = { id, vpcId: vpc.id, label: spec.label, region: vpc.region, cidr };
    this.#subnets.set(id, {
      ...info,
      subnet,
      used: new Set(),
      members: new Map(),
      ipv6,
      ipv6Used: new Map(),
    });
    return subnet;
  }

  /**
   * The SLAAC `/64` an interface would get in its subnet: `wanted` when it lies in the subnet's IPv6 range
   * and is free, else the next free one. A 400 on `field` when the subnet has no IPv6 or none is left.
   * Reserves nothing, so a caller checks before allocating anything else.
   */
  planIpv6(subnetId: number, field: string, wanted?: Cidr6): Cidr6 {
    const state = this.#subnets.get(subnetId);
    if (!state?.ipv6) throw fieldError(field, `Subnet ${subnetId} has no IPv6 range`);
    return pickInterfaceRange(state.ipv6, [...state.ipv6Used.values()], field, wanted);
  }

  /** Gives an interface the SLAAC `/64` `planIpv6` chose (freed by `detach`); 400s as `planIpv6`. */
  allocateIpv6(subnetId: number, interfaceId: number, field: string, wanted?: Cidr6): Cidr6 {
    const range = this.planIpv6(subnetId, field, wanted);
    this.#subnets.get(subnetId)?.ipv6Used.set(interfaceId, range);
    return range;
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
    for (const m of this.#sorted(state)) {
      const entry = byLinode.get(m.linodeId) ?? { id: m.linodeId, interfaces: [] };
      // api-v4 types config_id as a number; the API sends null for Linode interfaces.
      const configId = m.configId as number;
      entry.interfaces.push({ id: m.interfaceId, active: m.state().active, config_id: configId });
      byLinode.set(m.linodeId, entry);
    }
    return {
      ...state.subnet,
      linodes: [...byLinode.values()],
      nodebalancers: this.nodeBalancersOf(subnetId),
    };
  }

  /** A subnet's VPC, label, region and range. */
  subnetInfo(subnetId: number): SubnetInfo | undefined {
    const s = this.#subnets.get(subnetId);
    return s && { id: s.id, vpcId: s.vpcId, label: s.label, region: s.region, cidr: s.cidr };
  }

  /** The subnets of one VPC. */
  subnetsOf(vpcId: number): SubnetInfo[] {
    return [...this.#subnets.values()].filter((s) => s.vpcId === vpcId).map((s) =>
      this.subnetInfo(s.id) as SubnetInfo
    );
  }

  /** The VPC a subnet belongs to. */
  vpcOfSubnet(subnetId: number): number | undefined {
    return this.#subnets.get(subnetId)?.vpcId;
  }

  /**
   * A routed range's CIDR, parsed once per text: every range write checks overlaps against every range of
   * the VPC, and parsing each of them again made a cold start of 5,000 Nodes spend most of the emulator's
   * time in the parser (bench/startup_scaling.ts).
   */
  cidrOf(text: string): Cidr | undefined {
    if (!this.#parsedRanges.has(text)) this.#parsedRanges.set(text, parseCidr(text));
    return this.#parsedRanges.get(text);
  }

  /** Every interface attached to a subnet of one VPC. */
  membersOf(vpcId: number): VpcMember[] {
    return [...this.#subnets.values()].filter((s) => s.vpcId === vpcId).flatMap((s) => [
      ...s.members.values(),
    ]);
  }

  /** The first assigned address of a VPC that lies inside `block`, if any. */
  assignedIn(vpcId: number, block: Cidr): string | undefined {
    for (const s of this.#subnets.values()) {
      if (s.vpcId !== vpcId || !cidrsOverlap(s.cidr, block)) continue;
      for (const ip of s.used) if (cidrContains(block, ip)) return formatIpv4(ip);
    }
    return undefined;
  }

  /**
   * Reserves an address in a subnet: `wanted` when free, otherwise the next free host. As documented for
   * `ipv4.vpc`: not the first two or last two addresses, not another interface's address, not in a range.
   */
  allocate(subnetId: number, wanted: string | undefined, field: string): string {
    const state = this.#subnets.get(subnetId);
    if (!state) throw fieldError("subnet_id", "Subnet not found");
    // The VPC's ranges are read only once an address is neither reserved nor used: a NodeBalancer carving a
    // /30 walks past every used address, and reading every member's ranges for each made that O(Linodes^2).
    let ranges: Cidr[] | undefined;
    const inRange = (ip: number) => (ranges ??= this.#rangesOf(state.vpcId)).some((r) => cidrContains(r, ip));
    const free = (ip: number) => !isReserved(state.cidr, ip) && !state.used.has(ip) && !inRange(ip);
    if (wanted !== undefined) {
      const ip = parseIpv4(wanted);
      if (ip === undefined || !cidrContains(state.cidr, ip) || !free(ip)) {
        throw fieldError(field, `Address ${wanted} is not available in subnet ${subnetId}`);
      }
      state.used.add(ip);
      return wanted;
    }
    for (let ip = state.cidr.base + 2; ip < state.cidr.base + sizeOf(state.cidr) - 2; ip++) {
      if (free(ip)) {
        state.used.add(ip);
        return formatIpv4(ip);
      }
    }
    throw new ApiError(400, [{ field: "subnet_id", reason: "No addresses are available in this subnet" }]);
  }

  #rangesOf(vpcId: number): Cidr[] {
    const out: Cidr[] = [];
    for (const s of this.#subnets.values()) {
      if (s.vpcId !== vpcId) continue;
      for (const m of s.members.values()) {
        for (const r of m.ranges()) {
          const c = parseCidr(r);
          if (c) out.push(c);
        }
      }
    }
    return out;
  }

  /** Frees an address reserved with `allocate`. */
  release(subnetId: number, address: string): void {
    const ip = parseIpv4(address);
    if (ip !== undefined) this.#subnets.get(subnetId)?.used.delete(ip);
  }

  /** Records an interface as a member of its subnet (its addresses must be allocated already). */
  attach(subnetId: number, member: VpcMember): void {
    this.#subnets.get(subnetId)?.members.set(member.interfaceId, member);
  }

  /** Removes an interface from its subnet and frees its addresses (its IPv6 range too, unless `keepIpv6`). */
  detach(subnetId: number, interfaceId: number, keepIpv6 = false): void {
    const state = this.#subnets.get(subnetId);
    const member = state?.members.get(interfaceId);
    if (!state || !member) return;
    for (const a of member.state().addresses) this.release(subnetId, a.address);
    if (!keepIpv6) state.ipv6Used.delete(interfaceId);
    state.members.delete(interfaceId);
  }

  /** A subnet's IPv6 range, if it has one. */
  subnetIpv6(subnetId: number): Cidr6 | undefined {
    return this.#subnets.get(subnetId)?.ipv6;
  }

  /** Frees an interface's IPv6 range (it moved to another subnet). */
  releaseIpv6(subnetId: number, interfaceId: number): void {
    this.#subnets.get(subnetId)?.ipv6Used.delete(interfaceId);
  }

  /** Members in interface id order, which a re-attach (a moved address) does not change. */
  #sorted(state: SubnetState): VpcMember[] {
    return [...state.members.values()].sort((x, y) => x.interfaceId - y.interfaceId);
  }

  /** VPC IP entries (addresses and routed ranges) of one VPC or all. */
  ips(vpcId?: number): VpcIpEntry[] {
    const out: VpcIpEntry[] = [];
    for (const s of this.#subnets.values()) {
      if (vpcId !== undefined && s.vpcId !== vpcId) continue;
      for (const m of this.#sorted(s)) out.push(...memberEntries(s, m));
      for (const nb of this.nodeBalancersOf(s.id)) out.push(nodeBalancerEntry(s, nb));
    }
    return out;
  }

  /** `GET /vpcs/{id}/ipv6s` entries: one per interface with a VPC IPv6 (SLAAC) address. */
  ipv6s(vpcId: number): VpcIpEntry[] {
    const out: VpcIpEntry[] = [];
    for (const s of this.#subnets.values()) {
      if (s.vpcId === vpcId) { for (const m of this.#sorted(s)) out.push(...memberIpv6Entries(s, m)); }
    }
    return out;
  }

  /** VPC IP entries of one interface (for `GET /linode/instances/{id}/ips`). */
  ipsOfInterface(subnetId: number, interfaceId: number): VpcIpEntry[] {
    const state = this.#subnets.get(subnetId);
    const member = state?.members.get(interfaceId);
    return state && member ? memberEntries(state, member) : [];
  }

  /** VPC IPv6 entries of one interface (`ipv6.vpc` of `GET /linode/instances/{id}/ips`). */
  ipv6sOfInterface(subnetId: number, interfaceId: number): VpcIpEntry[] {
    const state = this.#subnets.get(subnetId);
    const member = state?.members.get(interfaceId);
    return state && member ? memberIpv6Entries(state, member) : [];
  }

  /** Forgets every VPC. */
  reset(): void {
    this.#vpcs.clear();
    this.#subnets.clear();
  }
}
