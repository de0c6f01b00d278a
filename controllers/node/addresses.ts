/**
 * Pure planning of what the CCM owns on a Node: addresses, labels, annotations and its taints. Addresses are
 * what the Go CCM lists and upstream's cloud-node controller (k8s.io/cloud-provider v0.35.4, which the Go CCM
 * runs in) writes of them: kubelet's `--node-ip` preferred, and written only when upstream's check finds a
 * change. No I/O, no clock.
 */
import type { V1Node, V1NodeAddress, V1Taint } from "@kubernetes/client-node";
import type { InstanceIndex, VpcAddresses } from "../../cache/instance_index.ts";
import type { LinodeInstance } from "../../cache/types.ts";
import { parseProviderId, toProviderId } from "../provider_id.ts";
import { stripPrefix } from "../../cache/instance_index.ts";
import { type Cidr4, formatIpv4, formatIpv6, isPrivateIpv4, parseIpv4, parseIpv6 } from "../../common/net.ts";

/** Taint kubelet sets with `--cloud-provider=external` until the CCM has initialised the Node. */
export const UNINITIALIZED_TAINT_KEY = "node.cloudprovider.kubernetes.io/uninitialized";
/** Taint the lifecycle controller sets while the Linode is shut down. */
export const SHUTDOWN_TAINT_KEY = "node.cloudprovider.kubernetes.io/shutdown";
/** Annotation kubelet sets to the `--node-ip` it was given. */
export const PROVIDED_NODE_IP_ANNOTATION = "alpha.kubernetes.io/provided-node-ip";
/** Label with the Linode's host UUID (a label, despite the Go constant's name). */
export const HOST_UUID_LABEL = "node.k8s.linode.com/host-uuid";
/** Annotation with the Linode's private IPv4. */
export const PRIVATE_IP_ANNOTATION = "node.k8s.linode.com/private-ip";
/** Annotation with the Linode's public IPv6. */
export const PUBLIC_IPV6_ANNOTATION = "node.k8s.linode.com/public-ipv6";

/** A node address type, as in `status.addresses`. */
export type NodeAddressType = "Hostname" | "InternalIP" | "ExternalIP";

/** One entry of `status.addresses`. */
export interface NodeAddress {
  type: NodeAddressType;
  address: string;
}

/** Options of address planning. */
export interface AddressOptions {
  /** `LINODE_EXTERNAL_SUBNET`: private-range addresses inside it count as external. */
  externalSubnet?: Cidr4;
}

/**
 * The Linode's addresses as the Go CCM's `InstanceMetadata` lists them (cloud/linode/services/instances.go,
 * `getInstanceAddresses`): Hostname (the Linode label); VPC IPv4 as InternalIP; `ipv4` in the API's order (public
 * first), a private address as InternalIP and any other as ExternalIP; VPC IPv6 (SLAAC) as InternalIP, or
 * ExternalIP when its interface is public; the public IPv6 as ExternalIP. Then, as the Go CCM keeps them, the
 * Node's own InternalIPs not listed yet (kubelet sets its `--node-ip` as one when it registers the Node).
 */
export function planAddresses(
  instance: LinodeInstance,
  vpc: VpcAddresses,
  options: AddressOptions & { nodeAddresses?: readonly V1NodeAddress[] } = {},
): NodeAddress[] {
  const internal = (address: string): NodeAddress => ({ type: "InternalIP", address });
  const external = (address: string): NodeAddress => ({ type: "ExternalIP", address });
  const isPrivate = (ip: string) => isPrivateIpv4(ip, options.externalSubnet);
  const all: NodeAddress[] = [
    { type: "Hostname", address: instance.label },
    ...vpc.ipv4.map(internal),
    ...instance.ipv4.filter((ip) => parseIpv4(ip) !== undefined).map((ip) =>
      isPrivate(ip) ? internal(ip) : external(ip)
    ),
    ...vpc.ipv6.map((a) => a.isPublic ? external(a.address) : internal(a.address)),
    ...(instance.ipv6 ? [external(stripPrefix(instance.ipv6))] : []),
  ];
  // The Go CCM does not check its own list for repeats (none occur: each source holds other addresses); the
  // apiserver refuses a Node status that lists one twice, so a repeat is dropped here.
  const seen = new Set<string>();
  const listed = all.filter((a) => !seen.has(a.address) && seen.add(a.address));
  const kept = (options.nodeAddresses ?? []).filter((a) =>
    a.type === "InternalIP" && !seen.has(a.address) && seen.add(a.address)
  );
  return [...listed, ...kept.map((a) => internal(a.address))];
}

