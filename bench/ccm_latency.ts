/**
 * Latencies of the real CCM process at default settings, one event at a time on a converged cluster:
 * a machine joins (new Linode, then its Node as kubelet registers it: Node created → initialised; initialised →
 * its backend in every NodeBalancer; pod CIDR given by node IPAM → range on its VPC interface), a Node leaves
 * (deleted → out of every NodeBalancer), and a LoadBalancer Service is created (→ status written with the
 * NodeBalancer's IP, every pool Node a backend). Each wait is a check: an event the CCM never completes
 * fails the run. Each kind's Linode calls are counted from the end of the previous kind's (no call for 5 s)
 * to the end of its own, so a late call (a route removal after a leave) is charged to the events that made it.
 */
import { systemClock } from "../common/clock.ts";
import { isBackgroundRoute } from "./ccm_causes.ts";
import { InitTimer } from "./ccm_harness.ts";
import { type Cluster, startCluster, waitForQuiet } from "./ccm_steady.ts";
import type { BenchNode, CcmWorld } from "./ccm_world.ts";

/** Options of `benchCcmLatency`. */
export interface CcmLatencyOptions {
  /** Nodes of the cluster before the events. */
  nodes: number;
  services: number;
  /** Events of each kind. */
  samples: number;
}

/** Samples (ms) and Linode calls per event, by kind of event. */
export interface CcmLatencyResult {
  readonly nodes: number;
  readonly services: number;
  readonly initMs: number[];
  readonly routeMs: number[];
  readonly joinInEveryNbMs: number[];
  readonly leaveFromEveryNbMs: number[];
  readonly nbReadyMs: number[];
  /** Linode calls per join (init, route and backends), per leave. */
  readonly callsPerJoin: number;
  readonly callsPerLeave: number;
  /** Linode calls per new Service: those of its phase on any route but the `isBackgroundRoute` ones. */
  readonly callsPerService: number;
  /** Every call of the new-Service phase per new Service, by route template, background routes included. */
  readonly callsPerServiceByRoute: Readonly<Record<string, number>>;
}

/** No event may take longer (the CCM retries failures after 5 s and more: this only catches a stall). */
const EVENT_TIMEOUT_MS = 60_000;
/** Joins are spaced by more than the 2 s between forced instance refreshes, as machines joining apart. */
const JOIN_SPACING_MS = 2_500;

async function until(condition: () => boolean, what: string, pollMs: number): Promise<number> {
  const deadline = performance.now() + EVENT_TIMEOUT_MS;
  while (!condition()) {
    if (performance.now() > deadline) {
      throw new Error(`Timed out after ${EVENT_TIMEOUT_MS} ms waiting for ${what}`);
    }
    await systemClock.sleep(pollMs);
  }
  return performance.now();
}

function inEveryNb(world: CcmWorld, name: string, present: boolean): boolean {
  for (const backends of world.backendsByService().values()) {
    if (backends?.has(name) !== present) return false;
  }
  return true;
}

async function join(world: CcmWorld, timer: InitTimer) {
  const node = world.addLinode(true);
  const createdAt = performance.now();
  timer.create(node.name, () => world.register(node, { podCidr: false }));
  await timer.initialised(node.name, EVENT_TIMEOUT_MS);
  const initMs = timer.latenciesMs([node.name])[0] ?? NaN;
  const inNbAt = await until(
    () => inEveryNb(world, node.name, true),
    `${node.name} in every NodeBalancer`,
    10,
  );
  const routeFrom = performance.now();
  world.assignPodCidr(node);
  const routedAt = await until(() => world.isRouted(node), `the route of ${node.name}`, 5);
  return { node, initMs, inNbMs: inNbAt - (createdAt + initMs), routeMs: routedAt - routeFrom };
}

async function joins(world: CcmWorld, samples: number, out: CcmLatencyResult): Promise<BenchNode[]> {
  using timer = new InitTimer(world.world);
  const joined: BenchNode[] = [];
  for (let i = 0; i < samples; i++) {
    await systemClock.sleep(JOIN_SPACING_MS);
    const j = await join(world, timer);
    joined.push(j.node);
    out.initMs.push(j.initMs);
    out.joinInEveryNbMs.push(j.inNbMs);
    out.routeMs.push(j.routeMs);
  }
  return joined;
}

async function leaves(world: CcmWorld, nodes: readonly BenchNode[], out: CcmLatencyResult): Promise<void> {
  for (const node of nodes) {
    const t0 = performance.now();
    world.removeNode(node.name);
    const done = await until(() => inEveryNb(world, node.name, false), `${node.name} out of every NB`, 10);
    out.leaveFromEveryNbMs.push(done - t0);
  }
}

async function newServices(world: CcmWorld, samples: number, out: CcmLatencyResult): Promise<void> {
  const want = world.eligibleNames().length;
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const name = world.addService();
    const ready = () => world.backendsByService().get(name)?.size === want;
    out.nbReadyMs.push(await until(ready, `a complete NodeBalancer for ${name}`, 10) - t0);
  }
}

function perSample(counts: Readonly<Record<string, number>>, samples: number): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([route, n]) => [route, n / samples]));
}

/** Runs `phase`, waits until its late calls are over, and returns its calls by route (counted from now). */
async function countCalls(cluster: Cluster, phase: () => Promise<unknown>): Promise<Record<string, number>> {
  const calls = cluster.world.world.linode.calls;
  calls.reset();
  await phase();
  await waitForQuiet(cluster);
  return calls.snapshot().counts;
}

function sum(
  counts: Readonly<Record<string, number>>,
  which: (route: string) => boolean = () => true,
): number {
  return Object.entries(counts).reduce((n, [route, c]) => n + (which(route) ? c : 0), 0);
}

/** Runs every kind of event against one converged cluster and its CCM process. */
export async function benchCcmLatency(o: CcmLatencyOptions): Promise<CcmLatencyResult> {
  await using cluster = await startCluster(o.nodes, o.services, "ccm-latency");
  const { world } = cluster;
  const out = {
    nodes: o.nodes,
    services: o.services,
    initMs: [] as number[],
    routeMs: [] as number[],
    joinInEveryNbMs: [] as number[],
    leaveFromEveryNbMs: [] as number[],
    nbReadyMs: [] as number[],
    callsPerJoin: NaN,
    callsPerLeave: NaN,
    callsPerService: NaN,
    callsPerServiceByRoute: {} as Record<string, number>,
  };
  // Start-up and the Services' creation may still be writing (late route writes): not the joins' cost.
  await waitForQuiet(cluster);
  let joined: BenchNode[] = [];
  const joinCalls = await countCalls(cluster, async () => joined = await joins(world, o.samples, out));
  out.callsPerJoin = sum(joinCalls) / o.samples;
  out.callsPerLeave = sum(await countCalls(cluster, () => leaves(world, joined, out))) / o.samples;
  const serviceCalls = await countCalls(cluster, () => newServices(world, o.samples, out));
  out.callsPerService = sum(serviceCalls, (route) => !isBackgroundRoute(route)) / o.samples;
  out.callsPerServiceByRoute = perSample(serviceCalls, o.samples);
  const problems = world.problems();
  if (problems.length) throw new Error(`After the latency events: ${problems.join("; ")}`);
  return out;
}
