/** Linode instances, their boot config, and their interfaces of either generation. */
import { type AddInstanceVpcIpv6, parseSlaacRequest, type SimVpcIpv6, vpcIpv6Part } from "./vpc_ipv6.ts";
import type { Clock } from "../../common/clock.ts";
import { apiTime, fieldError, notFound } from "./http.ts";
import {
  configMember,
  linodeMember,
  macOf,
  newLinodeInterface,
  publicConfigInterface,
  publicData,
  publicIpv4s,
  vpcConfigInterface,
} from "./iface_members.ts";
import type { Ids } from "./ids.ts";
import {
  configShape,
  type InterfaceGeneration,
  LINODE_STATUSES,
  linodeShape,
  type SimConfig,
  type SimInterface,
  type SimLinode,
  type SimLinodeInterface,
  type SimLinodeStatus,
} from "./instance_shape.ts";
import { formatIpv4, LINODE_PRIVATE_NETWORK } from "./ip.ts";
import type { VpcStore } from "./store_vpcs.ts";
import type { VpcMember } from "./vpc_member.ts";
import { checkRanges } from "./vpc_ranges.ts";

/** Where `world.addInstance` attaches a Linode: its VPC interface's subnet, address, NAT and ranges. */
export interface AddInstanceVpc {
  vpcId: number;
  subnetId: number;
  /** The VPC address (default: the next free one). */
  ipv4?: string;
  /** 1:1 NAT of the Linode's public IPv4 on the VPC address. */
  nat1to1?: boolean;
  /** Routed ranges, validated as the API validates them. */
  ipRanges?: string[];
  /**
   * The interface's VPC IPv6: a SLAAC `/64` of the subnet's IPv6 range (`true`: the next free one, as
   * `ipv6.slaac: [{range: "auto"}]`), in which the Linode takes its SLAAC address; the subnet must have one.
   */
  ipv6?: AddInstanceVpcIpv6;
}

/** Input of `world.addInstance`. */
export interface AddInstanceInput {
  label?: string;
  region?: string;
  type?: string;
  status?: SimLinodeStatus;
  ipv4?: string[];
  ipv6?: string | null;
  tags?: string[];
  group?: string;
  image?: string | null;
  lkeClusterId?: number | null;
  privateIp?: boolean;
  /** `legacy_config` (default): config profile interfaces; `linode`: Linode interfaces (public + VPC). */
  interfaceGeneration?: InterfaceGeneration;
  vpc?: AddInstanceVpc;
}

/** An instance with its config profile, its Linode interfaces and the addresses behind `/ips`. */
export interface InstanceRecord {
  linode: SimLinode;
  config: SimConfig;
  /** Linode interfaces, in creation order (empty for `legacy_config` Linodes). */
  interfaces: SimLinodeInterface[];
  slaac: string | null;
  seq: number;
}

const GENERATIONS: readonly InterfaceGeneration[] = ["legacy_config", "linode"];

/** Owns instances. Listing is in id order; lookups by id are O(1). */
/** What `update` may change on a Linode. */
export interface InstanceChange {
  label?: string;
  region?: string;
  ipv4?: readonly string[];
  tags?: readonly string[];
  /** Moved to another host: a new `host_uuid`. */
  newHost?: boolean;
}

export class InstanceStore {
  #byId = new Map<number, InstanceRecord>();
  #labels = new Set<string>();
  #seq = 0;
  readonly #ids: Ids;
  readonly #clock: Clock;
  readonly #vpcs: VpcStore;

  constructor(ids: Ids, clock: Clock, vpcs: VpcStore) {
    this.#ids = ids;
    this.#clock = clock;
    this.#vpcs = vpcs;
  }

  /** The VPC store the interfaces attach to. */
  get vpcs(): VpcStore {
    return this.#vpcs;
  }

