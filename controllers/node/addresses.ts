/**
 * Pure planning of what the CCM owns on a Node: addresses, labels, annotations and its taints.
 * Matches the Go CCM's names and address order. No I/O, no clock.
 */
import type { V1Node, V1NodeAddress, V1Taint } from "@kubernetes/client-node";
import type { InstanceIndex, VpcAddresses } from "../../cache/instance_index.ts";
import type { LinodeInstance } from "../../cache/types.ts";
import { parseProviderId, toProviderId } from "../provider_id.ts";
import { stripPrefix } from "../../cache/instance_index.ts";
import { type Cidr4, isPrivateIpv4, parseIpv4 } from "../../common/net.ts";

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
 * The Node's addresses, in the Go CCM's order: Hostname (the Linode label); VPC IPv4 as InternalIP; private
 * IPv4 as InternalIP; public IPv4 as ExternalIP; VPC IPv6 (SLAAC) as InternalIP, or ExternalIP when its
 * interface is public (after the IPv4 ones, so an IPv4 stays the first ExternalIP); public IPv6 as ExternalIP;
 * then the kubelet's `--node-ip` values as InternalIP when not already listed.
 */
export function planAddresses(
  instance: LinodeInstance,
  vpc: VpcAddresses,
  options: AddressOptions & { providedNodeIps?: readonly string[] } = {},
): NodeAddress[] {
  const internal = (address: string): NodeAddress => ({ type: "InternalIP", address });
  const external = (address: string): NodeAddress => ({ type: "ExternalIP", address });
  const ipv4 = instance.ipv4.filter((ip) => parseIpv4(ip) !== undefined);
  const isPrivate = (ip: string) => isPrivateIpv4(ip, options.externalSubnet);
  const all: NodeAddress[] = [
    { type: "Hostname", address: instance.label },
    ...vpc.ipv4.map(internal),
    ...ipv4.filter(isPrivate).map(internal),
    ...ipv4.filter((ip) => !isPrivate(ip)).map(external),
    ...vpc.ipv6.map((a) => a.isPublic ? external(a.address) : internal(a.address)),
    ...(instance.ipv6 ? [external(stripPrefix(instance.ipv6))] : []),
    ...(options.providedNodeIps ?? []).map(internal),
  ];
  const seen = new Set<string>();
  return all.filter((a) => !seen.has(a.address) && seen.add(a.address));
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
}

/** Plans addresses, labels, annotations, providerID and removal of the uninitialized taint. Pure. */
export function planNodeUpdate(
  node: V1Node,
  instance: LinodeInstance,
  vpc: VpcAddresses,
  options: AddressOptions = {},
): NodeUpdatePlan {
  const plan: NodeUpdatePlan = {};
  const addresses = planAddresses(instance, vpc, {
    externalSubnet: options.externalSubnet,
    providedNodeIps: providedNodeIps(node),
  });
  if (!sameAddresses(node.status?.addresses, addresses)) plan.addresses = addresses;
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
