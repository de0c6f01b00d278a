/**
 * The `nodeipam` controller (`--allocate-node-cidrs`): at the start of each leadership term the allocation is
 * rebuilt from every Node the (synced) informer lists, before anything is handed out; then Node events
 * enqueue Node names and workers give pod CIDRs to Nodes without them. A deleted Node's range is free again,
 * and Nodes left waiting for one are queued at once.
 */
import type { CoreV1Api, V1Node } from "@kubernetes/client-node";
import { patchNodePodCidrs } from "../../kube/patch.ts";
import { OwnWrites } from "../loop/own_writes.ts";
import { runWithin } from "../loop/plan.ts";
import { runWorkers } from "../loop/run_queue.ts";
import { WorkQueue } from "../loop/work_queue.ts";
import { Backoff } from "../../common/backoff.ts";
import { isAbort } from "../../common/clock.ts";
import { type Cidr4, parseCidr4 } from "../route/cidr.ts";
import { NodeAllocator, podCidrsOf, type Recorded } from "./allocator.ts";
import { CidrSet } from "./cidr_set.ts";
import {
  type IpamDeps,
  type IpamMemory,
  type IpamOptions,
  type PodCidrWriter,
  reconcileNodeCidrs,
} from "./reconcile.ts";

/** Who holds the block kept back for the VPC subnet's last address. */
export const RESERVED_OWNER = "(the VPC subnet's last address)";

function lastAddress(c: Cidr4): number {
  return c.base + 2 ** (32 - c.prefix) - 1;
}

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
      return subnet !== undefined && lastAddress(subnet) === lastAddress(cluster);
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
function watchNodes(deps: IpamDeps, memory: IpamMemory, queue: WorkQueue<string>): () => void {
  const freeGauge = freeCidrsGauge(deps, memory);
  freeGauge();
  return deps.nodes.onChange((kind, node) => {
    const name = node.metadata?.name ?? "";
    if (kind === "delete") {
      memory.written.forget(name);
      memory.waiting.delete(name);
      deps.plan?.forget("nodeipam", name);
      if (memory.allocator.release(node) > 0) {
        for (const waiting of memory.waiting.keys()) queue.add(waiting);
      }
    } else if (podCidrsOf(node).length > 0) {
      noteRecorded(deps, memory.allocator.record(node));
      memory.waiting.delete(name);
    } else {
      queue.add(name);
    }
    freeGauge();
  });
}

/**
 * Enqueues the Nodes without pod CIDRs. A function of its own, as in cloud-node: the loop in `run` kept its
 * iterator, and with it the first list of Nodes, for the whole term.
 */
function enqueueNodesWithoutCidrs(queue: WorkQueue<string>, nodes: IpamDeps["nodes"]): void {
  for (const n of nodes.list()) if (podCidrsOf(n).length === 0) queue.add(n.metadata?.name ?? "");
}

/** The `nodeipam` controller: runs until the signal aborts (one leadership term). */
export function startNodeIpamController(
  deps: IpamDeps,
  options: IpamOptions,
): { run(signal: AbortSignal): Promise<void> } {
  return {
    async run(signal: AbortSignal): Promise<void> {
      const cluster = parseCidr4(options.clusterCidr);
      const reserveFinal = cluster !== undefined && await finalBlockToReserve(deps, cluster, signal);
      if (signal.aborted) return;
      const memory = rebuild(deps, options, reserveFinal);
      const queue = new WorkQueue<string>({
        name: "nodeipam",
        clock: deps.clock,
        metrics: deps.metrics,
        baseDelayMs: options.retryBaseMs,
        maxDelayMs: options.retryMaxMs,
      });
      const offNodes = watchNodes(deps, memory, queue);
      const updateGauge = freeCidrsGauge(deps, memory);
      enqueueNodesWithoutCidrs(queue, deps.nodes);
      try {
        await runWorkers(queue, {
          concurrency: options.workers ?? 10,
          signal,
          log: deps.log,
          metrics: deps.metrics,
          clock: deps.clock,
          handle: (name) =>
            runWithin(
              deps.plan,
              { controller: "nodeipam", scope: name },
              (plan) => reconcileNodeCidrs(deps, name, { memory, options, plan }),
            ).finally(updateGauge),
        });
      } finally {
        offNodes();
        queue.shutDown();
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
