/** The emulated Linode account, shaped from TypeScript (and over `/__admin/world`). */
import type { Firewall, VPC } from "@linode/api-v4";
import type { Clock } from "../../common/clock.ts";
import { type Body, fieldError } from "./http.ts";
import { Ids } from "./ids.ts";
import { updateConfigInterface } from "./config_ifaces.ts";
import type { SimLinode, SimLinodeInterface, SimLinodeStatus } from "./instance_shape.ts";
import { parseCidr } from "./ip.ts";
import { updateLinodeInterface } from "./linode_iface_ops.ts";
import { setNodeStatus } from "./nb_configs.ts";
import type { NbNodeStatus, NbNodeWire, NodeBalancerSnapshot, NodeBalancerWire } from "./nb_records.ts";
import type { SubnetPool } from "./nb_vpcs.ts";
import { applySeedStatuses, readSeedStatuses } from "./seed_nodebalancers.ts";
import { FirewallStore } from "./store_firewalls.ts";
import { type AddInstanceInput, type InstanceChange, InstanceStore } from "./store_instances.ts";
import { type NbSeedOptions, NodeBalancerStore } from "./store_nodebalancers.ts";
import { ReservedIpStore } from "./store_reserved_ips.ts";
import { VpcStore } from "./store_vpcs.ts";
import type { CreateVpcInput } from "./vpc_input.ts";

export type { AddInstanceInput } from "./store_instances.ts";
export type { CreateVpcInput } from "./vpc_input.ts";

/** Everything in the account. Route handlers use the stores; tests use the methods. */
export class World {
  /** Id sequences. */
  readonly ids: Ids = new Ids();
  /** VPCs and subnets. */
  readonly vpcs: VpcStore;
  /** Linode instances. */
  readonly instances: InstanceStore;
  /** NodeBalancers. */
  readonly nodeBalancerStore: NodeBalancerStore;
  /** Cloud Firewalls. */
  readonly firewallStore: FirewallStore;
  /** The clock behind every timestamp. */
  readonly clock: Clock;
  /** Reserved IPv4 addresses. */
  readonly reservedIps: ReservedIpStore = new ReservedIpStore();

  constructor(clock: Clock) {
    this.clock = clock;
    this.vpcs = new VpcStore(this.ids, clock);
    this.instances = new InstanceStore(this.ids, clock, this.vpcs);
    this.nodeBalancerStore = new NodeBalancerStore(this.ids, clock, this.#subnetPool(), this.reservedIps);
    this.vpcs.nodeBalancersOf = (subnetId) => this.nodeBalancerStore.usersOfSubnet(subnetId);
    this.firewallStore = new FirewallStore(this.ids, clock, (type, id) => {
      if (type === "linode") return this.instances.get(id)?.linode.label;
      return this.nodeBalancerStore.has(id) ? this.nodeBalancerStore.get(id).label : undefined;
    });
  }

  /** VPC subnets as NodeBalancer VPC configs see them. */
  #subnetPool(): SubnetPool {
    const vpcs = this.vpcs;
    return {
      subnetInfo(subnetId) {
        const vpc = vpcs.get(vpcs.vpcOfSubnet(subnetId) ?? 0);
        const cidr = parseCidr(vpcs.subnet(subnetId)?.ipv4 ?? "");
        return vpc && cidr ? { vpcId: vpc.id, region: vpc.region, cidr } : undefined;
      },
      allocate: (subnetId, ip) => vpcs.allocate(subnetId, ip, "ipv4_range"),
      release: (subnetId, ip) => vpcs.release(subnetId, ip),
    };
  }

  /** Creates a VPC with subnets: `{ label, region, subnets: [{ label, ipv4 }] }`. */
  createVpc(input: CreateVpcInput): VPC {
    return structuredClone(this.vpcs.create(input));
  }

  /** Deletes a VPC without members (false when unknown); a 400 `ApiError` while interfaces use it. */
  deleteVpc(id: number): boolean {
    return this.vpcs.delete(id);
  }

  /** Adds a Linode; public IPv4, private IPv4 (`privateIp`), SLAAC and VPC addresses are allocated. */
  addInstance(input: AddInstanceInput = {}): SimLinode {
    return structuredClone(this.instances.add(input));
  }

  /** Adds `count` Linodes; `input` may depend on the index (labels get `-<i>` when shared). */
  addInstances(count: number, input: AddInstanceInput | ((i: number) => AddInstanceInput) = {}): SimLinode[] {
    const out: SimLinode[] = [];
    for (let i = 0; i < count; i++) {
      const one = typeof input === "function"
        ? input(i)
        : { ...input, label: input.label && `${input.label}-${i}` };
      out.push(this.instances.add(one));
    }
    return structuredClone(out);
  }

  /** Sets an instance's status (404 ApiError when unknown). */
  setStatus(id: number, status: SimLinodeStatus): SimLinode {
    return structuredClone(this.instances.setStatus(id, status));
  }

  /** Renames, migrates or re-addresses an instance, keeping its id (404 ApiError when unknown). */
  updateInstance(id: number, change: InstanceChange): SimLinode {
    return structuredClone(this.instances.update(id, change));
  }

