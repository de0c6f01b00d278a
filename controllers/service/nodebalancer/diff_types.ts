/** The shapes `diffNodeBalancer` reads and returns. Types only. */
import type { NodeBalancer, NodeBalancerConfig, NodeBalancerConfigNode } from "@linode/api-v4";
import type { ConfigBody, ConfigWithNodesBody, NodeBody } from "./bodies.ts";
import type { PortFamily } from "../annotations/spec.ts";

/** The fields of a NodeBalancer the diff reads (an api-v4 `NodeBalancer` fits). */
export type CurrentNodeBalancerFields =
  & Pick<NodeBalancer, "id" | "client_conn_throttle" | "ipv4">
  & { readonly tags: readonly string[] }
  & Partial<Pick<NodeBalancer, "type" | "frontend_address_type" | "frontend_vpc_subnet_id">>;

/** A config as `GET /nodebalancers/{id}/configs` returns it (nodes are listed apart). */
export type CurrentConfig = Omit<NodeBalancerConfig, "nodes" | "nodes_status">;

/** A NodeBalancer as read from the API: itself, its configs, and the nodes of each config by config id. */
export interface CurrentNodeBalancer {
  readonly nodeBalancer: CurrentNodeBalancerFields;
  readonly configs: readonly CurrentConfig[];
  readonly nodes: ReadonlyMap<number, readonly NodeBalancerConfigNode[]>;
}

/** Where an action applies, for logs: the NodeBalancer and, for config and node actions, the port. */
interface Target {
  readonly nodeBalancerId: number;
}
interface ConfigTarget extends Target {
  readonly port: number;
  readonly family: PortFamily;
}

/** One API write bringing the NodeBalancer closer to the plan. Bodies keep keys as `SecretPem`. */
export type NodeBalancerAction =
  | Target & {
    readonly kind: "updateNodeBalancer";
    readonly body: { client_conn_throttle?: number; tags?: string[] };
  }
  | ConfigTarget & { readonly kind: "createConfig"; readonly body: ConfigWithNodesBody }
  | ConfigTarget & { readonly kind: "updateConfig"; readonly configId: number; readonly body: ConfigBody }
  | ConfigTarget & { readonly kind: "deleteConfig"; readonly configId: number }
  | ConfigTarget & { readonly kind: "createNode"; readonly configId: number; readonly body: NodeBody }
  | ConfigTarget & {
    readonly kind: "updateNode";
    readonly configId: number;
    readonly nodeId: number;
    readonly body: Partial<NodeBody>;
  }
  | ConfigTarget & { readonly kind: "deleteNode"; readonly configId: number; readonly nodeId: number };

/** A value shown in a change (never key material). */
export type ChangeValue = string | number | boolean | null | readonly string[];

/** One field that differs, for the Normal Event naming what changed. */
export interface FieldChange {
  /** `client_conn_throttle`, `configs[80/tcp].check_passive`, `configs[80/tcp].nodes[n1].address`. */
  readonly field: string;
  readonly old: ChangeValue;
  readonly new: ChangeValue;
}

/** What to do, what changes, and what differs but cannot change on an existing NodeBalancer. */
export interface NodeBalancerDiff {
  /** Ordered: NodeBalancer, new configs, config updates with their node changes, then removals. */
  readonly actions: readonly NodeBalancerAction[];
  readonly changes: readonly FieldChange[];
  /** E.g. `type` or `ipv4`: the API cannot change them in place (a Warning Event, no action). */
  readonly immutable: readonly FieldChange[];
}
