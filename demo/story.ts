/**
 * The demo's scripted story: a node joins, one shuts down and boots again, one is deleted. Each scene acts
 * on the emulators, then waits until the CCM is seen reacting (in a snapshot) before the next scene.
 */
import { type Clock, isAbort } from "../common/clock.ts";
import { type DemoWorld, setNodeReady } from "../sim/mod.ts";
import type { DemoSnapshot, NodeRow } from "./snapshot.ts";

/** One step of the story. */
export interface Scene {
  /** Earliest start, in ms after the demo started (before `scale`). */
  readonly atMs: number;
  /** Changes the world; returns what happened, for the story panel. */
  act(): string;
  /** What the CCM should be seen doing about it, in order: each returns a description once seen. */
  readonly outcomes: readonly Outcome[];
}

/** Looks for one reaction of the CCM in a snapshot; returns its description once seen, else undefined. */
export type Outcome = (s: DemoSnapshot) => string | undefined;

/** What `runStory` needs. */
export interface StoryDeps {
  clock: Clock;
  startedAtMs: number;
  snapshot(): DemoSnapshot;
  /** Records and shows one story line. */
  say(text: string): void;
}

/** Options of `runStory`. */
export interface StoryOptions {
  /** Multiplies every scene's `atMs` (0.25 for `--fast`). */
  scale?: number;
  pollMs?: number;
  /** How long to wait for the CCM to react to one scene. */
  observeTimeoutMs?: number;
  /** Pause after one scene's outcome before the next may start. */
  gapMs?: number;
}

function row(s: DemoSnapshot, name: string): NodeRow | undefined {
  return s.nodes.find((n) => n.name === name);
}

function linodeIdOf(world: DemoWorld, label: string): number {
  const found = world.linode.world.listInstances().find((i) => i.label === label);
  if (!found) throw new RangeError(`No Linode labelled ${label} in the demo world`);
  return found.id;
}

/** Marks the Node (not) Ready, as its kubelet would; a Node already gone is fine. */
function kubelet(world: DemoWorld, name: string, ready: boolean): void {
  if (world.kube.store.get("nodes", name)) setNodeReady(world.kube, name, ready);
}

/** Powers the Linode of Node `name` off or on, and its kubelet reports the Node (not) Ready; returns the id. */
function setPower(world: DemoWorld, name: string, on: boolean): number {
  const id = linodeIdOf(world, name);
  world.linode.world.setStatus(id, on ? "running" : "offline");
  kubelet(world, name, on);
  return id;
}

/** A LoadBalancer Service `name` on `port`, as `kubectl expose --type=LoadBalancer` makes it. */
function exposeService(world: DemoWorld, name: string, port: number): void {
  world.kube.store.create("services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ name: "http", port, protocol: "TCP" }] },
  });
}

