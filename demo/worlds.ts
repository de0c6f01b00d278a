/**
 * The worlds `deno task demo` can start on (`--world=`): `demo`, the CCM's own small cluster, or `go-ccm`, a
 * cluster as the Go CCM leaves it, whose Lease the Go CCM still holds. Each comes with the CCM configuration
 * and the story told on it.
 */
import type { Config } from "../config/config.ts";
import { parseConfig } from "../config/config.ts";
import { startDemoWorld, startGoCcmWorld } from "../sim/mod.ts";
import type { DemoSims } from "./collect.ts";
import { GO_CCM_PREVIEW, goCcmScenes } from "./go_story.ts";
import { demoScenes, type Scene } from "./story.ts";

/** The names `--world=` takes. */
export const WORLDS = ["demo", "go-ccm"] as const;
/** One of `WORLDS`. */
export type WorldName = typeof WORLDS[number];

/** A started world, what the CCM runs with on it, and its story. */
export interface DemoStage {
  readonly world: DemoSims & { readonly kubeconfigPath: string; close(): Promise<void> };
  readonly env: Readonly<Record<string, string>>;
  /** The replicas' configuration (`fast` shortens cache TTLs and periods). */
  config(fast: boolean): Config;
  readonly scenes: readonly Scene[];
  /** The story panel's text before the story starts (undefined: the view's default). */
  readonly preview?: string;
  /** Replica A must lead before B starts (false when someone else holds the Lease). */
  readonly leaderFirst: boolean;
}

const START_NODES = 6;
const LEASE_FLAGS = [
  "--leader-elect=true",
  "--leader-elect-resource-namespace=kube-system",
  "--leader-elect-resource-name=cloud-controller-manager",
  "--secure-port=0",
];

function configOf(args: readonly string[], env: Record<string, string>, fast: boolean): Config {
  const parsed = parseConfig(args, {
    ...env,
    LINODE_INSTANCE_CACHE_TTL: fast ? "1" : "3",
    LINODE_ROUTES_CACHE_TTL_SECONDS: fast ? "3" : "10",
  });
  if (parsed.kind !== "run") throw new TypeError(`Unexpected demo configuration result ${parsed.kind}`);
  return parsed.config;
}

/** Starts the named world in `dir` (where its kubeconfig goes). */
export async function startStage(name: WorldName, dir: string): Promise<DemoStage> {
  if (name === "go-ccm") {
    const world = await startGoCcmWorld({ dir, nodes: 4 });
    return {
      world,
      env: world.env,
      // The Go CCM Deployment's flags, unchanged: that is the switch.
      config: (fast) =>
        configOf([...world.flags, ...LEASE_FLAGS, `--node-monitor-period=${fast ? 1 : 2}s`], world.env, fast),
      scenes: goCcmScenes(world),
      preview: GO_CCM_PREVIEW,
      leaderFirst: false,
    };
  }
  const world = await startDemoWorld({ dir, nodes: START_NODES });
  return {
    world,
    env: world.env,
    config: (fast) =>
      configOf(
        [
          "--cloud-provider=linode",
          ...LEASE_FLAGS,
          `--node-monitor-period=${fast ? 1 : 2}s`,
          `--vpc-names=${world.vpcLabel}`,
          "--enable-route-controller",
          `--cluster-cidr=${world.clusterCidr}`,
        ],
        world.env,
        fast,
      ),
    scenes: demoScenes(world, START_NODES),
    leaderFirst: true,
  };
}
