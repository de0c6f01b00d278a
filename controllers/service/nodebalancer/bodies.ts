/**
 * Request bodies built from the desired state: a config, a node, a whole new NodeBalancer. Key material
 * stays a `SecretPem` inside them (so logging a body or an action prints `<REDACTED>`); `revealConfigBody`
 * and `revealCreateBody` give the plain JSON to send, and are the only place the key comes out. Pure.
 */
import type {
  Algorithm,
  CreateNodeBalancerConfig,
  CreateNodeBalancerConfigNode,
  NodeBalancerProxyProtocol,
  Protocol,
  Stickiness,
} from "@linode/api-v4";
import type { DesiredConfig, DesiredNode, DesiredNodeBalancer, DesiredVpc, SecretPem } from "./desired.ts";
import type { CheckType } from "../annotations/spec.ts";

/** A config's settable fields, the key still wrapped. */
export interface ConfigBody {
  port?: number;
  protocol?: Protocol;
  proxy_protocol?: NodeBalancerProxyProtocol;
  algorithm?: Algorithm;
  stickiness?: Stickiness;
  check?: CheckType;
  check_interval?: number;
  check_timeout?: number;
  check_attempts?: number;
  check_passive?: boolean;
  check_path?: string;
  check_body?: string;
  udp_check_port?: number;
  ssl_cert?: string;
  ssl_key?: SecretPem;
}

/** A node body (create, or the changed fields of an update). */
export type NodeBody = CreateNodeBalancerConfigNode;

/** A config body with its nodes, for a new config or a new NodeBalancer. */
export type ConfigWithNodesBody = ConfigBody & { nodes: NodeBody[] };

/** The body of `POST /nodebalancers`, the keys still wrapped. */
export interface CreateNodeBalancerBody {
  label: string;
  region: string;
  type: string;
  tags: string[];
  client_conn_throttle: number;
  configs: ConfigWithNodesBody[];
  ipv4?: string;
  firewall_id?: number;
  vpcs?: VpcBody[];
  /** Named as the Go CCM's client (linodego) sends it. */
  frontend_vpcs?: VpcBody[];
}

/** One VPC attachment on create. */
export interface VpcBody {
  subnet_id: number;
  ipv4_range?: string;
  ipv6_range?: string;
  ipv4_range_auto_assign?: boolean;
}

/** The node body of a desired node. */
export function nodeBody(node: DesiredNode): NodeBody {
  const body: NodeBody = { address: node.address, label: node.label, weight: node.weight };
  if (node.mode !== undefined) body.mode = node.mode;
  if (node.subnet_id !== undefined) body.subnet_id = node.subnet_id;
  return body;
}

/** Every managed field of a desired config (TLS included for https). */
export function configBody(config: DesiredConfig): ConfigBody {
  const body: ConfigBody = {
    port: config.port,
    protocol: config.protocol,
    proxy_protocol: config.proxy_protocol,
    algorithm: config.algorithm,
    check: config.check,
    check_interval: config.check_interval,
    check_timeout: config.check_timeout,
    check_attempts: config.check_attempts,
    check_passive: config.check_passive,
  };
  if (config.stickiness !== null) body.stickiness = config.stickiness;
  if (config.check_path !== null) body.check_path = config.check_path;
  if (config.check_body !== null) body.check_body = config.check_body;
  if (config.udp_check_port !== null) body.udp_check_port = config.udp_check_port;
  if (config.tls !== null) {
    body.ssl_cert = config.tls.ssl_cert;
    body.ssl_key = config.tls.ssl_key;
  }
  return body;
}

function vpcBody(vpc: DesiredVpc): VpcBody {
  const body: VpcBody = { subnet_id: vpc.subnet_id };
  if (vpc.ipv4_range !== null) body.ipv4_range = vpc.ipv4_range;
  if (vpc.ipv6_range !== null) body.ipv6_range = vpc.ipv6_range;
  if (vpc.ipv4_range_auto_assign) body.ipv4_range_auto_assign = true;
  return body;
}

/** The body creating the desired NodeBalancer; `firewallId` is the firewall to attach (from the ID or ACL). */
export function createNodeBalancerBody(
  desired: DesiredNodeBalancer,
  firewallId?: number,
): CreateNodeBalancerBody {
  const body: CreateNodeBalancerBody = {
    label: desired.label,
    region: desired.region,
    type: desired.type,
    tags: [...desired.tags],
    client_conn_throttle: desired.client_conn_throttle,
    configs: desired.configs.map((c) => ({ ...configBody(c), nodes: c.nodes.map(nodeBody) })),
  };
  if (desired.ipv4 !== null) body.ipv4 = desired.ipv4;
  if (firewallId !== undefined) body.firewall_id = firewallId;
  if (desired.backendVpc !== null) body.vpcs = [vpcBody(desired.backendVpc)];
  if (desired.frontendVpc !== null) body.frontend_vpcs = [vpcBody(desired.frontendVpc)];
  return body;
}

/** The plain JSON of a config body, key revealed: only for the request itself. */
export function revealConfigBody(body: ConfigBody & { nodes?: NodeBody[] }): CreateNodeBalancerConfig {
  const { ssl_key, ...rest } = body;
  return ssl_key === undefined ? rest : { ...rest, ssl_key: ssl_key.reveal() };
}

/** The plain JSON of a create body, keys revealed: only for the request itself. */
export function revealCreateBody(
  body: CreateNodeBalancerBody,
): Omit<CreateNodeBalancerBody, "configs"> & { configs: CreateNodeBalancerConfig[] } {
  return { ...body, configs: body.configs.map(revealConfigBody) };
}
