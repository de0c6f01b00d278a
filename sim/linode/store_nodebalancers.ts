/**
 * NodeBalancers: create (with inline configs, VPC configs and a reserved IPv4), update, delete, and the
 * addresses the API derives. Labels follow the reference (3–32 of `[a-zA-Z0-9-_]`, unique on the account);
 * throttles are 0–20; `type` is common, premium or premium_40gb (linodego, api-v4), fixed at create.
 */
import type { Clock } from "../../common/clock.ts";
import { apiTime, type Body, fieldError, notFound, optEnum, optInt, optString, optStrings } from "./http.ts";
import type { Ids } from "./ids.ts";
import { type Cidr, formatIpv4, parseIpv4 } from "./ip.ts";
import { addConfig, draftInlineConfigs } from "./nb_configs.ts";
import { redactConfig } from "./nb_config_input.ts";
import type { NbRecord, NbType, NodeBalancerSnapshot, NodeBalancerWire } from "./nb_records.ts";
import {
  type NbVpcConfig,
  parseVpcRequests,
  releaseVpcRange,
  reserveVpcRange,
  type SubnetPool,
  type VpcRequest,
} from "./nb_vpcs.ts";
import { requireRegion, type SimRegion } from "./regions.ts";
import type { ReservedIpStore } from "./store_reserved_ips.ts";

/** Seeding overrides that the API does not take (a NodeBalancer made elsewhere, at a given address). */
export interface NbSeedOptions {
  /** Public IPv4 to use instead of allocating one (need not be reserved). */
  ipv4?: string;
}

const NB_IP_BASE = 0xace80000; // 172.232.0.0, public NodeBalancer frontends
const TYPES = ["common", "premium", "premium_40gb"] as const;

/** A NodeBalancer label: 3–32 characters of `[a-zA-Z0-9-_]` (the reference's pattern; no dots, unlike nodes). */
export function checkNodeBalancerLabel(label: string, field = "label"): string {
  if (label.length < 3 || label.length > 32) {
    throw fieldError(field, "Label must be between 3 and 32 characters");
  }
  if (!/^[a-zA-Z0-9_-]+$/.test(label)) {
    throw fieldError(field, "Label may only contain letters, numbers, dashes and underscores");
  }
  return label;
}

/**
 * Tags: strings of 3–50 characters. The NodeBalancer reference gives no rule; 3–50 is the length Linode applies
 * to tag labels (Cloud Manager's schemas spell it out for tagged images).
 */
export function checkTags(body: Body, field = "tags"): string[] | undefined {
  const tags = optStrings(body, field);
  tags?.forEach((t, i) => {
    if (t.length < 3 || t.length > 50) {
      throw fieldError(`${field}[${i}]`, "Tags must be between 3 and 50 characters");
    }
  });
  return tags;
}

/** `nb-192-0-2-1.newark.nodebalancer.linode.com` in the original regions, `192-0-2-1.ip.linodeusercontent.com` elsewhere. */
function hostnameOf(ipv4: string, region: SimRegion): string {
  const dashed = ipv4.replaceAll(".", "-");
  return region.legacyCity
    ? `nb-${dashed}.${region.legacyCity}.nodebalancer.linode.com`
    : `${dashed}.ip.linodeusercontent.com`;
}