/**
 * An IP as `k8s.io/utils/net`'s `ParseIPSloppy` reads it (IPv4 octets may have leading zeros), as a 128-bit
 * value with IPv4 mapped into `::ffff:0:0/96`, as Go's 16-byte `net.IP`; undefined when not an IP.
 */
function parseIpSloppy(text: string): bigint | undefined {
  const octets = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)?.slice(1).map(Number);
  if (octets) {
    if (octets.some((o) => o > 255)) return undefined;
    return octets.reduce((acc, o) => (acc << 8n) | BigInt(o), 0xffffn);
  }
  return parseIpv6(text);
}

const V4_MAPPED = 0xffffn << 32n;

/** Go's `net.IP.String()`: dotted for IPv4 (mapped too), RFC 5952 for IPv6. */
function formatIp(value: bigint): string {
  return value >> 32n === 0xffffn ? formatIpv4(Number(value - V4_MAPPED)) : formatIpv6(value);
}

/**
 * Upstream's `ParseNodeIPAnnotation` (k8s.io/component-helpers node/util/ips.go, v0.35.4): one IP or a
 * dual-stack pair, comma-separated, nothing trimmed; an error names what it refuses, in upstream's words.
 */
function parseNodeIpAnnotation(text: string): { ips: bigint[] } | { error: string } {
  const refused = (why: string) => ({ error: `failed to parse node IP ${JSON.stringify(text)}: ${why}` });
  const ips: bigint[] = [];
  for (const part of text.split(",")) {
    const ip = parseIpSloppy(part);
    if (ip === undefined) return refused(`could not parse ${JSON.stringify(part)}`);
    ips.push(ip);
  }
  const isV6 = (ip: bigint) => ip >> 32n !== 0xffffn;
  const [first, second] = ips;
  if (first === undefined || second === undefined) return { ips };
  if (ips.length > 2 || isV6(first) === isV6(second)) {
    return refused("must contain either a single IP or a dual-stack pair of IPs");
  }
  if ([first, second].some((ip) => ip === V4_MAPPED || ip === 0n)) {
    return refused("dual-stack node IP cannot include '0.0.0.0' or '::'");
  }
  return { ips };
}

/**
 * Upstream's `GetNodeAddressesFromNodeIP` (k8s.io/cloud-provider node/helpers/address.go, v0.35.4), which its
 * cloud-node controller applies to the cloud's addresses when kubelet's `--node-ip` annotation is present: the
 * addresses equal to each node IP come first, and they are the only ones of their type; the rest follow in
 * order. A node IP the list does not hold is an error (upstream's text): the addresses are then left alone.
 */
export function preferNodeIps(
  provided: string,
  addresses: readonly NodeAddress[],
): { addresses: NodeAddress[] } | { error: string } {
  const parsed = parseNodeIpAnnotation(provided);
  if ("error" in parsed) return parsed;
  const first: NodeAddress[] = [];
  const types = new Set<NodeAddressType>();
  for (const ip of parsed.ips) {
    const matching = addresses.filter((a) => parseIpSloppy(a.address) === ip);
    if (matching.length === 0) {
      return { error: `failed to get node address from cloud provider that matches ip: ${formatIp(ip)}` };
    }
    for (const a of matching) types.add(a.type);
    first.push(...matching.map((a) => ({ ...a })));
  }
  return { addresses: [...first, ...addresses.filter((a) => !types.has(a.type)).map((a) => ({ ...a }))] };
}

/**
 * The addresses upstream's cloud-node controller writes on `node` (`updateNodeAddress`): the Go CCM's list
 * (`planAddresses`), then kubelet's `--node-ip` preferred (`preferNodeIps`) when the annotation is there.
 */
export function nodeAddresses(
  node: V1Node,
  instance: LinodeInstance,
  vpc: VpcAddresses,
  options: AddressOptions = {},
): { addresses: NodeAddress[] } | { error: string } {
  const listed = planAddresses(instance, vpc, { ...options, nodeAddresses: node.status?.addresses });
  const annotations = node.metadata?.annotations ?? {};
  if (!Object.hasOwn(annotations, PROVIDED_NODE_IP_ANNOTATION)) return { addresses: listed };
  return preferNodeIps(annotations[PROVIDED_NODE_IP_ANNOTATION] ?? "", listed);
}

