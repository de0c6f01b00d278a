/**
 * One Node's pod CIDRs: a Node that has them is recorded (never changed); one without gets an IPv4 range of
 * `--cluster-cidr` and, unless `--disable-ipv6-node-cidr-allocation`, an IPv6 range carved from its
 * Linode's VPC interface, both written at once. Reads Linodes only through the caches.
 */
import type { V1Node } from "@kubernetes/client-node";
import type { Clock } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import { type EventSink, refFor, warnEvent } from "../../kube/events.ts";
import { isInvalid, isNotFound } from "../../kube/requests.ts";
import type { Registry } from "../../common/metrics.ts";
import { isAbort } from "../../common/clock.ts";
import { LeaseLostError } from "../../common/write_guard.ts";
import { describeError, InvalidInputError } from "../loop/run_queue.ts";
import type { OwnWrites } from "../loop/own_writes.ts";
import { LIVE_SCOPE, type PlanRecorder, type PlanScope } from "../loop/plan.ts";
import type { NodeLister } from "../node/cloud_node.ts";
import { classifyProviderId, parseProviderId } from "../provider_id.ts";
import { type NodeAllocator, podCidrsOf } from "./allocator.ts";
import { ipv6PodCidr } from "./ipv6.ts";

/** Fenced writes of a Node's pod CIDRs. */
export interface PodCidrWriter {
  /** A fresh read (after a refused write). */
  getNode(name: string): Promise<V1Node>;
  /** Sets `spec.podCIDR` and `spec.podCIDRs`; the apiserver refuses (422) a change once they are set. */
  patchPodCidrs(name: string, cidrs: readonly string[]): Promise<V1Node>;
}

/** The IPv6 range of a Linode's VPC interface, through the caches; undefined when it has none. */
export interface Ipv6RangeLookup {
  rangeOf(linodeId: number): Promise<string | undefined>;
}

/** The IPv4 range of the first `--subnet-names` subnet of the first `--vpc-names` VPC, through the cache. */
export interface SubnetRangeLookup {
  firstSubnetIpv4(): Promise<string | undefined>;
}

/** What node IPAM needs. */
export interface IpamDeps {
  nodes: NodeLister;
  writer: PodCidrWriter;
  /** Absent with `--disable-ipv6-node-cidr-allocation`. */
  ipv6?: Ipv6RangeLookup;
  /** Present with `--vpc-names` and `--subnet-names` (the Go CCM's rule for the subnet's last address). */
  subnet?: SubnetRangeLookup;
  events: EventSink;
  log: Logger;
  metrics: Registry;
  clock: Clock;
  plan?: PlanRecorder;
  /** Receives the pod CIDRs held in dry run, for the controllers that decide from Nodes (routes). */
  projection?: { projectPodCidrs(name: string, cidrs: readonly string[] | undefined): void };
}

