/** Scenario fixture for the node controllers: both emulators, the real clients, cache and controllers. */
import { join } from "node:path";
import type { CoreV1Event, V1Node, V1Taint } from "@kubernetes/client-node";
import { InstanceCache } from "../cache/instances.ts";
import { VpcIpCache } from "../cache/vpc_ips.ts";
import { VpcCache, type VpcSelection } from "../cache/vpcs.ts";
import { systemClock } from "../common/clock.ts";
import {
  kubeNodeWriter,
  type NodeControllersDeps,
  startNodeControllers,
} from "../controllers/node/cloud_node.ts";
import type { NodeControllerOptions } from "../controllers/node/cloud_node.ts";
import type { LifecycleOptions } from "../controllers/node/lifecycle.ts";
import { makeKubeClients } from "../kube/clients.ts";
import { nodeSource } from "../kube/clients.ts";
import { loadKubeConfig } from "../kube/config.ts";
import { EventRecorder } from "../kube/events.ts";
import { Informer } from "../kube/informer.ts";
import { LinodeClient } from "../linode/client.ts";
import { staticToken } from "../linode/token.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../server/metrics.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { kubeletNode, registerNode, UNINITIALIZED_TAINT } from "../sim/kubelet.ts";

/** Taint kubelet sets with `--cloud-provider=external`. */
export const UNINITIALIZED: V1Taint = UNINITIALIZED_TAINT;
export { kubeletNode };
export { waitFor } from "./process.ts";

/** Options of `startNodeWorld`. */
export interface WorldOptions {
  ttlMs?: number;
  vpc?: VpcSelection;
  /** TTL of the VPC and VPC address caches (default 60 s). */
  vpcTtlMs?: number;
  controllers?: NodeControllerOptions & LifecycleOptions;
  /** `--controllers`: which node controllers run (default both). */
  enabled?: ReadonlySet<string>;
}

/** Both emulators plus the wired node controllers. */
export interface NodeWorld extends AsyncDisposable {
  linode: Awaited<ReturnType<typeof startLinodeSim>>;
  kube: Awaited<ReturnType<typeof startKubeSim>>;
  metrics: Registry;
  cache: InstanceCache;
  deps: NodeControllersDeps;
  /** Starts the informer and both controllers (stopped on dispose). */
  start(): Promise<void>;
  node(name: string): V1Node | undefined;
  events(reason: string): CoreV1Event[];
  /** Linode calls by route key, e.g. `GET /v4/linode/instances`. */
  calls(key: string): number;
}

/** Registers Nodes in the Kubernetes emulator as kubelets would. */
export function addNodes(world: NodeWorld, ...nodes: V1Node[]): void {
  for (const n of nodes) registerNode(world.kube, n);
}

/** Starts both emulators and wires the node controllers to them through the real clients. */
export async function startNodeWorld(options: WorldOptions = {}): Promise<NodeWorld> {
  const linode = await startLinodeSim();
  const kube = await startKubeSim();
  const dir = await Deno.makeTempDir({ prefix: "node_world_" });
  const kubeconfig = join(dir, "kubeconfig");
  await kube.writeKubeconfig(kubeconfig);
  const metrics = new Registry();
  const log = componentLogger("node-test");
  const clock = systemClock;
  const kc = loadKubeConfig({ kubeconfig });
  const clients = makeKubeClients(kc, { metrics });
  const client = new LinodeClient({
    baseUrl: linode.url,
    token: staticToken(linode.token),
    timeoutMs: 1_000,
    maxRetries: 1,
    retry: { baseMs: 10, maxMs: 20 },
    metrics,
    log,
    clock,
  });
  const vpcs = new VpcCache(client.vpcs, options.vpc ?? {}, { clock, metrics, ttlMs: options.vpcTtlMs });
  const vpcIps = new VpcIpCache(client.vpcs, vpcs, { clock, metrics, ttlMs: options.vpcTtlMs });
  const cache = new InstanceCache(client.instances, {
    clock,
    metrics,
    region: "us-east",
    ttlMs: options.ttlMs ?? 15_000,
    vpcIps: vpcs.configured ? vpcIps : undefined,
    retry: { baseMs: 20, maxMs: 100 },
  });
  const informer = new Informer(kc, nodeSource(clients.core), {
    log,
    metrics,
    backoff: { baseMs: 20, maxMs: 100 },
  });
  const recorder = new EventRecorder(clients.core, { log });
  const deps: NodeControllersDeps = {
    nodes: informer,
    instances: cache,
    linode: client.instances,
    writer: kubeNodeWriter(clients.core),
    events: recorder,
    log,
    metrics,
    clock,
  };
  const stop = new AbortController();
  const running: Promise<void>[] = [];
  const controllerOptions = { monitorPeriodMs: 50, retryBaseMs: 50, retryMaxMs: 200, ...options.controllers };
  return {
    linode,
    kube,
    metrics,
    cache,
    deps,
    async start() {
      running.push(informer.start(stop.signal));
      await informer.waitForSync(stop.signal);
      running.push(
        startNodeControllers(deps, controllerOptions, { enabled: options.enabled }).run(stop.signal),
      );
    },
    node: (name) => kube.store.get("nodes", name) as unknown as V1Node | undefined,
    events: (reason) =>
      (kube.store.list("events") as unknown as CoreV1Event[]).filter((e) => e.reason === reason),
    calls: (key) => linode.calls.count(key),
    async [Symbol.asyncDispose]() {
      stop.abort();
      await Promise.allSettled(running);
      await recorder.flush();
      await linode.close();
      await kube.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
