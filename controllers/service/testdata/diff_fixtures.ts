/**
 * For the diff tests: a desired NodeBalancer as the API would report it after being built exactly so
 * (`asCurrent`), and a small model of the API's write semantics (`applyActions`) to check convergence.
 */
import type { NodeBalancerConfigNode } from "@linode/api-v4";
import { type NodeBalancerAction, revealConfigBody } from "../nodebalancer/writes.ts";
import type { DesiredNodeBalancer } from "../nodebalancer/desired.ts";
import type { CurrentConfig, CurrentNodeBalancer } from "../nodebalancer/diff.ts";

/** A config as the API reports it, filled with the API's defaults where the plan leaves a field alone. */
function wireConfig(id: number, nodeBalancerId: number, body: Record<string, unknown>): CurrentConfig {
  const protocol = body.protocol === "udp" ? "udp" : body.protocol === "https" ? "https" : body.protocol;
  return {
    id,
    nodebalancer_id: nodeBalancerId,
    port: Number(body.port),
    protocol: protocol === "udp" || protocol === "https" || protocol === "http" ? protocol : "tcp",
    proxy_protocol: body.proxy_protocol === "v1" || body.proxy_protocol === "v2"
      ? body.proxy_protocol
      : "none",
    algorithm: body.algorithm === "leastconn" || body.algorithm === "source" || body.algorithm === "ring_hash"
      ? body.algorithm
      : "roundrobin",
    stickiness: typeof body.stickiness === "string" ? body.stickiness as CurrentConfig["stickiness"] : "none",
    check: typeof body.check === "string" ? body.check as CurrentConfig["check"] : "none",
    check_interval: Number(body.check_interval ?? 5),
    check_timeout: Number(body.check_timeout ?? 3),
    check_attempts: Number(body.check_attempts ?? 3),
    check_passive: Boolean(body.check_passive ?? true),
    check_path: String(body.check_path ?? ""),
    check_body: String(body.check_body ?? ""),
    udp_check_port: Number(body.udp_check_port ?? 80),
    cipher_suite: "recommended",
    ssl_cert: body.ssl_cert ? "<REDACTED>" : "",
    ssl_key: body.ssl_key ? "<REDACTED>" : "",
    ssl_commonname: "",
    ssl_fingerprint: typeof body.ssl_fingerprint === "string" ? body.ssl_fingerprint : "",
  };
}

function wireNode(id: number, configId: number, nodeBalancerId: number, body: Record<string, unknown>) {
  const node: NodeBalancerConfigNode = {
    id,
    config_id: configId,
    nodebalancer_id: nodeBalancerId,
    address: String(body.address),
    label: String(body.label),
    weight: Number(body.weight ?? 100),
    mode: body.mode === "accept" ? "accept" : "none",
    status: "UP",
  };
  return node;
}

/** The NodeBalancer the API would report after creating `desired` (tags come back in another order). */
export function asCurrent(desired: DesiredNodeBalancer, nodeBalancerId = 7): CurrentNodeBalancer {
  let nextId = 100;
  const nodes = new Map<number, NodeBalancerConfigNode[]>();
  const configs = desired.configs.map((c, i) => {
    const configId = 10 + i;
    nodes.set(configId, c.nodes.map((n) => wireNode(nextId++, configId, nodeBalancerId, { ...n })));
    return wireConfig(configId, nodeBalancerId, { port: c.port, ...configBodyOf(c) });
  });
  return {
    nodeBalancer: {
      id: nodeBalancerId,
      client_conn_throttle: desired.client_conn_throttle,
      tags: [...desired.tags].reverse(),
      ipv4: desired.ipv4 ?? "45.79.0.1",
      type: desired.type,
    },
    configs,
    nodes,
  };
}

function configBodyOf(c: DesiredNodeBalancer["configs"][number]): Record<string, unknown> {
  return {
    protocol: c.protocol,
    proxy_protocol: c.proxy_protocol,
    algorithm: c.algorithm,
    stickiness: c.stickiness ?? undefined,
    check: c.check,
    check_interval: c.check_interval,
    check_timeout: c.check_timeout,
    check_attempts: c.check_attempts,
    check_passive: c.check_passive,
    check_path: c.check_path ?? undefined,
    check_body: c.check_body ?? undefined,
    udp_check_port: c.udp_check_port ?? undefined,
    ssl_cert: c.tls?.ssl_cert,
    ssl_key: c.tls ? "<REDACTED>" : undefined,
    ssl_fingerprint: c.tls?.fingerprint,
  };
}

/**
 * The NodeBalancer after the API carried out `actions` (updates merge fields, creates get new ids, deletes
 * drop). `fingerprints` maps a certificate to the fingerprint the API would compute for it.
 */
export function applyActions(
  current: CurrentNodeBalancer,
  actions: readonly NodeBalancerAction[],
  fingerprints: ReadonlyMap<string, string> = new Map(),
): CurrentNodeBalancer {
  let nb = { ...current.nodeBalancer };
  let configs = [...current.configs];
  const nodes = new Map([...current.nodes].map(([k, v]) => [k, [...v]]));
  let nextId = 1000;
  const fp = (cert: unknown) => (typeof cert === "string" ? fingerprints.get(cert) : undefined);
  for (const a of actions) {
    if (a.kind === "updateNodeBalancer") nb = { ...nb, ...a.body };
    if (a.kind === "createConfig") {
      const id = nextId++;
      const { nodes: bodyNodes, ...body } = revealConfigBody(a.body);
      configs.push(wireConfig(id, nb.id, { ...body, ssl_fingerprint: fp(body.ssl_cert) }));
      nodes.set(id, (bodyNodes ?? []).map((n) => wireNode(nextId++, id, nb.id, { ...n })));
    }
    if (a.kind === "updateConfig") {
      const body = revealConfigBody(a.body);
      configs = configs.map((c) =>
        c.id === a.configId
          ? {
            ...c,
            ...body,
            ...(body.ssl_cert ? { ssl_fingerprint: fp(body.ssl_cert) ?? "", ssl_cert: "<REDACTED>" } : {}),
          }
          : c
      ) as CurrentConfig[];
    }
    if (a.kind === "deleteConfig") configs = configs.filter((c) => c.id !== a.configId);
    const list = "configId" in a ? nodes.get(a.configId) ?? [] : [];
    if (a.kind === "createNode") {
      nodes.set(a.configId, [...list, wireNode(nextId++, a.configId, nb.id, { ...a.body })]);
    }
    if (a.kind === "updateNode") {
      nodes.set(
        a.configId,
        list.map((n) => n.id === a.nodeId ? { ...n, ...a.body } as NodeBalancerConfigNode : n),
      );
    }
    if (a.kind === "deleteNode") nodes.set(a.configId, list.filter((n) => n.id !== a.nodeId));
  }
  return { nodeBalancer: nb, configs, nodes };
}