/** The scenes of the issues, on a world that started with `nodes` Nodes (`demo-node-1..n`). */
export function demoScenes(world: DemoWorld, nodes: number): Scene[] {
  const joining = `demo-node-${nodes + 1}`;
  const sleeper = `demo-node-${Math.min(3, nodes)}`;
  const doomed = `demo-node-${Math.min(5, nodes)}`;
  return [
    {
      atMs: 10_000,
      act: () => {
        const id = world.addNode(joining);
        return `node ${joining} joins as linode ${id}: kubelet registers it, uninitialised`;
      },
      outcomes: [
        (s) => {
          const n = row(s, joining);
          return n?.initialised
            ? `CCM initialised ${joining}: ${n.providerID}, InternalIP ${n.internalIp}`
            : undefined;
        },
        (s) => {
          const n = row(s, joining);
          return n?.route === "routed"
            ? `CCM routed pod CIDR ${n.podCidr} to ${n.providerID}'s VPC interface (NetworkUnavailable=False)`
            : undefined;
        },
      ],
    },
    {
      atMs: 20_000,
      act: () => `linode ${setPower(world, sleeper, false)} (${sleeper}) shuts down; its Node goes NotReady`,
      outcomes: [
        (s) =>
          row(s, sleeper)?.taints.includes("shutdown") ? `CCM tainted ${sleeper} as shut down` : undefined,
      ],
    },
    {
      atMs: 30_000,
      act: () => `linode ${setPower(world, sleeper, true)} (${sleeper}) boots again; its Node is Ready`,
      outcomes: [(s) => {
        const n = row(s, sleeper);
        return n && !n.taints.includes("shutdown")
          ? `CCM removed the shutdown taint from ${sleeper}`
          : undefined;
      }],
    },
    {
      atMs: 40_000,
      act: () => {
        const id = linodeIdOf(world, doomed);
        kubelet(world, doomed, false);
        world.linode.world.deleteInstance(id);
        return `linode ${id} (${doomed}) is deleted; its Node goes NotReady`;
      },
      outcomes: [
        (s) => row(s, doomed) ? undefined : `CCM deleted Node ${doomed} after the Linode API confirmed 404`,
      ],
    },
    {
      atMs: 50_000,
      act: () => {
        exposeService(world, "shop", 443);
        return "Service default/shop of type LoadBalancer is created";
      },
      outcomes: [(s) => {
        const lb = s.loadBalancers.rows?.find((r) => r.service === "default/shop");
        return lb?.ip
          ? `CCM gave shop NodeBalancer ${lb.nodeBalancerId} at ${lb.ip} with ${lb.backends} backends`
          : undefined;
      }],
    },
  ];
}

/** Waits until `outcome` shows up or `deadline` passes; returns it, or undefined. */
async function awaitOutcome(
  outcome: Outcome,
  deps: StoryDeps,
  deadline: number,
  o: Required<StoryOptions>,
  signal: AbortSignal,
): Promise<string | undefined> {
  while (!signal.aborted) {
    const seen = outcome(deps.snapshot());
    if (seen !== undefined) return seen;
    if (deps.clock.now() >= deadline) return undefined;
    await deps.clock.sleep(o.pollMs, signal);
  }
  return undefined;
}

/** Acts, then reports each outcome as it is seen (or not, within the timeout); true when all were seen. */
async function playScene(
  scene: Scene,
  deps: StoryDeps,
  o: Required<StoryOptions>,
  signal: AbortSignal,
): Promise<boolean> {
  const actedAt = deps.clock.now();
  deps.say(scene.act());
  let allSeen = true;
  for (const outcome of scene.outcomes) {
    const seen = await awaitOutcome(outcome, deps, actedAt + o.observeTimeoutMs, o, signal);
    if (signal.aborted) return false;
    const took = ((deps.clock.now() - actedAt) / 1000).toFixed(1);
    deps.say(
      seen === undefined ? `  ✗ no reaction from the CCM within ${took} s` : `  ✓ ${seen} (${took} s later)`,
    );
    allSeen &&= seen !== undefined;
  }
  return allSeen;
}

/** Plays the scenes in order until done or `signal` aborts. Resolves true when every outcome was seen. */
export async function runStory(
  scenes: readonly Scene[],
  deps: StoryDeps,
  options: StoryOptions,
  signal: AbortSignal,
): Promise<boolean> {
  const o: Required<StoryOptions> = {
    scale: options.scale ?? 1,
    pollMs: options.pollMs ?? 200,
    observeTimeoutMs: options.observeTimeoutMs ?? 30_000,
    gapMs: options.gapMs ?? 1_000,
  };
  let allSeen = true;
  let notBefore = deps.startedAtMs;
  try {
    for (const scene of scenes) {
      const startAt = Math.max(deps.startedAtMs + scene.atMs * o.scale, notBefore);
      await deps.clock.sleep(Math.max(0, startAt - deps.clock.now()), signal);
      allSeen = await playScene(scene, deps, o, signal) && allSeen;
      if (signal.aborted) return false;
      notBefore = deps.clock.now() + o.gapMs * o.scale;
    }
    deps.say("story complete: the CCM keeps running");
    return allSeen;
  } catch (e) {
    if (isAbort(e, signal)) return false;
    throw e;
  }
}
