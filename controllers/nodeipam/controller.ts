/**
 * `nodeipam` (`--allocate-node-cidrs`): pod CIDRs for Nodes, as the Go CCM's cloud allocator gives them. One
 * Node's pod CIDRs: a Node that has them is recorded (never changed); one without gets an IPv4 range of
 * `--cluster-cidr` and, unless `--disable-ipv6-node-cidr-allocation`, an IPv6 range carved from its Linode's
 * VPC interface, both written at once through the Kubernetes executor. Reads Linodes only through the caches.
 */
import type { CoreV1Api, V1Node } from "@kubernetes/client-node";
import type { InstanceIndex } from "../../cache/instance_index.ts";
import type { Snapshot, Vpc } from "../../cache/types.ts";
import type { InterfaceGeneration } from "../../cache/vpc_ipv6.ts";
import { Backoff } from "../../common/backoff.ts";
import { type Clock, isAbort } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Registry } from "../../common/metrics.ts";
import { type Cidr4, lastAddress4, parseCidr4 } from "../../common/net.ts";
import { LeaseLostError } from "../../common/write_guard.ts";
import { type EventSink, refFor, warnEvent } from "../../kube/events.ts";
import { patchNodePodCidrs } from "../../kube/patch.ts";
import { isInvalid, isNotFound } from "../../kube/requests.ts";
import { OwnWrites } from "../loop/own_writes.ts";
import {
  type ControllerSpec,
  describeError,
  InvalidInputError,
  type TermContext,
  type WriteContext,
} from "../loop/runtime.ts";
import type { NodeLister } from "../node/cloud_node.ts";
import { classifyProviderId, parseProviderId } from "../provider_id.ts";
import { CidrSet, ipv6PodCidr, NodeAllocator, podCidrsOf, type Recorded } from "./allocator.ts";

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
  context: { memory: IpamMemory; options: IpamOptions; writes: WriteContext },
): Promise<void> {
  const { memory, options, writes } = context;
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
  const applied = await writes.apply({
    api: "kubernetes",
    action: {
      action: "allocate-pod-cidrs",
      object: name,
      changes: [{ field: "spec.podCIDRs", old: [], new: cidrs }],
    },
    send: () => writeCidrs(deps, node, cidrs),
    record: (updated) => {
      memory.written.record(name, updated, [node.metadata?.resourceVersion]);
      memory.allocator.record(updated);
    },
  }).catch((error: unknown) => {
    reportWriteFailure(deps, memory, node, { cidrs, error });
    throw error;
  });
  if (!applied.sent) {
    deps.projection?.projectPodCidrs(name, cidrs);
    return;
  }
  const updated = applied.answer;
  memory.waiting.delete(name);
  deps.log.info("allocated pod CIDRs {cidrs} to node {node}", { node: name, cidrs: podCidrsOf(updated) });
  deps.metrics.counter("ccm_nodeipam_allocations_total", "Nodes given pod CIDRs by node IPAM").inc();
}

/** Who holds the block kept back for the VPC subnet's last address. */
export const RESERVED_OWNER = "(the VPC subnet's last address)";

/**
 * The Go CCM's rule: when `--cluster-cidr` ends where the configured subnet ends, its last block is never
 * handed out (the subnet's last address is the VPC's own). Retried with backoff until the subnet is read:
 * nothing is handed out before.
 */
async function finalBlockToReserve(deps: IpamDeps, cluster: Cidr4, signal: AbortSignal): Promise<boolean> {
  if (!deps.subnet) return false;
  const backoff = new Backoff({ baseMs: 1_000, maxMs: 60_000 });
  for (;;) {
    try {
      const subnet = parseCidr4((await deps.subnet.firstSubnetIpv4()) ?? "");
      return subnet !== undefined && lastAddress4(subnet) === lastAddress4(cluster);
    } catch (error) {
      deps.log.warning("node IPAM cannot read the VPC subnet yet, retrying: {error}", {
        error: String(error),
      });
      try {
        await deps.clock.sleep(backoff.next(), signal);
      } catch (slept) {
        if (isAbort(slept, signal) || signal.aborted) return false;
        throw slept;
      }
    }
  }
}

