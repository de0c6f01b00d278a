/**
 * Configs (ports) and backend nodes of one NodeBalancer record. Rebuild follows the reference: nodes sent with
 * an `id` are updated and keep it, nodes sent without one are created, and current nodes left out are deleted.
 */
import { type Body, fieldError, isRecord, notFound } from "./http.ts";
import type { Ids } from "./ids.ts";
import {
  type NbConfigFields,
  type NbConfigWire,
  parseConfigFields,
  redactConfig,
  samePort,
} from "./nb_config_input.ts";
import {
  checkNodeContext,
  checkNodeList,
  type NodeInput,
  parseNode,
  parseNodes,
  storedMode,
} from "./nb_node_input.ts";
import {
  type ConfigRecord,
  type NbNodeStatus,
  type NbNodeWire,
  type NbRecord,
  nodeAsInput,
  nodeContext,
  recount,
} from "./nb_records.ts";

/** A validated config with its nodes, before it exists. */
export interface ConfigDraft {
  fields: NbConfigFields;
  nodes: NodeInput[];
}

/**
 * Validates a config body with its nodes for `rec` (`prefix` "configs[0]." for inline configs). A new config
 * needs at least one node: the reference (v4.208) says of `POST /nodebalancers` "Each config needs a unique
 * port and at least one node" and lists `nodes` as required for `POST /nodebalancers/{id}/configs`; it sets
 * no minimum there (and its prose says nodes may be added later), so the sim follows Linode's own client
 * schema for that route (@linode/validation 0.83: "You must provide at least one back end node").
 */
export function draftConfig(rec: NbRecord, body: Body, prefix: string): ConfigDraft {
  const fields = parseConfigFields(body, undefined, { prefix, premium: rec.nb.type !== "common" });
  const nodes = parseNodes(body.nodes, prefix);
  if (nodes.length === 0) throw fieldError(`${prefix}nodes`, "You must provide at least one back end node");
  checkNodeList(nodes, nodeContext(rec, fields.protocol), prefix);
  return { fields, nodes };
}

/** Validates a create body's inline `configs`: each as `draftConfig`, ports unique per protocol family. */
export function draftInlineConfigs(rec: NbRecord, raw: unknown): ConfigDraft[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw fieldError("configs", "configs must be an array");
  const drafts = raw.map((c, i) => {
    if (!isRecord(c)) throw fieldError(`configs[${i}]`, "Must be an object");
    return draftConfig(rec, c, `configs[${i}].`);
  });
  drafts.forEach((d, i) => {
    if (drafts.slice(0, i).some((o) => samePort(o.fields, d.fields))) {
      throw fieldError(`configs[${i}].port`, `Port ${d.fields.port} is already configured`);
    }
  });
  return drafts;
}

function nodeWire(
  rec: NbRecord,
  crec: ConfigRecord,
  input: NodeInput,
  id: number,
  status: NbNodeStatus,
): NbNodeWire {
  return {
    id,
    address: input.address,
    label: input.label,
    weight: input.weight,
    mode: storedMode(input, crec.config.protocol === "udp", "mode"),
    status,
    config_id: crec.config.id,
    nodebalancer_id: rec.nb.id,
    vpc_config_id: input.subnetId === undefined ? null : rec.subnets.get(input.subnetId)?.vpcConfigId ?? null,
  };
}

/** Adds a validated config and its nodes to `rec`. */
export function addConfig(rec: NbRecord, ids: Ids, draft: ConfigDraft): ConfigRecord {
  const config: NbConfigWire = {
    ...draft.fields,
    id: ids.next("nbConfig"),
    nodebalancer_id: rec.nb.id,
    nodes_status: { up: 0, down: 0 },
  };
  const crec: ConfigRecord = { config, nodes: new Map() };
  rec.configs.set(config.id, crec);
  for (const n of draft.nodes) {
    const id = ids.next("nbNode");
    crec.nodes.set(id, nodeWire(rec, crec, n, id, "Unknown"));
  }
  recount(crec);
  return crec;
}

/** The config `configId` of `rec`, or a 404. */
export function requireConfig(rec: NbRecord, configId: number): ConfigRecord {
  const crec = rec.configs.get(configId);
  if (!crec) throw notFound();
  return crec;
}

function checkPortFree(rec: NbRecord, fields: NbConfigFields, selfId?: number): void {
  for (const c of rec.configs.values()) {
    if (samePort(c.config, fields) && c.config.id !== selfId) {
      throw fieldError("port", `Port ${fields.port} is already configured`);
    }
  }
}

/** One config as the API shows it (certificate and key redacted), or a 404. */
export function configView(rec: NbRecord, configId: number): NbConfigWire {
  return redactConfig(requireConfig(rec, configId).config);
}

/** `POST /nodebalancers/{id}/configs`, with at least one node (see `draftConfig`). */
export function createConfig(rec: NbRecord, ids: Ids, body: Body): NbConfigWire {
  const draft = draftConfig(rec, body, "");
  checkPortFree(rec, draft.fields);
  return redactConfig(addConfig(rec, ids, draft).config);
}

