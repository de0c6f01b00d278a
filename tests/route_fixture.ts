/**
 * Scenario fixture for the route controller: both emulators, the real clients, the VPC caches and the
 * controller, wired as `ccm.ts` wires them. The world follows the Linode Cluster API layout: VPC `cluster`
 * with subnet `default` 10.0.0.0/8, pod CIDRs in 10.192.0.0/10.
 */
import { join } from "node:path";
import type { CoreV1Event, V1Node } from "@kubernetes/client-node";
import { VpcIpCache } from "../cache/vpc_ips.ts";
import { VpcCache, type VpcSelection } from "../cache/vpcs.ts";
import { type Clock, systemClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import {
  kubeConditionWriter,
  linodeRangeWriter,
  type RouteControllerOptions,
  startRouteController,
} from "../controllers/route/controller.ts";
import type { RouteDeps } from "../controllers/route/route.ts";
import { makeKubeClients, nodeSource } from "../kube/clients.ts";
import { loadKubeConfig } from "../kube/config.ts";
import { EventRecorder } from "../kube/events.ts";
import { Informer } from "../kube/informer.ts";
import { LinodeClient } from "../linode/client.ts";
import { staticToken } from "../linode/token.ts";
import { Registry } from "../server/metrics.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { kubeletNode, registerNode } from "../sim/kubelet.ts";
import { startLinodeSim } from "../sim/linode/server.ts";

export { waitFor } from "./process.ts";

/** The cluster CIDR of the scenarios (Cluster API's pod range). */
export const CLUSTER_CIDR = "10.192.0.0/10";

/** Options of `startRouteWorld`. */
export interface RouteWorldOptions {
  /** Clock of the controller and the caches (default the system clock). */
  clock?: Clock;
  /** Clock of the Linode client's retries and rate-limit pauses (default the system clock). */
  linodeClock?: Clock;
  /** VPC selection (default `--vpc-names=cluster --subnet-names=default`). */
  vpc?: VpcSelection;
  /** `LINODE_ROUTES_CACHE_TTL_SECONDS` in ms (default 60 s). */
  ttlMs?: number;
  controller?: Partial<RouteControllerOptions>;
}

/** Both emulators plus the wired route controller. */
export interface RouteWorld extends AsyncDisposable {
  linode: Awaited<ReturnType<typeof startLinodeSim>>;
  kube: Awaited<ReturnType<typeof startKubeSim>>;
  metrics: Registry;
  client: LinodeClient;
  vpcIps: VpcIpCache;
  deps: RouteDeps;
  /** The VPC `cluster` and its subnet `default`. */
  vpcId: number;
  subnetId: number;
  /** Starts the informer and the controller (stopped on dispose). */
  start(): Promise<void>;
  /** A running Linode in the VPC (`ipRanges` seeds ranges). */
  addLinode(label: string, ipRanges?: string[]): number;
  /** Registers a Node for `linodeId` (providerID set, as after initialisation), with an optional pod CIDR. */
  addNode(name: string, linodeId: number, podCidr?: string): void;
  /** The Node's NetworkUnavailable condition as `status/reason`. */
  condition(name: string): string | undefined;
  node(name: string): V1Node | undefined;
  events(reason: string): CoreV1Event[];
  /** Linode calls by route key, e.g. `GET /v4/vpcs/{id}/ips`. */
  calls(key: string): number;
  /** Route passes that ended, by result (`success`, `rate-limited`, ...). */
  passes(result?: string): number;
}

/** The route key of a legacy interface write. */
export const PUT_CONFIG_INTERFACE = "PUT /v4/linode/instances/{id}/configs/{id}/interfaces/{id}";
/** The route key of a Linode interface write. */
export const PUT_LINODE_INTERFACE = "PUT /v4/linode/instances/{id}/interfaces/{id}";
/** The route key of one VPC listing page. */
export const LIST_VPC_IPS = "GET /v4/vpcs/{id}/ips";

/** Starts both emulators and wires the route controller to them through the real clients. */
export async function startRouteWorld(options: RouteWorldOptions = {}): Promise<RouteWorld> {
  const linode = await startLinodeSim();
  const kube = await startKubeSim();
  const dir = await Deno.makeTempDir({ prefix: "route_world_" });
  const kubeconfig = join(dir, "kubeconfig");
  await kube.writeKubeconfig(kubeconfig);
  const vpc = linode.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "10.0.0.0/8" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const metrics = new Registry();
  const log = componentLogger("route-test");
  const clock = options.clock ?? systemClock;
  const kc = loadKubeConfig({ kubeconfig });
  const clients = makeKubeClients(kc, { metrics });
  const client = new LinodeClient({
    baseUrl: linode.url,
    token: staticToken(linode.token),
    timeoutMs: 2_000,
    maxRetries: 1,
    retry: { baseMs: 10, maxMs: 20 },
    maxRetrySleepMs: 0,
    metrics,
    log,
    clock: options.linodeClock ?? systemClock,
  });
  const selection = options.vpc ?? { vpcNames: ["cluster"], subnetNames: ["default"] };
  const cacheOptions = { clock, metrics, ttlMs: options.ttlMs, retry: { baseMs: 20, maxMs: 100 } };
  const vpcs = new VpcCache(client.vpcs, selection, cacheOptions);
  const vpcIps = new VpcIpCache(client.vpcs, vpcs, cacheOptions);
  const informer = new Informer(kc, nodeSource(clients.core), {
    log,
    metrics,
    backoff: { baseMs: 20, maxMs: 100 },
  });
  const recorder = new EventRecorder(clients.core, { log });
  const deps: RouteDeps = {
    nodes: informer,
    vpcIps,
    vpcs,
    writer: linodeRangeWriter(client),
    conditions: kubeConditionWriter(clients.core),
    events: recorder,
    log,
    metrics,
    clock,
  };
  const controllerOptions: RouteControllerOptions = {
    clusterCidrs: [CLUSTER_CIDR],
    resyncMs: 100,
    minIntervalMs: 10,
    retryBaseMs: 20,
    retryMaxMs: 200,
    writeRetry: { baseMs: 20, maxMs: 200 },
    rateLimitPause: { baseMs: 20, maxMs: 200 },
    ...options.controller,
  };
  const stop = new AbortController();
  const running: Promise<void>[] = [];
  const reconciles = metrics.counter("ccm_reconciles_total", "", ["controller", "result"]);
  return {
    linode,
    kube,
    metrics,
    client,
    vpcIps,
    deps,
    vpcId: vpc.id,
    subnetId,
    async start() {
      running.push(informer.start(stop.signal));
      await informer.waitForSync(stop.signal);
      running.push(startRouteController(deps, controllerOptions).run(stop.signal));
    },
    addLinode(label, ipRanges) {
      return linode.world.addInstance({
        label,
        region: "us-east",
        vpc: { vpcId: vpc.id, subnetId, ipRanges },
      }).id;
    },
    addNode(name, linodeId, podCidr) {
      registerNode(kube, kubeletNode(name, { providerID: `linode://${linodeId}`, taints: [], podCidr }));
    },
    condition(name) {
      const node = kube.store.get("nodes", name) as unknown as V1Node | undefined;
      const c = node?.status?.conditions?.find((c) => c.type === "NetworkUnavailable");
      return c && `${c.status}/${c.reason}`;
    },
    node: (name) => kube.store.get("nodes", name) as unknown as V1Node | undefined,
    events: (reason) =>
      (kube.store.list("events") as unknown as CoreV1Event[]).filter((e) => e.reason === reason),
    calls: (key) => linode.calls.count(key),
    passes: (result = "success") => reconciles.get({ controller: "route", result }),
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
