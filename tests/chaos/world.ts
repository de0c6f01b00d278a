/**
 * The world every in-process chaos case runs in: a demo cluster (a VPC, Linodes registered as Nodes with pod
 * CIDRs, LoadBalancer Services) on both emulators, the whole CCM (cloud-node, lifecycle, route, service)
 * started through `runCcm` on a `FakeClock` shared with the emulators, so a 10-minute outage is 10 minutes of
 * the CCM's time and a few seconds of ours. `converged()` says what still differs from the goal state.
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { FakeClock } from "../../common/clock.ts";
import { startDemoWorld } from "../../sim/demo_world.ts";
import { type CcmWorld, startWorld } from "../ccm_fixture.ts";
import {
  convergenceProblems,
  linodeIdOf as linodeIdOfLabel,
  loadBalancersOf,
  nodeBalancerOf,
  nodesOf,
} from "./goal.ts";
import type { NodeBalancerSnapshot } from "../../sim/mod.ts";

/** Options of `startChaosWorld`. */
export interface ChaosWorldOptions {
  /** Linodes registered as Nodes before the CCM starts (default 4). */
  nodes?: number;
  /** LoadBalancer Services before the CCM starts (default 2, at most 3: the demo world's). */
  services?: number;
  /**
   * Linodes in the VPC that are not Nodes, created before the Nodes' (default 0). 500 or more push the
   * Nodes' Linodes onto the second page of every listing.
   */
  fillers?: number;
  /** Go CCM flags added to the chaos defaults (routes on, the demo VPC). */
  flags?: readonly string[];
  /** Environment added (e.g. `LINODE_REQUEST_TIMEOUT_SECONDS`). */
  env?: Readonly<Record<string, string>>;
  /** Random source of the Linode emulator's fault probabilities. */
  random?: () => number;
}

/** A `CcmWorld` on a demo cluster, with the goal state spelled out. */
export interface ChaosWorld extends CcmWorld {
  /** Creates a Linode in the VPC and registers it as a new Node; returns the Linode id. */
  addNode(name: string): number;
  /** The Linode id whose label is `name` (the demo world labels Linodes like their Nodes). */
  linodeIdOf(name: string): number;
  /** Creates a LoadBalancer Service with one TCP port. */
  addService(name: string, port: number): void;
  nodes(): V1Node[];
  services(): V1Service[];
  /** The NodeBalancer at a Service's status IP. */
  nodeBalancerOf(service: V1Service): NodeBalancerSnapshot | undefined;
  /** What still differs from the goal state; empty once converged. */
  converged(): string[];
  /** Moves the fake clock in `stepMs` steps until converged; throws naming what is left. */
  converge(options?: { stepMs?: number; timeoutMs?: number }): Promise<number>;
}

/** The flags every chaos world runs with: the four controllers, routes in the demo VPC. */
export function chaosFlags(world: { vpcLabel: string; clusterCidr: string }): string[] {
  return [
    `--vpc-names=${world.vpcLabel}`,
    "--enable-route-controller",
    `--cluster-cidr=${world.clusterCidr}`,
  ];
}

/** Starts the emulators with a demo cluster on a fake clock; `start()` then runs the whole CCM. */
export async function startChaosWorld(options: ChaosWorldOptions = {}): Promise<ChaosWorld> {
  const clock = new FakeClock();
  const demo = await startDemoWorld({
    nodes: 0,
    services: options.services ?? 2,
    clock,
    tls: false,
    random: options.random,
    // On the fake clock 5 minutes pass in a second: a watch the informers' 30 s silence watchdog ends holds
    // client-node's 30 s (real) timer and its closures until it fires, so quiet watches get BOOKMARKs often
    // enough that ticks of up to 15 s never let 30 s pass without one.
    bookmarkIntervalMs: 10_000,
  });
  const w = await startWorld({
    sims: demo,
    clock,
    flags: [...chaosFlags(demo), ...options.flags ?? []],
    env: options.env,
  });
  for (let i = 0; i < (options.fillers ?? 0); i++) demo.addLinode(`filler-${i}`);
  for (let i = 1; i <= (options.nodes ?? 4); i++) demo.addNode(`node-${i}`);
  const linodeIds = new Map<string, number>();
  const linodeIdOf = (name: string) => {
    const known = linodeIds.get(name);
    if (known !== undefined) return known;
    const found = linodeIdOfLabel(w, name);
    if (found) linodeIds.set(name, found);
    return found;
  };
  const world: ChaosWorld = Object.assign(w, {
    addNode: (name: string) => demo.addNode(name),
    linodeIdOf,
    addService(name: string, port: number) {
      w.kube.store.create("services", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: "default", labels: { app: name } },
        spec: {
          type: "LoadBalancer",
          selector: { app: name },
          ports: [{ name: "http", port, protocol: "TCP" }],
        },
      });
    },
    nodes: () => nodesOf(w),
    services: () => loadBalancersOf(w),
    nodeBalancerOf: (service: V1Service) => nodeBalancerOf(w, service),
    converged: () => convergenceProblems(w, linodeIdOf),
    async converge(o: { stepMs?: number; timeoutMs?: number } = {}) {
      try {
        return await w.advanceUntil(() => world.converged().length === 0, {
          what: "convergence",
          stepMs: o.stepMs ?? 5_000,
          timeoutMs: o.timeoutMs ?? 60_000,
        });
      } catch (e) {
        throw new Error(`Not converged: ${world.converged().join("; ")}`, { cause: e });
      }
    },
  });
  return world;
}
