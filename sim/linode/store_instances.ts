/** Linode instances, their boot config and interfaces, and the IP views of them. */
import type { Config, Interface } from "@linode/api-v4";
import type { Clock } from "../../common/clock.ts";
import { apiTime, fieldError, notFound } from "./http.ts";
import type { Ids } from "./ids.ts";
import {
  configShape,
  LINODE_STATUSES,
  linodeShape,
  type SimLinode,
  type SimLinodeStatus,
} from "./instance_shape.ts";
import { formatIpv4 } from "./ip.ts";
import type { VpcStore } from "./store_vpcs.ts";

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
  vpc?: { vpcId: number; subnetId: number; ipv4?: string; nat1to1?: boolean; ipRanges?: string[] };
}

/** An instance with its config profile and the addresses behind `/ips`. */
export interface InstanceRecord {
  linode: SimLinode;
  config: Config;
  slaac: string | null;
  seq: number;
}

const PRIVATE_BASE = 0xc0a88000; // 192.168.128.0/17, Linode's private range

/** Owns instances. Listing is in id order; lookups by id are O(1). */
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

  /** Adds an instance, allocating public, private, SLAAC and VPC addresses as asked. */
  add(input: AddInstanceInput = {}): SimLinode {
    const status = input.status ?? "running";
    if (!LINODE_STATUSES.includes(status)) throw fieldError("status", `Unknown status ${status}`);
    const id = this.#ids.next("linode");
    const label = input.label ?? `linode${id}`;
    if (this.#labels.has(label)) throw fieldError("label", "Label must be unique among your linodes");
    const seq = this.#seq++;
    const now = apiTime(this.#clock.now());
    const vpcIface = input.vpc ? this.#vpcInterface(input.vpc, status === "running") : undefined;
    const ipv4 = input.ipv4 ?? this.#allocateIpv4(seq, input.privateIp === true);
    const slaac = input.ipv6 === undefined ? slaacOf(seq) : input.ipv6;
    const linode = linodeShape({
      id,
      label,
      now,
      status,
      ipv4,
      ipv6: slaac,
      region: input.region ?? "us-east",
      type: input.type ?? "g6-standard-2",
      tags: input.tags ?? [],
      group: input.group ?? "",
      image: input.image === undefined ? "linode/ubuntu24.04" : input.image,
      lkeClusterId: input.lkeClusterId ?? null,
    });
    const ifaces = vpcIface ? [this.#publicInterface(status === "running"), vpcIface] : [];
    const config = configShape(this.#ids.next("config"), 100_000_000 + seq * 2, ifaces, now);
    if (vpcIface && input.vpc?.nat1to1) vpcIface.ipv4 = { ...vpcIface.ipv4, nat_1_1: ipv4[0] ?? null };
    this.#byId.set(id, { linode, config, slaac, seq });
    this.#labels.add(label);
    if (vpcIface) {
      this.#vpcs.attach(vpcIface.subnet_id ?? 0, {
        linodeId: id,
        configId: config.id,
        region: linode.region,
        iface: vpcIface,
      });
    }
    return linode;
  }

  #allocateIpv4(seq: number, withPrivate: boolean): string[] {
    const pub = `45.79.${1 + Math.floor(seq / 250) % 254}.${2 + (seq % 250)}`;
    return withPrivate ? [pub, formatIpv4(PRIVATE_BASE + 2 + seq)] : [pub];
  }

  #publicInterface(active: boolean): Interface {
    const id = this.#ids.next("interface");
    return {
      id,
      purpose: "public",
      label: null,
      ipam_address: null,
      primary: true,
      active,
      vpc_id: null,
      subnet_id: null,
    };
  }

  #vpcInterface(vpc: NonNullable<AddInstanceInput["vpc"]>, active: boolean): Interface {
    if (this.#vpcs.vpcOfSubnet(vpc.subnetId) !== vpc.vpcId) {
      throw fieldError("subnet_id", `Subnet ${vpc.subnetId} is not in VPC ${vpc.vpcId}`);
    }
    const address = this.#vpcs.allocate(vpc.subnetId, vpc.ipv4);
    return {
      id: this.#ids.next("interface"),
      purpose: "vpc",
      label: null,
      ipam_address: null,
      primary: false,
      active,
      vpc_id: vpc.vpcId,
      subnet_id: vpc.subnetId,
      ipv4: { vpc: address, nat_1_1: null },
      ip_ranges: [...(vpc.ipRanges ?? [])],
    };
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
    for (const iface of rec.config.interfaces ?? []) iface.active = status === "running";
    return rec.linode;
  }

  /** Deletes an instance and frees its VPC addresses; false when it did not exist. */
  delete(id: number): boolean {
    const rec = this.#byId.get(id);
    if (!rec) return false;
    for (const iface of rec.config.interfaces ?? []) {
      if (iface.purpose === "vpc" && iface.subnet_id) this.#vpcs.detach(iface.subnet_id, iface.id);
    }
    this.#labels.delete(rec.linode.label);
    return this.#byId.delete(id);
  }

  /** The config profile `configId` of an instance, or a 404. */
  config(linodeId: number, configId: number): Config {
    const { config } = this.require(linodeId);
    if (config.id !== configId) throw notFound();
    return config;
  }

  /** One interface of a config, or a 404. */
  interface(linodeId: number, configId: number, ifaceId: number): Interface {
    const iface = this.config(linodeId, configId).interfaces?.find((i) => i.id === ifaceId);
    if (!iface) throw notFound();
    return iface;
  }

  /** The VPC interface of an instance, if it exists and has one. */
  vpcInterface(linodeId: number): Interface | undefined {
    return this.get(linodeId)?.config.interfaces?.find((i) => i.purpose === "vpc");
  }

  /** Marks the config as changed now. */
  touch(linodeId: number): void {
    const rec = this.require(linodeId);
    rec.config.updated = apiTime(this.#clock.now());
  }

  /** The ip_ranges of an instance's VPC interface ([] without one). */
  ipRanges(linodeId: number): string[] {
    return [...(this.vpcInterface(linodeId)?.ip_ranges ?? [])];
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
