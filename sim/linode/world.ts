/** The emulated Linode account, shaped from TypeScript (and over `/__admin/world`). */
import type { Firewall, VPC } from "@linode/api-v4";
import type { Clock } from "../../common/clock.ts";
import { fieldError } from "./http.ts";
import { Ids } from "./ids.ts";
import { updateConfigInterface } from "./config_ifaces.ts";
import type { SimLinode, SimLinodeInterface, SimLinodeStatus } from "./instance_shape.ts";
import { updateLinodeInterface } from "./linode_iface_ops.ts";
import { FirewallStore } from "./store_firewalls.ts";
import { type AddInstanceInput, InstanceStore } from "./store_instances.ts";
import { type NodeBalancerSnapshot, NodeBalancerStore } from "./store_nodebalancers.ts";
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

  constructor(clock: Clock) {
    this.clock = clock;
    this.vpcs = new VpcStore(this.ids, clock);
    this.instances = new InstanceStore(this.ids, clock, this.vpcs);
    this.nodeBalancerStore = new NodeBalancerStore(this.ids, clock);
    this.firewallStore = new FirewallStore(this.ids, clock, (type, id) => {
      if (type === "linode") return this.instances.get(id)?.linode.label;
      return this.nodeBalancerStore.has(id) ? this.nodeBalancerStore.get(id).label : undefined;
    });
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

  /** A copy of a Linode's Linode interfaces ([] for a Linode using config profile interfaces). */
  linodeInterfaces(linodeId: number): SimLinodeInterface[] {
    return structuredClone(this.instances.require(linodeId).interfaces);
  }

  /** Every NodeBalancer with configs and nodes inline (copies). */
  nodeBalancers(): NodeBalancerSnapshot[] {
    return this.nodeBalancerStore.snapshot();
  }

  /** Every firewall (copies). */
  firewalls(): Firewall[] {
    return structuredClone(this.firewallStore.list());
  }

  /** Deletes a NodeBalancer and its firewall attachments. */
  deleteNodeBalancer(id: number): boolean {
    this.firewallStore.forget("nodebalancer", id);
    return this.nodeBalancerStore.delete(id);
  }

  /** Empties the account and restarts id sequences. */
  reset(): void {
    this.firewallStore.reset();
    this.nodeBalancerStore.reset();
    this.instances.reset();
    this.vpcs.reset();
    this.ids.reset();
  }
}