  /** Adds an instance, allocating public, private, SLAAC and VPC addresses as asked. */
  add(input: AddInstanceInput = {}): SimLinode {
    const status = input.status ?? "running";
    if (!LINODE_STATUSES.includes(status)) throw fieldError("status", `Unknown status ${status}`);
    const generation = input.interfaceGeneration ?? "legacy_config";
    if (!GENERATIONS.includes(generation)) {
      throw fieldError("interface_generation", "Must be one of legacy_config, linode");
    }
    const id = this.#ids.next("linode");
    const label = input.label ?? `linode${id}`;
    if (this.#labels.has(label)) throw fieldError("label", "Label must be unique among your linodes");
    if (input.vpc && this.#vpcs.vpcOfSubnet(input.vpc.subnetId) !== input.vpc.vpcId) {
      throw fieldError("subnet_id", `Subnet ${input.vpc.subnetId} is not in VPC ${input.vpc.vpcId}`);
    }
    // Checked before anything is allocated, so a refused IPv6 request leaves nothing behind.
    if (input.vpc?.ipv6) {
      const v6 = parseSlaacRequest(input.vpc.ipv6, "vpc.ipv6");
      this.#vpcs.planIpv6(input.vpc.subnetId, "vpc.ipv6", v6.cidr);
    }
    const seq = this.#seq;
    const now = apiTime(this.#clock.now());
    const slaac = input.ipv6 === undefined ? slaacOf(seq) : input.ipv6;
    const linode = linodeShape({
      id,
      label,
      now,
      status,
      ipv4: input.ipv4 ?? this.#allocateIpv4(seq, input.privateIp === true),
      ipv6: slaac,
      region: input.region ?? "us-east",
      type: input.type ?? "g6-standard-2",
      tags: input.tags ?? [],
      group: input.group ?? "",
      image: input.image === undefined ? "linode/ubuntu24.04" : input.image,
      lkeClusterId: input.lkeClusterId ?? null,
      interfaceGeneration: generation,
    });
    const config = configShape(this.#ids.next("config"), 100_000_000 + seq * 2, [], now);
    const rec: InstanceRecord = { linode, config, interfaces: [], slaac, seq };
    if (generation === "linode") this.#seedLinodeInterfaces(rec, input.vpc, now);
    else if (input.vpc) this.#seedConfigInterfaces(rec, input.vpc);
    this.#seq++;
    this.#byId.set(linode.id, rec);
    this.#labels.add(label);
    return linode;
  }

  #allocateIpv4(seq: number, withPrivate: boolean): string[] {
    const pub = `45.79.${1 + Math.floor(seq / 250) % 254}.${2 + (seq % 250)}`;
    return withPrivate ? [pub, formatIpv4(LINODE_PRIVATE_NETWORK.base + 2 + seq)] : [pub];
  }

  #seedConfigInterfaces(rec: InstanceRecord, vpc: AddInstanceVpc): void {
    const active = rec.linode.status === "running";
    const address = this.#vpcs.allocate(vpc.subnetId, vpc.ipv4, "vpc.ipv4");
    const iface = vpcConfigInterface(this.#ids.next("interface"), active, { ...vpc, address });
    if (vpc.nat1to1 && iface.ipv4) iface.ipv4.nat_1_1 = publicIpv4s(rec.linode)[0] ?? null;
    if (vpc.ipv6) iface.ipv6 = this.#ipv6Of(vpc.subnetId, vpc.ipv6, iface.id);
    rec.config.interfaces = [publicConfigInterface(this.#ids.next("interface"), active), iface];
    this.#attachSeeded(vpc, configMember(rec.linode, rec.config.id, iface), (ranges) => {
      iface.ip_ranges = ranges;
    });
  }

  #seedLinodeInterfaces(rec: InstanceRecord, vpc: AddInstanceVpc | undefined, now: string): void {
    const pub = publicData(publicIpv4s(rec.linode).slice(0, 1), rec.slaac);
    const defaultRoute = { ipv4: true, ipv6: true };
    rec.interfaces.push(
      newLinodeInterface(this.#ids.next("interface"), now, { default_route: defaultRoute, public: pub }),
    );
    if (!vpc) return;
    const address = this.#vpcs.allocate(vpc.subnetId, vpc.ipv4, "vpc.ipv4");
    const nat = vpc.nat1to1 ? publicIpv4s(rec.linode)[0] ?? null : null;
    const iface = newLinodeInterface(this.#ids.next("interface"), now, {
      default_route: {},
      vpc: {
        vpc_id: vpc.vpcId,
        subnet_id: vpc.subnetId,
        ipv4: { addresses: [{ address, primary: true, nat_1_1_address: nat }], ranges: [] },
      },
    });
    if (vpc.ipv6 && iface.vpc) iface.vpc.ipv6 = this.#ipv6Of(vpc.subnetId, vpc.ipv6, iface.id);
    rec.interfaces.push(iface);
    this.#attachSeeded(vpc, linodeMember(rec.linode, iface), (ranges) => {
      if (iface.vpc) iface.vpc.ipv4.ranges = ranges.map((range) => ({ range }));
    });
  }

  /** The `ipv6` part of a seeded VPC interface: a SLAAC `/64` of its subnet's range. */
  #ipv6Of(subnetId: number, request: Exclude<AddInstanceVpcIpv6, false>, interfaceId: number): SimVpcIpv6 {
    const v6 = parseSlaacRequest(request, "vpc.ipv6");
    const range = this.#vpcs.allocateIpv6(subnetId, interfaceId, "vpc.ipv6", v6.cidr);
    return vpcIpv6Part(range, macOf(interfaceId), v6.isPublic);
  }

  /** Attaches a seeded interface, then applies its ranges with the API's rules (undone on a refusal). */
  #attachSeeded(vpc: AddInstanceVpc, member: VpcMember, set: (ranges: string[]) => void): void {
    this.#vpcs.attach(vpc.subnetId, member);
    if (!vpc.ipRanges?.length) return;
    const generation = member.configId === null ? "linode" : "legacy_config";
    try {
      const target = { subnetId: vpc.subnetId, interfaceId: member.interfaceId, generation } as const;
      set(checkRanges(this.#vpcs, target, vpc.ipRanges, (i) => `vpc.ipRanges[${i}]`));
    } catch (e) {
      this.#vpcs.detach(vpc.subnetId, member.interfaceId);
      throw e;
    }
  }

  /** The record of one instance. */
  get(id: number): InstanceRecord | undefined {
    return this.#byId.get(id);
  }

  /** The record of one instance, or a 404. */
  require(id: number): InstanceRecord {
    const rec = this.#byId.get(id);
    if (!rec) throw notFound();
    return rec;
  }

  /** Every instance in id order (stored objects: serialise, do not mutate). */
  list(): SimLinode[] {
    const out: SimLinode[] = [];
    for (const rec of this.#byId.values()) out.push(rec.linode);
    return out;
  }

  /** Changes an instance's status; interfaces are active only while running. */
  setStatus(id: number, status: SimLinodeStatus): SimLinode {
    if (!LINODE_STATUSES.includes(status)) throw fieldError("status", `Unknown status ${status}`);
    const rec = this.require(id);
    rec.linode.status = status;
    rec.linode.updated = apiTime(this.#clock.now());
    for (const iface of rec.config.interfaces) iface.active = status === "running";
    return rec.linode;
  }

  /**
   * What happens to a Linode without a new id (Cloud Manager or the API): renamed (`label`, unique as on
   * create), migrated to another region or host (`region`, a new `host_uuid`), its public IPv4 or tags changed.
   */
  update(id: number, change: InstanceChange): SimLinode {
    const rec = this.require(id);
    const linode = rec.linode;
    if (change.label !== undefined && change.label !== linode.label) {
      const label = change.label;
      if (this.#labels.has(label)) throw fieldError("label", "Label must be unique among your linodes");
      this.#labels.delete(linode.label);
      this.#labels.add(label);
      linode.label = label;
    }
    if (change.region !== undefined) linode.region = change.region;
    if (change.ipv4 !== undefined) linode.ipv4 = [...change.ipv4];
    if (change.tags !== undefined) linode.tags = [...change.tags];
    if (change.newHost) linode.host_uuid = crypto.randomUUID().replaceAll("-", "");
    linode.updated = apiTime(this.#clock.now());
    return linode;
  }

  /** Deletes an instance and frees its VPC addresses; false when it did not exist. */
  delete(id: number): boolean {
    const rec = this.#byId.get(id);
    if (!rec) return false;
    for (const iface of rec.config.interfaces) {
      if (iface.purpose === "vpc" && iface.subnet_id) this.#vpcs.detach(iface.subnet_id, iface.id);
    }
    for (const iface of rec.interfaces) if (iface.vpc) this.#vpcs.detach(iface.vpc.subnet_id, iface.id);
    this.#labels.delete(rec.linode.label);
    return this.#byId.delete(id);
  }

  /** The config profile `configId` of an instance, or a 404. */
  config(linodeId: number, configId: number): SimConfig {
    const { config } = this.require(linodeId);
    if (config.id !== configId) throw notFound();
    return config;
  }

  /** One interface of a config, or a 404. */
  interface(linodeId: number, configId: number, ifaceId: number): SimInterface {
    const iface = this.config(linodeId, configId).interfaces.find((i) => i.id === ifaceId);
    if (!iface) throw notFound();
    return iface;
  }

  /** The config profile VPC interface of an instance, if it has one. */
  vpcInterface(linodeId: number): SimInterface | undefined {
    return this.get(linodeId)?.config.interfaces.find((i) => i.purpose === "vpc");
  }

  /**
   * What a person editing the config profile does (a `PUT` of the config with a new interface list): its VPC
   * interface is replaced by a new one (new id, new address, no ranges) in the same subnet. Returns the new id.
   */
  replaceVpcInterface(linodeId: number): number {
    const rec = this.require(linodeId);
    const old = rec.config.interfaces.find((i) => i.purpose === "vpc");
    if (!old || typeof old.subnet_id !== "number" || typeof old.vpc_id !== "number") {
      throw fieldError("interfaces", `Linode ${linodeId} has no config profile VPC interface`);
    }
    this.#vpcs.detach(old.subnet_id, old.id);
    const vpc = { vpcId: old.vpc_id, subnetId: old.subnet_id };
    const address = this.#vpcs.allocate(vpc.subnetId, undefined, "vpc.ipv4");
    const iface = vpcConfigInterface(this.#ids.next("interface"), old.active, { ...vpc, address });
    rec.config.interfaces = rec.config.interfaces.map((i) => i === old ? iface : i);
    this.#vpcs.attach(vpc.subnetId, configMember(rec.linode, rec.config.id, iface));
    this.touch(linodeId);
    return iface.id;
  }

  /** Marks the config as changed now. */
  touch(linodeId: number): void {
    const rec = this.require(linodeId);
    rec.config.updated = apiTime(this.#clock.now());
  }

  /** The ranges routed to an instance's VPC interface, of either generation ([] without one). */
  ipRanges(linodeId: number): string[] {
    const rec = this.get(linodeId);
    const legacy = rec?.config.interfaces.find((i) => i.purpose === "vpc");
    if (legacy) return [...(legacy.ip_ranges ?? [])];
    return (rec?.interfaces.find((i) => i.vpc)?.vpc?.ipv4.ranges ?? []).map((r) => r.range);
  }

  /** Forgets every instance. */
  reset(): void {
    this.#byId.clear();
    this.#labels.clear();
    this.#seq = 0;
  }
}

/** A SLAAC address derived from a sequence number, in the API's `/128` form. */
function slaacOf(seq: number): string {
  const hi = ((seq >>> 16) & 0xff).toString(16).padStart(2, "0");
  const lo = (seq & 0xffff).toString(16).padStart(4, "0");
  return `2600:3c03::f03c:95ff:fe${hi}:${lo}/128`;
}