/** The labels the CCM owns: instance type, region (GA and beta names) and host UUID. */
export function planLabels(instance: LinodeInstance): Record<string, string> {
  const labels: Record<string, string> = {
    "topology.kubernetes.io/region": instance.region,
    "failure-domain.beta.kubernetes.io/region": instance.region,
  };
  if (instance.type) {
    labels["node.kubernetes.io/instance-type"] = instance.type;
    labels["beta.kubernetes.io/instance-type"] = instance.type;
  }
  if (instance.host_uuid) labels[HOST_UUID_LABEL] = instance.host_uuid;
  return labels;
}

/** The annotations the CCM owns, when known: the first private IPv4 and the public IPv6 as the API gives it (`/128` included, as the Go CCM writes it). */
export function planAnnotations(
  instance: LinodeInstance,
  options: AddressOptions = {},
): Record<string, string> {
  const annotations: Record<string, string> = {};
  const privateIp = instance.ipv4.find((ip) => isPrivateIpv4(ip, options.externalSubnet));
  if (privateIp) annotations[PRIVATE_IP_ANNOTATION] = privateIp;
  if (instance.ipv6) annotations[PUBLIC_IPV6_ANNOTATION] = instance.ipv6;
  return annotations;
}

/** The entries of `want` that differ from `have` (undefined when none do). */
export function changedEntries(
  have: Readonly<Record<string, string>> | undefined,
  want: Readonly<Record<string, string>>,
): Record<string, string> | undefined {
  const out = Object.entries(want).filter(([k, v]) => have?.[k] !== v);
  return out.length ? Object.fromEntries(out) : undefined;
}

/** True when both address lists hold the same entries in the same order. */
export function sameAddresses(a: readonly V1NodeAddress[] | undefined, b: readonly NodeAddress[]): boolean {
  return (a ?? []).length === b.length &&
    b.every((x, i) => a?.[i]?.type === x.type && a[i]?.address === x.address);
}

/**
 * Upstream's `nodeAddressesChangeDetected` (k8s.io/cloud-provider controllers/node/node_controller.go, v0.35.4),
 * as it is: a change when the lengths differ, or when an address of `want` is not the last address of its type
 * in `have`. An order change alone is no change while each type appears once; with two addresses of one type
 * (IPv4 and IPv6 ExternalIPs) it always finds one, and upstream then patches the status.
 */
export function addressesChangeDetected(
  have: readonly V1NodeAddress[] | undefined,
  want: readonly NodeAddress[],
): boolean {
  if ((have ?? []).length !== want.length) return true;
  const lastOfType = new Map((have ?? []).map((a) => [a.type, a.address]));
  return want.some((a) => lastOfType.get(a.type) !== a.address);
}

/**
 * True when upstream would change the Node's addresses: its check finds a change and the lists differ (an
 * equal list makes its patch empty, which changes nothing).
 */
export function needsAddressWrite(
  have: readonly V1NodeAddress[] | undefined,
  want: readonly NodeAddress[],
): boolean {
  return addressesChangeDetected(have, want) && !sameAddresses(have, want);
}

/** True when the Node carries a taint with this key. */
export function hasTaint(node: V1Node, key: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === key);
}

/** The Node's taints as `key:effect`, as `/plan` shows them. */
export function taintList(taints: readonly V1Taint[] | undefined): string[] {
  return (taints ?? []).map((t) => `${t.key}:${t.effect}`);
}

/** The Node's taints without `key`; the others stay exactly as they were. */
export function withoutTaint(node: V1Node, key: string): V1Taint[] {
  return (node.spec?.taints ?? []).filter((t) => t.key !== key);
}

/** The Node's taints plus `taint` (unless one with its key is already there). */
export function withTaint(node: V1Node, taint: V1Taint): V1Taint[] {
  const taints = node.spec?.taints ?? [];
  return taints.some((t) => t.key === taint.key) ? [...taints] : [...taints, taint];
}

function providedNodeIps(node: V1Node): string[] {
  const provided = node.metadata?.annotations?.[PROVIDED_NODE_IP_ANNOTATION];
  return provided ? provided.split(",").map((s) => s.trim()).filter(Boolean) : [];
}

/** The IPs a Node reports about itself: `status.addresses` (Internal/External) and kubelet's `--node-ip`. */
export function nodeReportedIps(node: V1Node): string[] {
  const fromStatus = (node.status?.addresses ?? [])
    .filter((a) => a.type === "InternalIP" || a.type === "ExternalIP")
    .map((a) => a.address);
  return [...new Set([...providedNodeIps(node), ...fromStatus].filter(Boolean))];
}

