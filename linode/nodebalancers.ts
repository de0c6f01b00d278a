/** NodeBalancer calls: configs, nodes and attached firewalls. */
import {
  deleteNodeBalancer,
  deleteNodeBalancerConfig,
  deleteNodeBalancerConfigNode,
  type Filter,
  getNodeBalancer,
  getNodeBalancerConfigs,
  getNodeBalancerFirewalls,
  getNodeBalancers,
  type Params,
  updateNodeBalancer,
} from "@linode/api-v4";
import type {
  CreateNodeBalancerConfig,
  CreateNodeBalancerConfigNode,
  CreateNodeBalancerPayload,
  Firewall,
  NodeBalancer,
  NodeBalancerConfig,
  NodeBalancerConfigNode,
  UpdateNodeBalancerConfigNode,
} from "@linode/api-v4";
import { type ApiCaller, type CallOptions, callSpec as spec } from "./caller.ts";
import { PAGE_SIZE } from "./paging.ts";
import { rawRequest } from "./transport.ts";

/** A create body: api-v4's payload plus the fields it does not type yet (plan type, reserved IPv4, frontend VPCs). */
export type CreateNodeBalancerRequest = CreateNodeBalancerPayload & {
  type?: string;
  ipv4?: string;
  frontend_vpcs?: CreateNodeBalancerPayload["vpcs"];
};

/** A rebuild body: config settings plus the full node list, existing nodes identified by `id`. */
export type RebuildConfigBody = CreateNodeBalancerConfig & {
  nodes: Array<CreateNodeBalancerConfigNode & { id?: number }>;
};

function pageParams(p: Params): Record<string, number> {
  return { page: p.page ?? 1, page_size: p.page_size ?? PAGE_SIZE };
}

/** `/nodebalancers` and below. */
export class NodeBalancerApi {
  readonly #caller: ApiCaller;

  constructor(caller: ApiCaller) {
    this.#caller = caller;
  }

  /** All NodeBalancers matching `filter`. */
  list(filter?: Filter, options?: CallOptions): Promise<NodeBalancer[]> {
    const s = spec("GET", "/nodebalancers", "list nodebalancers", options);
    return this.#caller.list(s, (p) => getNodeBalancers(p, filter));
  }

  /** One NodeBalancer. */
  get(nodeBalancerId: number, options?: CallOptions): Promise<NodeBalancer> {
    const s = spec("GET", "/nodebalancers/{id}", `get nodebalancer ${nodeBalancerId}`, options);
    return this.#caller.run(s, () => getNodeBalancer(nodeBalancerId));
  }

  /** Creates a NodeBalancer (sent as is: api-v4 would reject zero-node configs). Not retried after a timeout. */
  create(body: CreateNodeBalancerRequest, options?: CallOptions): Promise<NodeBalancer> {
    const s = spec("POST", "/nodebalancers", "create nodebalancer", options);
    return this.#caller.run(s, () => rawRequest<NodeBalancer>("POST", "/nodebalancers", { data: body }));
  }

  /** Updates label, tags or throttles of a NodeBalancer. */
  update(
    nodeBalancerId: number,
    body: Partial<NodeBalancer>,
    options?: CallOptions,
  ): Promise<NodeBalancer> {
    const s = spec("PUT", "/nodebalancers/{id}", `update nodebalancer ${nodeBalancerId}`, options);
    return this.#caller.run(s, () => updateNodeBalancer(nodeBalancerId, body));
  }

  /** Deletes a NodeBalancer; a retry that finds it gone counts as done. */
  delete(nodeBalancerId: number, options?: CallOptions): Promise<void> {
    const s = spec("DELETE", "/nodebalancers/{id}", `delete nodebalancer ${nodeBalancerId}`, options);
    return this.#caller.remove(s, () => deleteNodeBalancer(nodeBalancerId));
  }

  /** The configs (ports) of a NodeBalancer. */
  listConfigs(nodeBalancerId: number, options?: CallOptions): Promise<NodeBalancerConfig[]> {
    const action = `list configs of nodebalancer ${nodeBalancerId}`;
    const s = spec("GET", "/nodebalancers/{id}/configs", action, options);
    return this.#caller.list(s, (p) => getNodeBalancerConfigs(nodeBalancerId, p));
  }

