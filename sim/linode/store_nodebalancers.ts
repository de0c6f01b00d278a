/** NodeBalancers, their configs (one per port) and config nodes. */
import type { NodeBalancer, NodeBalancerConfigNode } from "@linode/api-v4";
import type { Clock } from "../../common/clock.ts";
import {
  apiTime,
  type Body,
  checkLabel,
  fieldError,
  isRecord,
  notFound,
  optInt,
  optString,
  optStrings,
} from "./http.ts";
import type { Ids } from "./ids.ts";
import { formatIpv4 } from "./ip.ts";
import {
  CONFIG_DEFAULTS,
  type NbConfigFields,
  type NbConfigWire,
  type NodeInput,
  parseConfigFields,
  parseNode,
  parseNodes,
  redactConfig,
} from "./nb_input.ts";

interface ConfigRecord {
  config: NbConfigWire;
  nodes: Map<number, NodeBalancerConfigNode>;
}

interface NbRecord {
  nb: NodeBalancer;
  configs: Map<number, ConfigRecord>;
}

/** A NodeBalancer with its configs and their nodes inline (for `world.nodeBalancers()`). */
export type NodeBalancerSnapshot = NodeBalancer & {
  configs: (NbConfigWire & { nodes: NodeBalancerConfigNode[] })[];
};

/** A validated `POST /nodebalancers` body. */
interface CreateInput {
  region: string;
  label: string | undefined;
  throttle: number;
  tags: string[];
  configs: { fields: NbConfigFields; nodes: NodeInput[] }[];
}

const NB_IP_BASE = 0xace80000; // 172.232.0.0, public NodeBalancer frontends
const CITIES: Record<string, string> = { "us-east": "newark", "us-central": "dallas", "us-west": "fremont" };

/** TCP-family (tcp, http, https) and UDP configs may share a port number; the same family may not. */
function samePort(
  a: Pick<NbConfigFields, "port" | "protocol">,
  b: Pick<NbConfigFields, "port" | "protocol">,
): boolean {
  return a.port === b.port && (a.protocol === "udp") === (b.protocol === "udp");
}

/** Owns NodeBalancers. */
export class NodeBalancerStore {
  #byId = new Map<number, NbRecord>();
  #seq = 0;
  readonly #ids: Ids;
  readonly #clock: Clock;

  constructor(ids: Ids, clock: Clock) {
    this.#ids = ids;
    this.#clock = clock;
  }