/** The frontend IPv6 the API pairs with an IPv4, as seen in the field (`2600:3c08:1::ace8:6222` for 172.232.98.34). */
function ipv6Of(ipv4: string, region: SimRegion): string {
  const n = parseIpv4(ipv4) ?? 0;
  return `${region.ipv6Prefix}:1::${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
}

/** Owns NodeBalancers; configs and nodes are handled by `nb_configs.ts` on the records. */
export class NodeBalancerStore {
  #byId = new Map<number, NbRecord>();
  #seq = 0;
  readonly #ids: Ids;
  readonly #clock: Clock;
  readonly #pool: SubnetPool;
  readonly #reserved: ReservedIpStore;

  constructor(ids: Ids, clock: Clock, pool: SubnetPool, reserved: ReservedIpStore) {
    this.#ids = ids;
    this.#clock = clock;
    this.#pool = pool;
    this.#reserved = reserved;
  }

  #checkUniqueLabel(label: string, selfId?: number): void {
    for (const rec of this.#byId.values()) {
      if (rec.nb.label === label && rec.nb.id !== selfId) throw fieldError("label", "Label must be unique");
    }
  }

  /** A record that does not exist yet, for checking the body's configs against it. */
  #draftRecord(body: Body, region: SimRegion, vpcs: VpcRequest[]): NbRecord {
    const type: NbType = optEnum(body, "type", TYPES) ?? "common";
    const subnets = new Map<number, { cidr: Cidr; vpcConfigId: number }>();
    for (const v of vpcs) {
      if (v.purpose === "backend") subnets.set(v.subnetId, { cidr: v.cidr, vpcConfigId: 0 });
    }
    const label = optString(body, "label");
    if (label !== undefined) this.#checkUniqueLabel(checkNodeBalancerLabel(label));
    const now = apiTime(this.#clock.now());
    const nb: NodeBalancerWire = {
      id: 0,
      label: label ?? "",
      region: region.id,
      hostname: "",
      ipv4: "",
      ipv6: null,
      client_conn_throttle: optInt(body, "client_conn_throttle", 0, 20) ?? 0,
      client_udp_sess_throttle: optInt(body, "client_udp_sess_throttle", 0, 20) ?? 0,
      tags: checkTags(body) ?? [],
      transfer: { in: 0, out: 0, total: 0 },
      type,
      lke_cluster: null,
      frontend_address_type: "public",
      frontend_vpc_subnet_id: null,
      created: now,
      updated: now,
    };
    return { nb, configs: new Map(), vpcs: [], subnets, reservedIpv4: false };
  }

  /** Reserves every VPC range or none. */
  #attachVpcs(rec: NbRecord, requests: VpcRequest[]): void {
    const held: NbVpcConfig[] = [];
    try {
      for (const req of requests) {
        const range = reserveVpcRange(this.#pool, req);
        const config: NbVpcConfig = {
          id: this.#ids.next("nbVpcConfig"),
          nodebalancer_id: rec.nb.id,
          vpc_id: req.vpcId,
          subnet_id: req.subnetId,
          ipv4_range: `${formatIpv4(range.base)}/${range.prefix}`,
          ipv6_range: null,
          purpose: req.purpose,
        };
        held.push(config);
        if (req.purpose === "backend") {
          rec.subnets.set(req.subnetId, { cidr: req.cidr, vpcConfigId: config.id });
        }
      }
    } catch (e) {
      for (const c of held) releaseVpcRange(this.#pool, c);
      throw e;
    }
    rec.vpcs = held;
  }

  #assignAddresses(rec: NbRecord, region: SimRegion, ipv4: string | undefined): void {
    const frontend = rec.vpcs.find((v) => v.purpose === "frontend");
    if (frontend) {
      rec.nb.ipv4 = (frontend.ipv4_range ?? "").split("/")[0] ?? "";
      rec.nb.frontend_address_type = "vpc";
      rec.nb.frontend_vpc_subnet_id = frontend.subnet_id;
    } else {
      rec.nb.ipv4 = ipv4 ?? formatIpv4(NB_IP_BASE + 256 + this.#seq++);
      rec.nb.ipv6 = ipv6Of(rec.nb.ipv4, region);
    }
    rec.nb.hostname = hostnameOf(rec.nb.ipv4, region);
  }

  #checkSeedIpv4(ipv4: string): void {
    if (parseIpv4(ipv4) === undefined) throw fieldError("ipv4", "Must be an IPv4 address");
    if (this.list().some((nb) => nb.ipv4 === ipv4)) throw fieldError("ipv4", "Address is already in use");
  }

  /** `POST /nodebalancers`: validates everything first, so a refused body leaves nothing behind. */
  create(body: Body, seed: NbSeedOptions = {}): NodeBalancerWire {
    const region = requireRegion(body.region);
    const vpcRequests = parseVpcRequests(body, this.#pool, region.id);
    const rec = this.#draftRecord(body, region, vpcRequests);
    const drafts = draftInlineConfigs(rec, body.configs);
    const hasFrontend = vpcRequests.some((v) => v.purpose === "frontend");
    const wantsIpv4 = body.ipv4 !== undefined && body.ipv4 !== null;
    if (wantsIpv4 && hasFrontend) throw fieldError("ipv4", "A VPC frontend takes no public IPv4");
    const reservedIpv4 = wantsIpv4 ? this.#reserved.checkAssignable(body.ipv4, region.id) : undefined;
    if (seed.ipv4 !== undefined) this.#checkSeedIpv4(seed.ipv4);
    rec.nb.id = this.#ids.next("nodebalancer");
    rec.nb.label ||= `nodebalancer${rec.nb.id}`;
    this.#attachVpcs(rec, vpcRequests);
    this.#assignAddresses(rec, region, reservedIpv4 ?? seed.ipv4);
    rec.reservedIpv4 = this.#reserved.has(rec.nb.ipv4);
    if (rec.reservedIpv4) {
      this.#reserved.assign(rec.nb.ipv4, {
        id: rec.nb.id,
        label: rec.nb.label,
        type: "nodebalancer",
        url: `/v4/nodebalancers/${rec.nb.id}`,
      });
    }
    this.#byId.set(rec.nb.id, rec);
    for (const d of drafts) addConfig(rec, this.#ids, d);
    return rec.nb;
  }

  /** One record, or a 404. */
  require(id: number): NbRecord {
    const rec = this.#byId.get(id);
    if (!rec) throw notFound();
    return rec;
  }

  /** The NodeBalancer, or a 404. */
  get(id: number): NodeBalancerWire {
    return this.require(id).nb;
  }

  /** True when the NodeBalancer exists. */
  has(id: number): boolean {
    return this.#byId.has(id);
  }

  /** Every NodeBalancer, by id. */
  list(): NodeBalancerWire[] {
    return [...this.#byId.values()].map((r) => r.nb);
  }

  /** `PUT /nodebalancers/{id}`: label, throttles, tags. */
  update(id: number, body: Body): NodeBalancerWire {
    const rec = this.require(id);
    const label = optString(body, "label");
    if (label !== undefined) this.#checkUniqueLabel(checkNodeBalancerLabel(label), id);
    const throttle = optInt(body, "client_conn_throttle", 0, 20);
    const udpThrottle = optInt(body, "client_udp_sess_throttle", 0, 20);
    const tags = checkTags(body);
    const region = optString(body, "region");
    if (region !== undefined && region !== rec.nb.region) {
      throw fieldError("region", "region cannot be changed");
    }
    if (label !== undefined) {
      rec.nb.label = label;
      this.#reserved.relabel(rec.nb.ipv4, label);
    }
    if (throttle !== undefined) rec.nb.client_conn_throttle = throttle;
    if (udpThrottle !== undefined) rec.nb.client_udp_sess_throttle = udpThrottle;
    if (tags !== undefined) rec.nb.tags = tags;
    rec.nb.updated = apiTime(this.#clock.now());
    return rec.nb;
  }

  /** Deletes a NodeBalancer, gives its VPC ranges back and frees its reserved IPv4; false when unknown. */
  delete(id: number): boolean {
    const rec = this.#byId.get(id);
    if (!rec) return false;
    for (const v of rec.vpcs) releaseVpcRange(this.#pool, v);
    this.#reserved.unassign(rec.nb.ipv4);
    return this.#byId.delete(id);
  }

  /** The NodeBalancers using a VPC subnet, as `subnet.nodebalancers` lists them. */
  usersOfSubnet(subnetId: number): { id: number; ipv4_range: string }[] {
    return [...this.#byId.values()].flatMap((rec) =>
      rec.vpcs.filter((v) => v.subnet_id === subnetId).map((v) => ({
        id: rec.nb.id,
        ipv4_range: v.ipv4_range ?? "",
      }))
    );
  }

  /** Deep copies of every NodeBalancer with configs, nodes and VPC configs inline (certificates redacted). */
  snapshot(): NodeBalancerSnapshot[] {
    return [...this.#byId.values()].map((rec) =>
      structuredClone({
        ...rec.nb,
        configs: [...rec.configs.values()].map((c) => ({
          ...redactConfig(c.config),
          nodes: [...c.nodes.values()],
        })),
        vpcs: rec.vpcs,
      })
    );
  }

  /** Forgets every NodeBalancer. */
  reset(): void {
    this.#byId.clear();
    this.#seq = 0;
  }
}
