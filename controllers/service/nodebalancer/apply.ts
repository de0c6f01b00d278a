/**
 * Carries out a NodeBalancer diff through the Linode client and records every result in the cache, so the
 * next reconcile of the Service reads nothing. A failed write drops the NodeBalancer's cached details: its
 * state is then in doubt (a timeout may have acted, a 400 or 404 says the cache was wrong) and the next
 * reconcile reads it again before deciding anything.
 */
import type { NodeBalancer } from "@linode/api-v4";
import type { NodeBalancerCache } from "../../../cache/nodebalancers.ts";
import type { NodeBalancerConfigState, NodeBalancerNodeState } from "../../../cache/types.ts";
import type { NodeBalancerApi } from "../../../linode/client.ts";
import { createNodeBalancerBody, revealConfigBody, revealCreateBody } from "./bodies.ts";
import type { DesiredNodeBalancer } from "./desired.ts";
import type { NodeBalancerAction } from "./diff_types.ts";

/** The NodeBalancer calls the service controller makes. `LinodeClient.nodeBalancers` implements it. */
export type NodeBalancerWrites = Pick<
  NodeBalancerApi,
  | "get"
  | "create"
  | "update"
  | "delete"
  | "listConfigs"
  | "listConfigNodes"
  | "createConfig"
  | "updateConfig"
  | "deleteConfig"
  | "createConfigNode"
  | "updateConfigNode"
  | "deleteConfigNode"
>;

/** What applying needs: the client to write through and the cache to record in. */
export interface ApplyDeps {
  nodeBalancers: NodeBalancerWrites;
  cache: Pick<NodeBalancerCache, "record" | "details">;
}

type ConfigResponse = Awaited<ReturnType<NodeBalancerWrites["createConfig"]>>;

/** The config a write answered with, its nodes taken from the answer when it has them, else listed. */
async function configState(
  deps: ApplyDeps,
  nbId: number,
  config: ConfigResponse,
  knownNodes?: readonly NodeBalancerNodeState[],
): Promise<NodeBalancerConfigState> {
  const answered: unknown = (config as { nodes?: unknown }).nodes;
  const nodes = Array.isArray(answered)
    ? answered as NodeBalancerNodeState[]
    : knownNodes ?? await deps.nodeBalancers.listConfigNodes(nbId, config.id);
  return { ...config, nodes };
}

function cachedConfig(deps: ApplyDeps, nbId: number, configId: number): NodeBalancerConfigState | undefined {
  return deps.cache.details.peekConfigs(nbId)?.find((c) => c.id === configId);
}

function withNodes(
  config: NodeBalancerConfigState | undefined,
  change: (nodes: readonly NodeBalancerNodeState[]) => readonly NodeBalancerNodeState[],
): NodeBalancerConfigState | undefined {
  return config ? { ...config, nodes: change(config.nodes) } : undefined;
}

async function applyNodeAction(deps: ApplyDeps, nbId: number, action: NodeBalancerAction): Promise<void> {
  const api = deps.nodeBalancers;
  let next: NodeBalancerConfigState | undefined;
  if (action.kind === "createNode") {
    const node = await api.createConfigNode(nbId, action.configId, action.body);
    next = withNodes(cachedConfig(deps, nbId, action.configId), (ns) => [...ns, node]);
  } else if (action.kind === "updateNode") {
    const node = await api.updateConfigNode(nbId, action.configId, action.nodeId, action.body);
    const replace = (ns: readonly NodeBalancerNodeState[]) => ns.map((n) => n.id === node.id ? node : n);
    next = withNodes(cachedConfig(deps, nbId, action.configId), replace);
  } else if (action.kind === "deleteNode") {
    await api.deleteConfigNode(nbId, action.configId, action.nodeId);
    const drop = (ns: readonly NodeBalancerNodeState[]) => ns.filter((n) => n.id !== action.nodeId);
    next = withNodes(cachedConfig(deps, nbId, action.configId), drop);
  }
  if (next) deps.cache.details.recordConfig(nbId, next);
}

async function applyOne(deps: ApplyDeps, nbId: number, action: NodeBalancerAction): Promise<void> {
  const api = deps.nodeBalancers;
  const details = deps.cache.details;
  switch (action.kind) {
    case "updateNodeBalancer":
      deps.cache.record(await api.update(nbId, action.body));
      return;
    case "createConfig": {
      const created = await api.createConfig(nbId, revealConfigBody(action.body));
      details.recordConfig(nbId, await configState(deps, nbId, created));
      return;
    }
    case "updateConfig": {
      const updated = await api.updateConfig(nbId, action.configId, revealConfigBody(action.body));
      const known = cachedConfig(deps, nbId, action.configId)?.nodes;
      details.recordConfig(nbId, await configState(deps, nbId, updated, known));
      return;
    }
    case "deleteConfig":
      await api.deleteConfig(nbId, action.configId);
      details.forgetConfig(nbId, action.configId);
      return;
    default:
      await applyNodeAction(deps, nbId, action);
  }
}

/** Applies `actions` in order; on the first failure forgets the NodeBalancer's details and rethrows. */
export async function applyActions(
  deps: ApplyDeps,
  nbId: number,
  actions: readonly NodeBalancerAction[],
): Promise<void> {
  try {
    for (const action of actions) await applyOne(deps, nbId, action);
  } catch (e) {
    deps.cache.details.forget(nbId);
    throw e;
  }
}

/**
 * Creates the NodeBalancer with every config and node in the one call the API allows (attached to
 * `firewallId` when given) and reads nothing back: the answer has no config or node ids, which only a later
 * change needs, so they are read when the plan first differs from this one (`isAsCreated`). One call per new
 * LoadBalancer Service, as the Go CCM's create.
 */
export async function createNodeBalancer(
  deps: ApplyDeps,
  plan: { readonly desired: DesiredNodeBalancer; readonly fingerprint: string },
  firewallId?: number,
): Promise<NodeBalancer> {
  const body = createNodeBalancerBody(plan.desired, firewallId);
  const nb = await deps.nodeBalancers.create(revealCreateBody(body));
  deps.cache.record(nb);
  deps.cache.details.recordCreated(nb.id, plan.fingerprint);
  return nb;
}