/** The allocation of this term, rebuilt from the Nodes; logs Nodes whose range cannot be recorded. */
function rebuild(deps: IpamDeps, options: IpamOptions, reserveFinal: boolean): IpamMemory {
  const cluster = parseCidr4(options.clusterCidr);
  if (!cluster) {
    throw new TypeError(`Cannot run node IPAM: --cluster-cidr ${options.clusterCidr} is not IPv4`);
  }
  const set = new CidrSet(cluster, options.nodeMaskIpv4);
  const { allocator, recorded } = NodeAllocator.fromNodes(set, deps.nodes.list());
  if (reserveFinal) {
    const last = set.blockAt(set.size - 1);
    const held = allocator.reserve(last, RESERVED_OWNER);
    deps.log.info("node IPAM keeps {cidr} back: --cluster-cidr ends where the VPC subnet ends", {
      cidr: last,
    });
    if (typeof held === "object") noteRecorded(deps, { node: RESERVED_OWNER, ipv4: last, result: held });
  }
  for (const r of recorded) noteRecorded(deps, r);
  deps.log.info("node IPAM: {count} nodes hold pod CIDRs, {free} of {size} ranges free", {
    count: recorded.length,
    free: allocator.free,
    size: set.size,
  });
  return { allocator, written: new OwnWrites<V1Node>(), waiting: new Map() };
}

function noteRecorded(deps: IpamDeps, r: Recorded): void {
  if (typeof r.result === "object") {
    deps.log.warning("node {node} has pod CIDR {cidr}, which node {other} holds too", {
      node: r.node,
      cidr: r.ipv4,
      other: r.result.takenBy,
    });
  } else if (r.result === "outside" || r.result === "invalid") {
    deps.log.debug("node {node} has pod CIDR {cidr} {why} --cluster-cidr: left as it is", {
      node: r.node,
      cidr: r.ipv4,
      why: r.result === "outside" ? "outside" : "unreadable for",
    });
  }
}

/** Sets `ccm_nodeipam_free_cidrs` to the ranges left. */
function freeCidrsGauge(deps: IpamDeps, memory: IpamMemory): () => void {
  const gauge = deps.metrics.gauge("ccm_nodeipam_free_cidrs", "IPv4 pod CIDR ranges left to hand out");
  return () => gauge.set(undefined, memory.allocator.free);
}

/** Node events: a Node with pod CIDRs is recorded at once; one without is queued; a deleted one frees its range. */
function watchNodes(deps: IpamDeps, ctx: TermContext<IpamMemory>): () => void {
  const { memory } = ctx;
  const freeGauge = freeCidrsGauge(deps, memory);
  freeGauge();
  return deps.nodes.onChange((kind, node) => {
    const name = node.metadata?.name ?? "";
    if (kind === "delete") {
      memory.written.forget(name);
      memory.waiting.delete(name);
      ctx.forget(name);
      if (memory.allocator.release(node) > 0) {
        for (const waiting of memory.waiting.keys()) ctx.enqueue(waiting);
      }
    } else if (podCidrsOf(node).length > 0) {
      noteRecorded(deps, memory.allocator.record(node));
      memory.waiting.delete(name);
    } else {
      ctx.enqueue(name);
    }
    freeGauge();
  });
}

/**
 * The Nodes without pod CIDRs. A function of its own, as in cloud-node: a loop in a long-running function
 * kept its iterator, and with it the first list of Nodes, for the whole term.
 */
function nodesWithoutCidrs(nodes: IpamDeps["nodes"]): string[] {
  return nodes.list().filter((n) => podCidrsOf(n).length === 0).map((n) => n.metadata?.name ?? "");
}

