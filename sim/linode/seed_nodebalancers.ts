/**
 * Seeding NodeBalancers the way other clients left them: node statuses, and the exact create body the Go CCM
 * (linode/linode-cloud-controller-manager, cloud/linode/loadbalancers.go) sends for a Service.
 */
import { type Body, isRecord } from "./http.ts";
import { setNodeStatus } from "./nb_configs.ts";
import { optNodeStatus } from "./nb_node_input.ts";
import type { NbNodeStatus, NbRecord } from "./nb_records.ts";

/** Reads and checks `configs[i].nodes[j].status` of a seed body (before anything is created). */
export function readSeedStatuses(body: Body): (NbNodeStatus | undefined)[][] {
  const rawConfigs = Array.isArray(body.configs) ? body.configs : [];
  return rawConfigs.map((raw, i) => {
    if (!isRecord(raw) || !Array.isArray(raw.nodes)) return [];
    return raw.nodes.map((n, j) => isRecord(n) ? optNodeStatus(n, `configs[${i}].nodes[${j}].`) : undefined);
  });
}

/** Applies statuses read by `readSeedStatuses` to the record made from the same body (same order). */
export function applySeedStatuses(rec: NbRecord, statuses: (NbNodeStatus | undefined)[][]): void {
  const configs = [...rec.configs.values()];
  statuses.forEach((perNode, i) => {
    const crec = configs[i];
    if (!crec) return;
    const nodes = [...crec.nodes.values()];
    perNode.forEach((status, j) => {
      const node = nodes[j];
      if (status && node) setNodeStatus(rec, crec.config.id, node.id, status);
    });
  });
}

/** One backend of a Go-CCM-made NodeBalancer: the Kubernetes Node's name and backend address. */
export interface GoCcmBackend {
  nodeName: string;
  /** The node's private IPv4 (or VPC address, with `subnetId`). */
  ip: string;
  subnetId?: number;
  status?: "UP" | "DOWN" | "Unknown";
}

/** What the Go CCM derives a NodeBalancer from. */
export interface GoCcmService {
  /** `<--nodebalancer-prefix>-<12 hex digits>`; the Go CCM takes the digits from the clock. */
  label: string;
  region?: string;
  /** The cluster name tag, then `--nodebalancer-tags` and the `tags` annotation. */
  tags?: string[];
  ports: { port: number; nodePort: number; protocol?: "tcp" | "http" | "udp" }[];
  backends: GoCcmBackend[];
  /** `backend_vpcs` subnet when the cluster runs in a VPC. */
  backendSubnetId?: number;
  type?: "common" | "premium";
  /** `client_conn_throttle` (the Go CCM's code sends 0 without the annotation). */
  throttle?: number;
}

/** The Go CCM pads node names shorter than 3 characters with "node-" and cuts them at 32. */
function nodeLabel(name: string): string {
  let label = name;
  while (label.length < 3) label = `node-${label}`;
  return label.slice(0, 32);
}

/**
 * The create body the Go CCM sends for a Service with default annotations: per port a config with
 * connection checks every 5 s (timeout 3, attempts 2), passive checks on, roundrobin, no stickiness for TCP,
 * and one node per backend (weight 100, mode accept; no mode for UDP). `status` per node is for seeding.
 */
export function goCcmCreateBody(svc: GoCcmService): Body {
  return {
    label: svc.label,
    region: svc.region ?? "us-east",
    client_conn_throttle: svc.throttle ?? 0,
    tags: svc.tags ?? [],
    type: svc.type ?? "common",
    ...(svc.backendSubnetId === undefined ? {} : { backend_vpcs: [{ subnet_id: svc.backendSubnetId }] }),
    configs: svc.ports.map((p) => {
      const protocol = p.protocol ?? "tcp";
      const udp = protocol === "udp";
      return {
        port: p.port,
        protocol,
        proxy_protocol: "none",
        algorithm: "roundrobin",
        ...(protocol === "http" ? { stickiness: "table" } : {}),
        check: udp ? "none" : "connection",
        check_interval: 5,
        check_timeout: 3,
        check_attempts: 2,
        check_passive: !udp,
        ...(udp ? { udp_check_port: 80 } : {}),
        nodes: svc.backends.map((b) => ({
          address: `${b.ip}:${p.nodePort}`,
          label: nodeLabel(b.nodeName),
          weight: 100,
          ...(udp ? {} : { mode: "accept" }),
          ...(b.subnetId === undefined ? {} : { subnet_id: b.subnetId }),
          ...(b.status === undefined ? {} : { status: b.status }),
        })),
      };
    }),
  };
}
