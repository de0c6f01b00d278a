/** The in-memory shape of a NodeBalancer with its configs, nodes and VPC configs, and the wire types. */
import type { NodeBalancer, NodeBalancerConfigNode } from "@linode/api-v4";
import type { Cidr } from "./ip.ts";
import type { NbConfigWire } from "./nb_config_input.ts";
import { type NodeContext, type NodeInput, parseNode } from "./nb_node_input.ts";
import type { NbVpcConfig } from "./nb_vpcs.ts";

/** A node's status: new nodes report "Unknown" (as recorded from the API) until checks mark them. */
export type NbNodeStatus = "UP" | "DOWN" | "Unknown";

/** A node as the API returns it. */
export type NbNodeWire = Omit<NodeBalancerConfigNode, "status" | "vpc_config_id"> & {
  status: NbNodeStatus;
  vpc_config_id: number | null;
};

/** The NodeBalancer plan types linodego and api-v4 know. */
export type NbType = "common" | "premium" | "premium_40gb";

/** A NodeBalancer as the API returns it. */
export type NodeBalancerWire = Omit<NodeBalancer, "type" | "client_udp_sess_throttle"> & {
  type: NbType;
  client_udp_sess_throttle: number;
};

/** One config (port) and its nodes; `config` holds the real certificate and key. */
export interface ConfigRecord {
  config: NbConfigWire;
  nodes: Map<number, NbNodeWire>;
}

/** One NodeBalancer. */
export interface NbRecord {
  nb: NodeBalancerWire;
  configs: Map<number, ConfigRecord>;
  vpcs: NbVpcConfig[];
  /** Backend VPC subnets by id, for node checks. */
  subnets: Map<number, { cidr: Cidr; vpcConfigId: number }>;
  /** True when `nb.ipv4` is a reserved address of the account. */
  reservedIpv4: boolean;
}

/** A NodeBalancer with its configs and their nodes inline (`world.nodeBalancers()`, certificate redacted). */
export type NodeBalancerSnapshot = NodeBalancerWire & {
  configs: (NbConfigWire & { nodes: NbNodeWire[] })[];
  vpcs: NbVpcConfig[];
};

/** What node checks need to know about a NodeBalancer and one of its protocols. */
export function nodeContext(rec: NbRecord, protocol: string): NodeContext {
  return { premium: rec.nb.type !== "common", udp: protocol === "udp", subnets: rec.subnets };
}

/** A stored node back as a validated input, so a partial PUT can fill what it leaves out. */
export function nodeAsInput(rec: NbRecord, node: NbNodeWire): NodeInput {
  const subnetId = rec.vpcs.find((v) => v.id === node.vpc_config_id)?.subnet_id;
  const body = {
    address: node.address,
    label: node.label,
    weight: node.weight,
    mode: node.mode,
    subnet_id: subnetId,
  };
  return parseNode(body, "");
}

/** Recounts a config's `nodes_status` from its nodes. */
export function recount(crec: ConfigRecord): void {
  const nodes = [...crec.nodes.values()];
  crec.config.nodes_status = {
    up: nodes.filter((n) => n.status === "UP").length,
    down: nodes.filter((n) => n.status === "DOWN").length,
  };
}