/** Applies new settings; a change between UDP and TCP-family protocols switches node modes with it. */
function applyFields(rec: NbRecord, crec: ConfigRecord, fields: NbConfigFields): void {
  const udpBefore = crec.config.protocol === "udp";
  Object.assign(crec.config, fields);
  if (udpBefore === (fields.protocol === "udp")) return;
  for (const node of crec.nodes.values()) {
    const input = { ...nodeAsInput(rec, node), mode: undefined };
    node.mode = storedMode(input, fields.protocol === "udp", "mode");
  }
}

/** `PUT /nodebalancers/{id}/configs/{cid}`: settings only, nodes untouched. */
export function updateConfig(rec: NbRecord, configId: number, body: Body): NbConfigWire {
  const crec = requireConfig(rec, configId);
  const fields = parseConfigFields(body, crec.config, { premium: rec.nb.type !== "common" });
  checkPortFree(rec, fields, configId);
  applyFields(rec, crec, fields);
  return redactConfig(crec.config);
}

/** `POST .../configs/{cid}/rebuild`: settings and the whole node list in one call. */
export function rebuildConfig(rec: NbRecord, ids: Ids, configId: number, body: Body): NbConfigWire {
  const crec = requireConfig(rec, configId);
  const fields = parseConfigFields(body, crec.config, { premium: rec.nb.type !== "common" });
  if (!Array.isArray(body.nodes)) throw fieldError("nodes", "nodes is required");
  const nodes = parseNodes(body.nodes, "");
  nodes.forEach((n, i) => {
    if (n.id !== undefined && !crec.nodes.has(n.id)) {
      throw fieldError(`nodes[${i}].id`, "Node not found in this config");
    }
  });
  checkNodeList(nodes, nodeContext(rec, fields.protocol), "");
  checkPortFree(rec, fields, configId);
  applyFields(rec, crec, fields);
  const kept = new Set(nodes.flatMap((n) => n.id === undefined ? [] : [n.id]));
  for (const id of [...crec.nodes.keys()]) if (!kept.has(id)) crec.nodes.delete(id);
  for (const n of nodes) {
    const old = n.id === undefined ? undefined : crec.nodes.get(n.id);
    const id = n.id ?? ids.next("nbNode");
    // A backend moved to another address has not been checked there yet.
    const status = old && old.address === n.address ? old.status : "Unknown";
    crec.nodes.set(id, nodeWire(rec, crec, n, id, status));
  }
  recount(crec);
  return redactConfig(crec.config);
}

/** `DELETE .../configs/{cid}`. */
export function deleteConfig(rec: NbRecord, configId: number): void {
  requireConfig(rec, configId);
  rec.configs.delete(configId);
}

/** One node, or a 404. */
export function requireNode(rec: NbRecord, configId: number, nodeId: number): NbNodeWire {
  const node = requireConfig(rec, configId).nodes.get(nodeId);
  if (!node) throw notFound();
  return node;
}

function checkAddressFree(crec: ConfigRecord, address: string, selfId?: number): void {
  for (const n of crec.nodes.values()) {
    if (n.address === address && n.id !== selfId) {
      throw fieldError("address", "Address is already used by another node");
    }
  }
}

/** `POST .../nodes`. */
export function createNode(rec: NbRecord, ids: Ids, configId: number, body: Body): NbNodeWire {
  const crec = requireConfig(rec, configId);
  const input = parseNode(body, "");
  checkNodeContext(input, nodeContext(rec, crec.config.protocol), "");
  checkAddressFree(crec, input.address);
  const limit = rec.nb.type === "common" ? 1000 : 2000;
  if (crec.nodes.size >= limit) throw fieldError("nodes", `A config may have at most ${limit} nodes`);
  const id = ids.next("nbNode");
  const node = nodeWire(rec, crec, input, id, "Unknown");
  crec.nodes.set(id, node);
  recount(crec);
  return node;
}

/** `PUT .../nodes/{nid}` (partial). */
export function updateNode(rec: NbRecord, configId: number, nodeId: number, body: Body): NbNodeWire {
  const crec = requireConfig(rec, configId);
  const old = requireNode(rec, configId, nodeId);
  const input = parseNode(body, "", nodeAsInput(rec, old));
  checkNodeContext(input, nodeContext(rec, crec.config.protocol), "");
  checkAddressFree(crec, input.address, nodeId);
  const node = nodeWire(rec, crec, input, nodeId, input.address === old.address ? old.status : "Unknown");
  crec.nodes.set(nodeId, node);
  recount(crec);
  return node;
}

/** `DELETE .../nodes/{nid}`. */
export function deleteNode(rec: NbRecord, configId: number, nodeId: number): void {
  const crec = requireConfig(rec, configId);
  if (!crec.nodes.delete(nodeId)) throw notFound();
  recount(crec);
}

/** Sets what health checks would report for a node (tests and seeding; the API has no such call). */
export function setNodeStatus(
  rec: NbRecord,
  configId: number,
  nodeId: number,
  status: NbNodeStatus,
): NbNodeWire {
  const node = requireNode(rec, configId, nodeId);
  node.status = status;
  recount(requireConfig(rec, configId));
  return node;
}