/** A merge patch of a Node's metadata and spec. */
export interface NodePatch {
  metadata?: {
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { providerID?: string; taints?: V1Taint[] };
}

/** How a Node's Linode was found. */
export type LookupVia = "providerID" | "label" | "ip";

/**
 * Finds a Node's Linode: by `spec.providerID` when set (and only that), else by a Linode label equal to the
 * Node name, else by one of the Node's IPs (status addresses and kubelet's `--node-ip`). Pure.
 */
export function findInstance(
  node: V1Node,
  index: InstanceIndex,
): { instance: LinodeInstance; via: LookupVia } | undefined {
  const providerID = node.spec?.providerID;
  if (providerID) {
    const id = parseProviderId(providerID);
    const instance = id === undefined ? undefined : index.byId(id);
    return instance && { instance, via: "providerID" };
  }
  const byLabel = index.byLabel(node.metadata?.name ?? "");
  if (byLabel) return { instance: byLabel, via: "label" };
  for (const ip of nodeReportedIps(node)) {
    const byIp = index.byIp(ip);
    if (byIp) return { instance: byIp, via: "ip" };
  }
  return undefined;
}

/** The writes that bring a Node in line with its Linode: a status patch and a metadata/spec patch. */
export interface NodeUpdatePlan {
  addresses?: NodeAddress[];
  patch?: NodePatch;
  /**
   * Kubelet's `--node-ip` is not valid or not among the Linode's addresses (upstream's error text): the
   * addresses are left as they are, and an uninitialised Node is not initialised.
   */
  nodeIpError?: string;
}

/**
 * Plans only what the Go CCM's own node controller writes (cloud/linode/node_controller.go `handleNode`), which
 * it runs whatever `--controllers` says: the host UUID label, the private-ip and public-ipv6 annotations when
 * the Linode has them, and `spec.providerID` when the Node has none. Never addresses, the other labels or the
 * uninitialized taint: those are upstream's cloud-node controller's. Pure.
 */
export function planNodeMetadata(
  node: V1Node,
  instance: LinodeInstance,
  _vpc: VpcAddresses,
  options: AddressOptions = {},
): NodeUpdatePlan {
  const uuid: Record<string, string> = instance.host_uuid ? { [HOST_UUID_LABEL]: instance.host_uuid } : {};
  const labels = changedEntries(node.metadata?.labels, uuid);
  const annotations = changedEntries(node.metadata?.annotations, planAnnotations(instance, options));
  const providerID = node.spec?.providerID ? undefined : toProviderId(instance.id);
  if (!labels && !annotations && !providerID) return {};
  const patch: NodePatch = {};
  if (labels || annotations) {
    patch.metadata = { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
  }
  if (providerID) patch.spec = { providerID };
  return { patch };
}

/** Plans addresses, labels, annotations, providerID and removal of the uninitialized taint. Pure. */
export function planNodeUpdate(
  node: V1Node,
  instance: LinodeInstance,
  vpc: VpcAddresses,
  options: AddressOptions = {},
): NodeUpdatePlan {
  const plan: NodeUpdatePlan = {};
  const addresses = nodeAddresses(node, instance, vpc, options);
  if ("error" in addresses) plan.nodeIpError = addresses.error;
  else if (needsAddressWrite(node.status?.addresses, addresses.addresses)) {
    plan.addresses = addresses.addresses;
  }
  const labels = changedEntries(node.metadata?.labels, planLabels(instance));
  const annotations = changedEntries(node.metadata?.annotations, planAnnotations(instance, options));
  const providerID = node.spec?.providerID ? undefined : toProviderId(instance.id);
  const untaint = hasTaint(node, UNINITIALIZED_TAINT_KEY);
  if (!labels && !annotations && !providerID && !untaint) return plan;
  const patch: NodePatch = {};
  if (labels || annotations || untaint) {
    patch.metadata = {
      ...(untaint ? { resourceVersion: node.metadata?.resourceVersion } : {}),
      ...(labels ? { labels } : {}),
      ...(annotations ? { annotations } : {}),
    };
  }
  if (providerID || untaint) {
    patch.spec = {
      ...(providerID ? { providerID } : {}),
      ...(untaint ? { taints: withoutTaint(node, UNINITIALIZED_TAINT_KEY) } : {}),
    };
  }
  plan.patch = patch;
  return plan;
}