/** Settings of node IPAM (from `--cluster-cidr` and `--node-cidr-mask-size-*`). */
export interface IpamOptions {
  clusterCidr: string;
  nodeMaskIpv4: number;
  nodeMaskIpv6: number;
  /** Per-Node retry backoff (default 1 s doubling to 5 min). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  workers?: number;
}

/** What one leadership term of node IPAM remembers. */
export interface IpamMemory {
  allocator: NodeAllocator;
  written: OwnWrites<V1Node>;
  /** Nodes told `CIDRNotAvailable` (or another reason) and still waiting: told once, served when a range frees. */
  waiting: Map<string, string>;
}

/** Thrown while a Node waits for a free range or for its IPv6 range: retried with backoff. */
export class CidrNotAvailableError extends Error {
  override name = "CidrNotAvailableError";
}

/** Reports a wait once per Node and reason (a Warning Event and the log line), then throws to retry. */
function waitFor(
  deps: IpamDeps,
  memory: IpamMemory,
  node: V1Node,
  why: { reason: string; message: string; props: Record<string, unknown> },
): never {
  const name = node.metadata?.name ?? "";
  const key = `${why.reason}:${why.message}`;
  if (memory.waiting.get(name) !== key) {
    memory.waiting.set(name, key);
    warnEvent(deps, { ref: refFor(node, "Node"), ...why });
  }
  throw new CidrNotAvailableError(`Cannot allocate pod CIDRs to node ${name}: ${why.reason}`);
}

/** The Node's IPv6 pod CIDR; undefined while it has no providerID yet (its update re-queues it). */
async function ipv6CidrOf(
  deps: IpamDeps & { ipv6: Ipv6RangeLookup },
  memory: IpamMemory,
  node: V1Node,
  maskSize: number,
): Promise<string | undefined> {
  const name = node.metadata?.name ?? "";
  const providerID = node.spec?.providerID;
  const kind = classifyProviderId(providerID);
  if (kind === "empty") {
    deps.log.debug("node {node} has no providerID yet: its IPv6 range waits for it", { node: name });
    return undefined;
  }
  const linodeId = parseProviderId(providerID);
  if (linodeId === undefined) {
    const message =
      "Cannot allocate an IPv6 pod CIDR to node {node}: providerID {providerID} is not a Linode's";
    warnEvent(deps, {
      ref: refFor(node, "Node"),
      reason: "CIDRNotAvailable",
      message,
      props: { node: name, providerID },
    });
    throw new InvalidInputError(`Cannot allocate pod CIDRs to node ${name}: ${kind} providerID`);
  }
  const range = await deps.ipv6.rangeOf(linodeId);
  if (range === undefined) {
    return waitFor(deps, memory, node, {
      reason: "CIDRNotAvailable",
      message:
        "Cannot allocate an IPv6 pod CIDR to node {node}: the VPC interface of linode {linodeId} has no " +
        "IPv6 range (give its subnet IPv6, or set --disable-ipv6-node-cidr-allocation)",
      props: { node: name, linodeId },
    });
  }
  const carved = ipv6PodCidr(range, maskSize);
  if ("error" in carved) {
    return waitFor(deps, memory, node, {
      reason: "CIDRNotAvailable",
      message: "Cannot allocate an IPv6 pod CIDR to node {node}: {error}",
      props: { node: name, error: carved.error },
    });
  }
  return carved.cidr;
}

/** Writes the pod CIDRs; a refusal because another writer set them first records theirs instead. */
async function writeCidrs(
  deps: IpamDeps,
  node: V1Node,
  cidrs: string[],
): Promise<V1Node> {
  const name = node.metadata?.name ?? "";
  try {
    return await deps.writer.patchPodCidrs(name, cidrs);
  } catch (error) {
    if (!isInvalid(error)) throw error;
    const fresh = await deps.writer.getNode(name);
    if (podCidrsOf(fresh).length === 0) throw error;
    deps.log.info("node {node} got pod CIDRs {cidrs} from another writer first", {
      node: name,
      cidrs: podCidrsOf(fresh),
    });
    return fresh;
  }
}

/**
 * The upstream allocator's `CIDRAssignmentFailed` Warning, once per Node until it is served: the write was
 * refused or failed. The range stays the Node's.
 */
function reportWriteFailure(
  deps: IpamDeps,
  memory: IpamMemory,
  node: V1Node,
  failure: { cidrs: readonly string[]; error: unknown },
): void {
  // Leadership lost stops the term; a Node deleted meanwhile needs nothing.
  if (failure.error instanceof LeaseLostError || isAbort(failure.error) || isNotFound(failure.error)) return;
  const name = node.metadata?.name ?? "";
  const key = "CIDRAssignmentFailed";
  if (memory.waiting.get(name) === key) return;
  memory.waiting.set(name, key);
  warnEvent(deps, {
    ref: refFor(node, "Node"),
    reason: key,
    message: "Cannot write pod CIDRs {cidrs} to node {node}, retrying: {error}",
    props: { node: name, cidrs: failure.cidrs.join(","), error: describeError(failure.error) },
  });
}

/** Brings one Node's pod CIDRs in line. Throws to be retried with backoff. */
export async function reconcileNodeCidrs(
  deps: IpamDeps,
  name: string,
  context: { memory: IpamMemory; options: IpamOptions; plan?: PlanScope },
): Promise<void> {
  const { memory, options, plan = LIVE_SCOPE } = context;
  const node = memory.written.latest(name, deps.nodes.get(name));
  if (!node || node.metadata?.deletionTimestamp) return;
  if (podCidrsOf(node).length > 0) {
    memory.allocator.record(node);
    memory.waiting.delete(name);
    deps.projection?.projectPodCidrs(name, undefined);
    return;
  }
  const ipv4 = memory.allocator.assign(name);
  if (ipv4 === undefined) {
    return waitFor(deps, memory, node, {
      reason: "CIDRNotAvailable",
      message: "Cannot allocate a pod CIDR to node {node}: every /{size} of --cluster-cidr {cidr} is in use",
      props: { node: name, size: options.nodeMaskIpv4, cidr: options.clusterCidr },
    });
  }
  const cidrs = [ipv4];
  if (deps.ipv6) {
    const v6 = await ipv6CidrOf({ ...deps, ipv6: deps.ipv6 }, memory, node, options.nodeMaskIpv6);
    if (v6 === undefined) return;
    cidrs.push(v6);
  }
  const action = {
    action: "allocate-pod-cidrs",
    object: name,
    changes: [{ field: "spec.podCIDRs", old: [], new: cidrs }],
  };
  if (plan.hold(action)) {
    deps.projection?.projectPodCidrs(name, cidrs);
    return;
  }
  const updated = await writeCidrs(deps, node, cidrs).catch((error: unknown) => {
    reportWriteFailure(deps, memory, node, { cidrs, error });
    throw error;
  });
  memory.written.record(name, updated, [node.metadata?.resourceVersion]);
  memory.allocator.record(updated);
  memory.waiting.delete(name);
  deps.log.info("allocated pod CIDRs {cidrs} to node {node}", { node: name, cidrs: podCidrsOf(updated) });
  deps.metrics.counter("ccm_nodeipam_allocations_total", "Nodes given pod CIDRs by node IPAM").inc();
}
