/**
 * Benchmark 6: node IPAM in the whole CCM. Allocation latency (a Node created without a pod CIDR → its pod
 * CIDRs written), IPv4 only and dual stack (IPv6 carved from the Node's VPC interface range), and, with the
 * route controller on, a Node created as kubelet registers it (uninitialised, no pod CIDR) → its range
 * programmed on its Linode's VPC interface; each with the Linode calls per new Node.
 */
import { systemClock } from "../common/clock.ts";
import { type DemoWorld, kubeletNode, registerNode } from "../sim/mod.ts";
import { startCcm } from "./ccm_harness.ts";
import { type Cell, summarize, type Table } from "./table.ts";
import { BENCH_VPC, startBenchWorld } from "./world.ts";

/** Options of `benchIpam`. */
export interface IpamBenchOptions {
  /** Nodes per case, created one at a time. */
  nodes: number;
}

const CLUSTER_CIDR = "10.192.0.0/10";
const IPAM_FLAGS = ["--allocate-node-cidrs", `--cluster-cidr=${CLUSTER_CIDR}`];
const V4_ONLY = "--disable-ipv6-node-cidr-allocation";
const ROUTE_FLAGS = ["--enable-route-controller", `--vpc-names=${BENCH_VPC}`];
const INSTANCE_LIST = "GET /v4/linode/instances";
const VPC_IPS = "GET /v4/vpcs/{id}/ips";
const CONFIGS = "GET /v4/linode/instances/{id}/configs";
const PUT_IFACE = "PUT /v4/linode/instances/{id}/configs/{id}/interfaces/{id}";
/** Joins measured (each waits out the 2 s pacing of cloud-node's forced refreshes before the next). */
const MAX_JOINS = 20;
const JOIN_GAP_MS = 2_100;

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await systemClock.sleep(2);
  }
}

function podCidrsOf(world: DemoWorld, name: string): string[] {
  const node = world.kube.store.get("nodes", name) as { spec?: { podCIDRs?: string[] } } | undefined;
  return node?.spec?.podCIDRs ?? [];
}

/** Linodes in a dual-stack VPC (its subnet an auto /56: up to 256 interfaces). */
function dualStackLinodes(world: DemoWorld, names: readonly string[]): number[] {
  const vpc = world.linode.world.createVpc({
    label: "bench-v6",
    region: "us-east",
    ipv6: [{ range: "/52" }],
    subnets: [{ label: "nodes", ipv4: "10.1.0.0/16", ipv6: [{ range: "auto" }] }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  return names.map((label) =>
    world.linode.world.addInstance({ label, region: "us-east", vpc: { vpcId: vpc.id, subnetId, ipv6: true } })
      .id
  );
}

/** Initialised Nodes (providerID, no taint) created one at a time; each timed until its pod CIDRs are written. */
async function allocationRow(o: IpamBenchOptions, ipv6: boolean): Promise<Cell[]> {
  await using world = await startBenchWorld();
  const names = Array.from({ length: o.nodes }, (_, i) => `ipam-${i}`);
  const ids = ipv6 ? dualStackLinodes(world, names) : names.map((n) => world.addLinode(n));
  const flags = ["--controllers=", ...IPAM_FLAGS, ...(ipv6 ? [] : [V4_ONLY])];
  await using h = await startCcm(world, { flags });
  await h.ccm.instances.refresh();
  world.linode.calls.reset();
  const latencies: number[] = [];
  for (const [i, name] of names.entries()) {
    const started = performance.now();
    registerNode(world.kube, kubeletNode(name, { taints: [], providerID: `linode://${ids[i]}` }));
    await waitUntil(() => podCidrsOf(world, name).length === (ipv6 ? 2 : 1), `the pod CIDRs of ${name}`);
    latencies.push(performance.now() - started);
  }
  const s = summarize(latencies);
  const c = world.linode.calls;
  const what = ipv6 ? "dual stack: IPv6 from the VPC interface" : "IPv4 only";
  const kinds = ipv6 ? `configs ${c.count(CONFIGS) / o.nodes}` : "none";
  return [what, o.nodes, s.p50, s.p95, s.max, c.total() / o.nodes, kinds];
}

/** New Linodes whose Nodes register as kubelet does, one at a time; each timed until its range is routed. */
async function joinRow(o: IpamBenchOptions): Promise<Cell[]> {
  await using world = await startBenchWorld();
  const flags = [...IPAM_FLAGS, V4_ONLY, ...ROUTE_FLAGS, "--concurrent-node-syncs=8"];
  await using _h = await startCcm(world, { flags });
  world.linode.calls.reset();
  const latencies: number[] = [];
  const n = Math.min(o.nodes, MAX_JOINS);
  for (let i = 0; i < n; i++) {
    const name = `join-${i}`;
    const id = world.addLinode(name);
    const started = performance.now();
    registerNode(world.kube, kubeletNode(name));
    await waitUntil(() => world.linode.world.ipRanges(id).length > 0, `the route of ${name}`);
    latencies.push(performance.now() - started);
    // Joins apart: a Node right after another waits for the pacing of forced refreshes instead.
    await systemClock.sleep(JOIN_GAP_MS);
  }
  const s = summarize(latencies);
  const c = world.linode.calls;
  const per = (key: string) => c.count(key) / n;
  const kinds = `instances ${per(INSTANCE_LIST)}, VPC IPs ${per(VPC_IPS)}, interface PUTs ${per(PUT_IFACE)}`;
  return ["new Linode + Node, IPAM + routes", n, s.p50, s.p95, s.max, c.total() / n, kinds];
}

/** Runs the node IPAM benchmark; returns its table. */
export async function benchIpam(o: IpamBenchOptions): Promise<Table> {
  const rows = [await allocationRow(o, false), await allocationRow(o, true), await joinRow(o)];
  return {
    title: "Node IPAM latency (Node created without pod CIDR -> pod CIDRs written / range programmed)",
    columns: [
      "case",
      "nodes",
      "p50 (ms)",
      "p95 (ms)",
      "max (ms)",
      "Linode calls/node",
      "calls/node by kind",
    ],
    rows,
    notes: [
      "whole CCM in-process, default settings plus " + IPAM_FLAGS.join(" ") + "; Nodes created one at a time",
      "first two rows: node IPAM (--controllers=: no upstream controller; node-metadata runs, as the Go CCM's node controller does), Nodes created initialised (providerID set); end: podCIDRs written",
      "last row: every controller, routes on (" + ROUTE_FLAGS.join(" ") + "), IPv4 only; the Linode is new " +
      "(not in the instance cache), its Node registers uninitialised; end: the range on its VPC interface",
      `last row: at most ${MAX_JOINS} joins, ${JOIN_GAP_MS} ms apart (cloud-node forces one listing per 2 s at ` +
      "most: back-to-back joins wait for it); its latency includes cloud-node's lookup of the new Linode",
    ],
  };
}