  /** Validates a create body without side effects. */
  #parseCreate(body: Body): CreateInput {
    const region = optString(body, "region");
    if (!region) throw fieldError("region", "region is required");
    const label = optString(body, "label");
    if (label !== undefined) this.#checkUniqueLabel(checkLabel(label, "label"));
    const throttle = optInt(body, "client_conn_throttle", 0, 20) ?? 0;
    const tags = optStrings(body, "tags") ?? [];
    const raw = body.configs ?? [];
    if (!Array.isArray(raw)) throw fieldError("configs", "configs must be an array");
    const configs = raw.map((c, i) => {
      const prefix = `configs[${i}].`;
      if (!isRecord(c)) throw fieldError(`configs[${i}]`, "Must be an object");
      return { fields: parseConfigFields(c, CONFIG_DEFAULTS, prefix), nodes: parseNodes(c.nodes, prefix) };
    });
    configs.forEach((c, i) => {
      if (configs.slice(0, i).some((o) => samePort(o.fields, c.fields))) {
        throw fieldError(`configs[${i}].port`, `Port ${c.fields.port} is already configured`);
      }
    });
    return { region, label, throttle, tags, configs };
  }

  #checkUniqueLabel(label: string, selfId?: number): void {
    for (const rec of this.#byId.values()) {
      if (rec.nb.label === label && rec.nb.id !== selfId) throw fieldError("label", "Label must be unique");
    }
  }

  /** `POST /nodebalancers`, configs and nodes inline. */
  create(body: Body): NodeBalancer {
    const parsed = this.#parseCreate(body);
    const id = this.#ids.next("nodebalancer");
    const seq = this.#seq++;
    const ipv4 = formatIpv4(NB_IP_BASE + 256 + seq);
    const city = CITIES[parsed.region] ?? parsed.region;
    const now = apiTime(this.#clock.now());
    const nb: NodeBalancer = {
      id,
      label: parsed.label ?? `nodebalancer${id}`,
      region: parsed.region,
      hostname: `nb-${ipv4.replaceAll(".", "-")}.${city}.nodebalancer.linode.com`,
      ipv4,
      ipv6: `2600:3c03:1::${(0xac00 + seq).toString(16)}`,
      client_conn_throttle: parsed.throttle,
      client_udp_sess_throttle: 0,
      tags: parsed.tags,
      transfer: { in: 0, out: 0, total: 0 },
      type: "common",
      lke_cluster: null,
      frontend_address_type: "public",
      frontend_vpc_subnet_id: null,
      created: now,
      updated: now,
    };
    const rec: NbRecord = { nb, configs: new Map() };
    this.#byId.set(id, rec);
    for (const c of parsed.configs) this.#addConfig(rec, c.fields, c.nodes);
    return nb;
  }

  /** One NodeBalancer record, or a 404. */
  #require(id: number): NbRecord {
    const rec = this.#byId.get(id);
    if (!rec) throw notFound();
    return rec;
  }

  /** The NodeBalancer, or a 404. */
  get(id: number): NodeBalancer {
    return this.#require(id).nb;
  }

  /** True when the NodeBalancer exists. */
  has(id: number): boolean {
    return this.#byId.has(id);
  }

  /** Every NodeBalancer, by id. */
  list(): NodeBalancer[] {
    return [...this.#byId.values()].map((r) => r.nb);
  }

  /** `PUT /nodebalancers/{id}`: label, client_conn_throttle, tags. */
  update(id: number, body: Body): NodeBalancer {
    const rec = this.#require(id);
    const label = optString(body, "label");
    if (label !== undefined) this.#checkUniqueLabel(checkLabel(label, "label"), id);
    const throttle = optInt(body, "client_conn_throttle", 0, 20);
    const tags = optStrings(body, "tags");
    const region = optString(body, "region");
    if (region !== undefined && region !== rec.nb.region) {
      throw fieldError("region", "region cannot be changed");
    }
    if (label !== undefined) rec.nb.label = label;
    if (throttle !== undefined) rec.nb.client_conn_throttle = throttle;
    if (tags !== undefined) rec.nb.tags = tags;
    rec.nb.updated = apiTime(this.#clock.now());
    return rec.nb;
  }

  /** Deletes a NodeBalancer; false when it did not exist. */
  delete(id: number): boolean {
    return this.#byId.delete(id);
  }

  #addConfig(rec: NbRecord, fields: NbConfigFields, nodes: NodeInput[]): ConfigRecord {
    const id = this.#ids.next("nbConfig");
    const config: NbConfigWire = {
      ...fields,
      id,
      nodebalancer_id: rec.nb.id,
      nodes_status: { up: 0, down: 0 },
    };
    const crec: ConfigRecord = { config, nodes: new Map() };
    rec.configs.set(id, crec);
    for (const n of nodes) this.#putNode(crec, n, this.#ids.next("nbNode"));
    return crec;
  }

  #putNode(crec: ConfigRecord, input: NodeInput, id: number): NodeBalancerConfigNode {
    const node: NodeBalancerConfigNode = {
      id,
      address: input.address,
      label: input.label,
      weight: input.weight,
      mode: input.mode,
      status: "UP",
      config_id: crec.config.id,
      nodebalancer_id: crec.config.nodebalancer_id,
      vpc_config_id: input.subnetId === undefined ? null : input.subnetId,
    };
    crec.nodes.set(id, node);
    this.#recount(crec);
    return node;
  }

  #recount(crec: ConfigRecord): void {
    const nodes = [...crec.nodes.values()];
    crec.config.nodes_status = {
      up: nodes.filter((n) => n.status === "UP").length,
      down: nodes.filter((n) => n.status === "DOWN").length,
    };
  }

  #requireConfig(nbId: number, configId: number): ConfigRecord {
    const crec = this.#require(nbId).configs.get(configId);
    if (!crec) throw notFound();
    return crec;
  }

  #checkPortFree(nbId: number, fields: NbConfigFields, selfId?: number): void {
    for (const c of this.#require(nbId).configs.values()) {
      if (samePort(c.config, fields) && c.config.id !== selfId) {
        throw fieldError("port", `Port ${fields.port} is already configured`);
      }
    }
  }

  /** Configs of a NodeBalancer (certificate and key redacted). */
  configs(nbId: number): NbConfigWire[] {
    return [...this.#require(nbId).configs.values()].map((c) => redactConfig(c.config));
  }

  /** One config, or a 404. */
  config(nbId: number, configId: number): NbConfigWire {
    return redactConfig(this.#requireConfig(nbId, configId).config);
  }

  /** `POST /nodebalancers/{id}/configs`. */
  createConfig(nbId: number, body: Body): NbConfigWire {
    const rec = this.#require(nbId);
    const fields = parseConfigFields(body, CONFIG_DEFAULTS);
    const nodes = parseNodes(body.nodes, "");
    this.#checkPortFree(nbId, fields);
    return redactConfig(this.#addConfig(rec, fields, nodes).config);
  }

  /** `PUT /nodebalancers/{id}/configs/{cid}` (nodes untouched). */
  updateConfig(nbId: number, configId: number, body: Body): NbConfigWire {
    const crec = this.#requireConfig(nbId, configId);
    const fields = parseConfigFields(body, crec.config);
    this.#checkPortFree(nbId, fields, configId);
    Object.assign(crec.config, fields);
    return redactConfig(crec.config);
  }

  /** `DELETE /nodebalancers/{id}/configs/{cid}`. */
  deleteConfig(nbId: number, configId: number): void {
    this.#requireConfig(nbId, configId);
    this.#require(nbId).configs.delete(configId);
  }

  /** `POST .../configs/{cid}/rebuild`: updates the config and replaces its node set; nodes with an id keep it. */
  rebuildConfig(nbId: number, configId: number, body: Body): NbConfigWire {
    const crec = this.#requireConfig(nbId, configId);
    const fields = parseConfigFields(body, crec.config);
    const nodes = parseNodes(body.nodes, "");
    nodes.forEach((n, i) => {
      if (n.id !== undefined && !crec.nodes.has(n.id)) {
        throw fieldError(`nodes[${i}].id`, "Node not found in this config");
      }
    });
    this.#checkPortFree(nbId, fields, configId);
    Object.assign(crec.config, fields);
    const kept = new Set(nodes.flatMap((n) => n.id === undefined ? [] : [n.id]));
    for (const id of [...crec.nodes.keys()]) if (!kept.has(id)) crec.nodes.delete(id);
    for (const n of nodes) this.#putNode(crec, n, n.id ?? this.#ids.next("nbNode"));
    this.#recount(crec);
    return redactConfig(crec.config);
  }

  /** Nodes of one config. */
  nodes(nbId: number, configId: number): NodeBalancerConfigNode[] {
    return [...this.#requireConfig(nbId, configId).nodes.values()];
  }

  /** One node, or a 404. */
  node(nbId: number, configId: number, nodeId: number): NodeBalancerConfigNode {
    const node = this.#requireConfig(nbId, configId).nodes.get(nodeId);
    if (!node) throw notFound();
    return node;
  }

  /** `POST .../nodes`. */
  createNode(nbId: number, configId: number, body: Body): NodeBalancerConfigNode {
    const crec = this.#requireConfig(nbId, configId);
    return this.#putNode(crec, parseNode(body, ""), this.#ids.next("nbNode"));
  }

  /** `PUT .../nodes/{nid}` (partial). */
  updateNode(nbId: number, configId: number, nodeId: number, body: Body): NodeBalancerConfigNode {
    const crec = this.#requireConfig(nbId, configId);
    const old = this.node(nbId, configId, nodeId);
    const base: NodeInput = { address: old.address, label: old.label, weight: old.weight, mode: old.mode };
    return this.#putNode(crec, parseNode(body, "", base), nodeId);
  }

  /** `DELETE .../nodes/{nid}`. */
  deleteNode(nbId: number, configId: number, nodeId: number): void {
    const crec = this.#requireConfig(nbId, configId);
    if (!crec.nodes.delete(nodeId)) throw notFound();
    this.#recount(crec);
  }

  /** Deep copies of every NodeBalancer with configs and nodes inline. */
  snapshot(): NodeBalancerSnapshot[] {
    return [...this.#byId.values()].map((rec) =>
      structuredClone({
        ...rec.nb,
        configs: [...rec.configs.values()].map((c) => ({ ...c.config, nodes: [...c.nodes.values()] })),
      })
    );
  }

  /** Forgets every NodeBalancer. */
  reset(): void {
    this.#byId.clear();
    this.#seq = 0;
  }
}
