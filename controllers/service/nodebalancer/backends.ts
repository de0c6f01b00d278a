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
import { isIpAddress, parseGoBool } from "../../../config/env.ts";
import { isPrivateIpv4, PRIVATE_IP_ANNOTATION, PUBLIC_IPV6_ANNOTATION } from "../../node/addresses.ts";

/** Label that keeps a Node out of every load balancer (its value does not matter). */
export const EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
/** Taint the cluster autoscaler puts on a Node it is about to delete. */
export const TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler";

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
  // The API takes only private (or VPC) IPv4 backends; a Node with a public InternalIP would fail every port.
  return isPrivateIpv4(ip) ? { ip } : { reason: `InternalIP ${ip} is not a private IPv4 address` };
}

/** The backends among `nodes`, sorted by Node name, and the eligible Nodes left out. */
export function planBackends(
  nodes: readonly V1Node[],
  mode: BackendAddressMode,
): { backends: Backend[]; skipped: SkippedNode[] } {
  const backends: Backend[] = [];
  const skipped: SkippedNode[] = [];
  for (const node of nodes.filter(isEligibleNode)) {
    const nodeName = node.metadata?.name ?? "";
    const found = backendIp(node, mode);
    if ("ip" in found) backends.push({ nodeName, label: backendLabel(nodeName), ip: found.ip });
    else skipped.push({ nodeName, reason: found.reason });
  }
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