/** The allocation of a term: the VPC subnet's rule read first (waiting for it), then every Node recorded. */
async function termMemory(deps: IpamDeps, options: IpamOptions, signal: AbortSignal): Promise<IpamMemory> {
  const cluster = parseCidr4(options.clusterCidr);
  const reserveFinal = cluster !== undefined && await finalBlockToReserve(deps, cluster, signal);
  return rebuild(deps, options, reserveFinal);
}

/**
 * The `nodeipam` controller (`--allocate-node-cidrs`): at the start of each leadership term the allocation is
 * rebuilt from every Node the (synced) informer lists, before anything is handed out; then Node events enqueue
 * Node names and workers give pod CIDRs to Nodes without them. A deleted Node's range is free again, and Nodes
 * left waiting for one are queued at once.
 */
export function nodeIpamController(deps: IpamDeps, options: IpamOptions): ControllerSpec<IpamMemory> {
  return {
    name: "nodeipam",
    workers: options.workers ?? 10,
    retry: { baseMs: options.retryBaseMs ?? 1_000, maxMs: options.retryMaxMs ?? 300_000 },
    memory: (ctx) => termMemory(deps, options, ctx.signal),
    sources: (ctx) => [watchNodes(deps, ctx)],
    initialKeys: () => nodesWithoutCidrs(deps.nodes),
    reconcile: async (name, ctx) => {
      try {
        await reconcileNodeCidrs(deps, name, { memory: ctx.memory, options, writes: ctx });
      } finally {
        freeCidrsGauge(deps, ctx.memory)();
      }
    },
  };
}

/** Pod CIDR writes over client-node (fenced client): a merge patch of the spec. */
export function kubePodCidrWriter(core: CoreV1Api): PodCidrWriter {
  return {
    getNode: (name) => core.readNode({ name }),
    patchPodCidrs: (name, cidrs) => patchNodePodCidrs(core, name, cidrs),
  };
}

/** The instance cache, as read here (`InstanceCache` implements it). */
export interface InstanceView {
  view(options?: { maxAgeMs?: number; vpcMaxAgeMs?: number }): Promise<Snapshot<InstanceIndex>>;
}

/** The per-Linode IPv6 ranges (`VpcIpv6Cache` implements it). */
export interface Ipv6Ranges {
  rangeOf(linodeId: number, generation: InterfaceGeneration): Promise<string | undefined>;
}

/** Looks up a Linode's generation in the cache (refreshing it once when missing), then its IPv6 range. */
export function cachedIpv6Lookup(instances: InstanceView, ranges: Ipv6Ranges): Ipv6RangeLookup {
  return {
    async rangeOf(linodeId) {
      const cached = await instances.view({ maxAgeMs: Infinity, vpcMaxAgeMs: Infinity });
      const instance = cached.data.byId(linodeId) ?? (await instances.view()).data.byId(linodeId);
      if (!instance) throw new Error(`Cannot find linode ${linodeId} for its IPv6 range`);
      return await ranges.rangeOf(
        linodeId,
        instance.interface_generation === "linode" ? "linode" : "legacy_config",
      );
    },
  };
}

/** The VPC cache, as read here (`VpcCache` implements it). */
export interface VpcView {
  get(): Promise<Snapshot<readonly Vpc[]>>;
}

/**
 * The first `--subnet-names` subnet of the first `--vpc-names` VPC (as the Go CCM picks them), from the VPC
 * cache; undefined (no lookup) without both flags, as the Go CCM.
 */
export function cachedSubnetLookup(
  vpcs: VpcView,
  selection: { readonly names: readonly string[]; readonly subnetNames: readonly string[] },
): SubnetRangeLookup | undefined {
  const [vpcName] = selection.names;
  const [subnetName] = selection.subnetNames;
  if (vpcName === undefined || subnetName === undefined) return undefined;
  return {
    async firstSubnetIpv4() {
      const vpc = (await vpcs.get()).data.find((v) => v.label === vpcName);
      return vpc?.subnets.find((s) => s.label === subnetName)?.ipv4 ?? undefined;
    },
  };
}