  /** Deletes an instance, its VPC addresses and firewall attachments. */
  deleteInstance(id: number): boolean {
    this.firewallStore.forget("linode", id);
    return this.instances.delete(id);
  }

  /** A copy of one instance, or undefined. */
  instance(id: number): SimLinode | undefined {
    const rec = this.instances.get(id);
    return rec ? structuredClone(rec.linode) : undefined;
  }

  /** Every instance (copies). */
  listInstances(): SimLinode[] {
    return structuredClone(this.instances.list());
  }

  /** The ranges routed to a Linode's VPC interface, of either generation ([] without one). */
  ipRanges(linodeId: number): string[] {
    return this.instances.ipRanges(linodeId);
  }

  /** Sets the ranges of a Linode's VPC interface, of either generation, with the API's validation. */
  setIpRanges(linodeId: number, ranges: string[]): string[] {
    const { config, interfaces } = this.instances.require(linodeId);
    const legacy = config.interfaces.find((i) => i.purpose === "vpc");
    const linodeIface = interfaces.find((i) => i.vpc);
    if (legacy) {
      updateConfigInterface(this.instances, { linodeId, configId: config.id, ifaceId: legacy.id }, {
        ip_ranges: ranges,
      });
    } else if (linodeIface?.vpc) {
      const vpc = {
        subnet_id: linodeIface.vpc.subnet_id,
        ipv4: { ranges: ranges.map((range) => ({ range })) },
      };
      updateLinodeInterface(this, { linodeId, ifaceId: linodeIface.id }, { vpc });
    } else {
      throw fieldError("ip_ranges", `Linode ${linodeId} has no VPC interface`);
    }
    return this.ipRanges(linodeId);
  }

  /** Replaces a Linode's config profile VPC interface by hand (new id and address, no ranges); returns its id. */
  replaceVpcInterface(linodeId: number): number {
    return this.instances.replaceVpcInterface(linodeId);
  }

  /** A copy of a Linode's Linode interfaces ([] for a Linode using config profile interfaces). */
  linodeInterfaces(linodeId: number): SimLinodeInterface[] {
    return structuredClone(this.instances.require(linodeId).interfaces);
  }

  /**
   * `POST /nodebalancers`: the body as the API takes it (`firewall_id` checked before anything is created);
   * `seed` is for NodeBalancers made elsewhere (see `addNodeBalancer`).
   */
  createNodeBalancer(body: Body, seed?: NbSeedOptions): NodeBalancerWire {
    const firewallId = body.firewall_id;
    const wantsFirewall = firewallId !== undefined && firewallId !== null;
    if (wantsFirewall && (typeof firewallId !== "number" || !this.firewallStore.has(firewallId))) {
      throw fieldError("firewall_id", "Firewall not found");
    }
    const nb = this.nodeBalancerStore.create(body, seed);
    if (typeof firewallId === "number") {
      this.firewallStore.addDevice(firewallId, { id: nb.id, type: "nodebalancer" });
    }
    return nb;
  }

  /**
   * Seeds a NodeBalancer as if another client (the Go CCM, a person) had made it: the API's create body with
   * the same validation, plus `ipv4` (any unused public address, reserved or not) and per-node `status`
   * ("UP", "DOWN", "Unknown") inside `configs[].nodes[]`. Returns a copy with configs and nodes inline.
   */
  addNodeBalancer(body: Body, seed: NbSeedOptions = {}): NodeBalancerSnapshot {
    const statuses = readSeedStatuses(body);
    const nb = this.createNodeBalancer(body, seed);
    applySeedStatuses(this.nodeBalancerStore.require(nb.id), statuses);
    return this.nodeBalancer(nb.id) as NodeBalancerSnapshot;
  }

  /** A copy of one NodeBalancer with configs and nodes inline, or undefined. */
  nodeBalancer(id: number): NodeBalancerSnapshot | undefined {
    return this.nodeBalancerStore.snapshot().find((nb) => nb.id === id);
  }

  /** Sets what health checks report for a node (404 ApiError when unknown). */
  setNodeStatus(nbId: number, configId: number, nodeId: number, status: NbNodeStatus): NbNodeWire {
    return structuredClone(setNodeStatus(this.nodeBalancerStore.require(nbId), configId, nodeId, status));
  }

  /** Every NodeBalancer with configs and nodes inline (copies). */
  nodeBalancers(): NodeBalancerSnapshot[] {
    return this.nodeBalancerStore.snapshot();
  }

  /** Every firewall (copies). */
  firewalls(): Firewall[] {
    return structuredClone(this.firewallStore.list());
  }

  /** Deletes a NodeBalancer, its firewall attachments and VPC ranges; its reserved IPv4 stays reserved. */
  deleteNodeBalancer(id: number): boolean {
    this.firewallStore.forget("nodebalancer", id);
    return this.nodeBalancerStore.delete(id);
  }

  /** Empties the account and restarts id sequences. */
  reset(): void {
    this.firewallStore.reset();
    this.nodeBalancerStore.reset();
    this.reservedIps.reset();
    this.instances.reset();
    this.vpcs.reset();
    this.ids.reset();
  }
}
