/**
 * Which Nodes back a Service's NodeBalancer and at which address: upstream's `stableNodeSetPredicates`
 * (k8s.io/cloud-provider v0.35.4, the version the Go CCM pins): not being deleted, not excluded by the
 * `node.kubernetes.io/exclude-from-external-load-balancers` label, not tainted `ToBeDeletedByClusterAutoscaler`.
 * Readiness is not among them: a NotReady Node keeps its backends (the NodeBalancer's health checks take it out
 * of rotation), so a flapping Node writes nothing. The address is the Go CCM's: the public IPv6 annotation for IPv6
 * backends; the first InternalIP (the VPC address, which the node controller lists first) with VPC
 * backends; else the `node.k8s.linode.com/private-ip` annotation, then the first InternalIP. Pure.
 */
import type { V1Node } from "@kubernetes/client-node";
import { builtinCidr4, cidr4Contains, isIpAddress, isPrivateIpv4 } from "../../../common/net.ts";
import { parseGoBool } from "../../../config/env.ts";
import { PRIVATE_IP_ANNOTATION, PUBLIC_IPV6_ANNOTATION } from "../../node/addresses.ts";

/** Label that keeps a Node out of every load balancer (its value does not matter). */
export const EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
/** Taint the cluster autoscaler puts on a Node it is about to delete. */
export const TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler";

/** Linode's private network: where a Linode's private IPv4 comes from, the only non-VPC IPv4 backends. */
const LINODE_PRIVATE_NETWORK = builtinCidr4("192.168.128.0/17");

/** Where a backend's address comes from. */
export type BackendAddressMode = "vpc" | "private" | "ipv6";

/** One Node as a NodeBalancer backend, before the port is added. */
export interface Backend {
  readonly nodeName: string;
  /** Valid for the API: 3 to 32 characters. */
  readonly label: string;
  readonly ip: string;
}

/** A Node left out although eligible, and why (for a Warning Event). */
export interface SkippedNode {
  readonly nodeName: string;
  readonly reason: string;
}

/**
 * Upstream's `nodeIncludedPredicate`: without the exclusion label, or with a value Go's `strconv.ParseBool`
 * reads as false; any other value (`true`, `""`, `yes`) excludes.
 */
export function isIncludedNode(node: V1Node): boolean {
  const labels = node.metadata?.labels ?? {};
  if (!Object.hasOwn(labels, EXCLUDE_LABEL)) return true;
  return parseGoBool(labels[EXCLUDE_LABEL] ?? "") === false;
}

/** True when the Node may carry load-balancer traffic (upstream's `stableNodeSetPredicates`). */
export function isEligibleNode(node: V1Node): boolean {
  const deleting = node.metadata?.deletionTimestamp !== undefined && node.metadata.deletionTimestamp !== null;
  const leaving = (node.spec?.taints ?? []).some((t) => t.key === TO_BE_DELETED_TAINT);
  return !deleting && isIncludedNode(node) && !leaving;
}

/** The Go CCM's backend label: the Node name cut to 32 characters, `node-` in front when shorter than 3. */
export function backendLabel(nodeName: string): string {
  const padded = nodeName.length < 3 ? `node-${nodeName}` : nodeName;
  return padded.slice(0, 32);
}

function firstInternalIp(node: V1Node): string | undefined {
  return node.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
}

/** The Node's backend IP for `mode`, or the reason it has none the API would take. */
export function backendIp(node: V1Node, mode: BackendAddressMode): { ip: string } | { reason: string } {
  const annotations = node.metadata?.annotations ?? {};
  if (mode === "ipv6") {
    const ip = annotations[PUBLIC_IPV6_ANNOTATION]?.split("/")[0] ?? "";
    return isIpAddress(ip) && ip.includes(":")
      ? { ip }
      : { reason: `no public IPv6 (${PUBLIC_IPV6_ANNOTATION})` };
  }
  const ip = (mode === "private" ? annotations[PRIVATE_IP_ANNOTATION] : undefined) ?? firstInternalIp(node);
  if (ip === undefined) return { reason: "no InternalIP" };
  // The API takes a non-VPC IPv4 backend only on Linode's private network, a VPC one only inside a backend
  // subnet (RFC 1918): any other address would fail every port of the NodeBalancer.
  if (mode === "vpc") {
    return isPrivateIpv4(ip) ? { ip } : { reason: `InternalIP ${ip} is not a private IPv4 address` };
  }
  return cidr4Contains(LINODE_PRIVATE_NETWORK, ip)
    ? { ip }
    : { reason: `${ip} is not on Linode's private network 192.168.128.0/17` };
}

function createdMs(node: V1Node): number {
  // A Date from the informer; a Node object not decoded by client-node carries the RFC 3339 string.
  const at: unknown = node.metadata?.creationTimestamp;
  const ms = at instanceof Date ? at.getTime() : Date.parse(String(at));
  return Number.isNaN(ms) ? 0 : ms;
}

/** True when `a` holds an address rather than `b`: the newer Node, then the later name (any fixed order). */
function holdsAddress(a: { node: V1Node; name: string }, b: { node: V1Node; name: string }): boolean {
  const [x, y] = [createdMs(a.node), createdMs(b.node)];
  return x !== y ? x > y : a.name > b.name;
}

/**
 * The backends among `nodes`, sorted by Node name, and the eligible Nodes left out. One backend per IP: a
 * replaced Node's address can go to its successor's Linode while the old Node waits (up to a listing TTL) for
 * the lifecycle controller to delete it. A second backend at the same `ip:port` reaches the same machine, and
 * the emulator refuses it ("Address is already used by another node"; the reference does not say). Each
 * refusal was retried, and the NodeBalancer re-read, until the old Node went: 4 calls a NodeBalancer every
 * few seconds. The newest Node claiming an IP holds it (its Linode got the address last). The other Node is
 * not reported as left out: its address is still backed.
 */
export function planBackends(
  nodes: readonly V1Node[],
  mode: BackendAddressMode,
): { backends: Backend[]; skipped: SkippedNode[] } {
  const byIp = new Map<string, { node: V1Node; name: string }>();
  const skipped: SkippedNode[] = [];
  for (const node of nodes.filter(isEligibleNode)) {
    const name = node.metadata?.name ?? "";
    const found = backendIp(node, mode);
    if (!("ip" in found)) {
      skipped.push({ nodeName: name, reason: found.reason });
      continue;
    }
    const held = byIp.get(found.ip);
    if (!held || holdsAddress({ node, name }, held)) byIp.set(found.ip, { node, name });
  }
  const backends = [...byIp].map(([ip, { name }]) => ({ nodeName: name, label: backendLabel(name), ip }));
  backends.sort((a, b) => a.nodeName < b.nodeName ? -1 : a.nodeName > b.nodeName ? 1 : 0);
  return { backends, skipped };
}

/** `ip:port`, with brackets for IPv6 (Go's `net.JoinHostPort`). */
export function backendAddress(ip: string, nodePort: number): string {
  return ip.includes(":") ? `[${ip}]:${nodePort}` : `${ip}:${nodePort}`;
}

/**
 * Whether the backends now on a NodeBalancer are IPv6 (`[ip]:port`) or IPv4 addresses; undefined when it has
 * none or both (nothing to keep).
 */
export function backendFamilyOf(nodes: readonly { readonly address: string }[]): boolean | undefined {
  const v6 = nodes.filter((n) => n.address.startsWith("[")).length;
  if (nodes.length === 0 || (v6 > 0 && v6 < nodes.length)) return undefined;
  return v6 > 0;
}