  /** Adds a config (port); zero nodes allowed. */
  createConfig(
    nodeBalancerId: number,
    body: CreateNodeBalancerConfig,
    options?: CallOptions,
  ): Promise<NodeBalancerConfig> {
    const s = spec(
      "POST",
      "/nodebalancers/{id}/configs",
      `create config on nodebalancer ${nodeBalancerId}`,
      options,
    );
    return this.#caller.run(
      s,
      () => rawRequest("POST", `/nodebalancers/${nodeBalancerId}/configs`, { data: body }),
    );
  }

  /** Updates a config's settings (not its nodes). */
  updateConfig(
    nodeBalancerId: number,
    configId: number,
    body: CreateNodeBalancerConfig,
    options?: CallOptions,
  ): Promise<NodeBalancerConfig> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}`;
    const s = spec(
      "PUT",
      "/nodebalancers/{id}/configs/{id}",
      `update config ${configId} of nodebalancer ${nodeBalancerId}`,
      options,
    );
    return this.#caller.run(s, () => rawRequest("PUT", path, { data: body }));
  }

  /** Removes a config (port). */
  deleteConfig(nodeBalancerId: number, configId: number, options?: CallOptions): Promise<void> {
    const action = `delete config ${configId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("DELETE", "/nodebalancers/{id}/configs/{id}", action, options);
    return this.#caller.remove(s, () => deleteNodeBalancerConfig(nodeBalancerId, configId));
  }

  /**
   * Replaces a config's settings and whole node list in one call. Nodes keep their `id`s (api-v4's own
   * rebuild drops them). Idempotent, so retried like a PUT.
   */
  rebuildConfig(
    nodeBalancerId: number,
    configId: number,
    body: RebuildConfigBody,
    options?: CallOptions,
  ): Promise<NodeBalancerConfig> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}/rebuild`;
    const action = `rebuild config ${configId} of nodebalancer ${nodeBalancerId}`;
    const s = {
      ...spec("POST", "/nodebalancers/{id}/configs/{id}/rebuild", action, options),
      idempotent: true,
    };
    return this.#caller.run(s, () => rawRequest("POST", path, { data: body }));
  }

  /** The backend nodes of a config. */
  listConfigNodes(
    nodeBalancerId: number,
    configId: number,
    options?: CallOptions,
  ): Promise<NodeBalancerConfigNode[]> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}/nodes`;
    const action = `list nodes of config ${configId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("GET", "/nodebalancers/{id}/configs/{id}/nodes", action, options);
    // api-v4's getNodeBalancerConfigNodes takes no paging parameters.
    return this.#caller.list(s, (p) => rawRequest("GET", path, { params: pageParams(p) }));
  }

  /** Adds a backend node (any label length: the API, not api-v4, validates). */
  createConfigNode(
    nodeBalancerId: number,
    configId: number,
    body: CreateNodeBalancerConfigNode,
    options?: CallOptions,
  ): Promise<NodeBalancerConfigNode> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}/nodes`;
    const action = `create node on config ${configId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("POST", "/nodebalancers/{id}/configs/{id}/nodes", action, options);
    return this.#caller.run(s, () => rawRequest("POST", path, { data: body }));
  }

  /** Updates a backend node. */
  updateConfigNode(
    nodeBalancerId: number,
    configId: number,
    nodeId: number,
    body: UpdateNodeBalancerConfigNode,
    options?: CallOptions,
  ): Promise<NodeBalancerConfigNode> {
    const path = `/nodebalancers/${nodeBalancerId}/configs/${configId}/nodes/${nodeId}`;
    const action = `update node ${nodeId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("PUT", "/nodebalancers/{id}/configs/{id}/nodes/{id}", action, options);
    return this.#caller.run(s, () => rawRequest("PUT", path, { data: body }));
  }

  /** Removes a backend node. */
  deleteConfigNode(
    nodeBalancerId: number,
    configId: number,
    nodeId: number,
    options?: CallOptions,
  ): Promise<void> {
    const action = `delete node ${nodeId} of nodebalancer ${nodeBalancerId}`;
    const s = spec("DELETE", "/nodebalancers/{id}/configs/{id}/nodes/{id}", action, options);
    return this.#caller.remove(s, () => deleteNodeBalancerConfigNode(nodeBalancerId, configId, nodeId));
  }

  /** Firewalls attached to a NodeBalancer. */
  listFirewalls(nodeBalancerId: number, options?: CallOptions): Promise<Firewall[]> {
    const action = `list firewalls of nodebalancer ${nodeBalancerId}`;
    const s = spec("GET", "/nodebalancers/{id}/firewalls", action, options);
    return this.#caller.list(s, (p) => getNodeBalancerFirewalls(nodeBalancerId, p));
  }
}
