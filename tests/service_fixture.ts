/** Scenario fixture for the service controller: both emulators, the real clients, cache, informers, controller. */
import { join } from "node:path";
import type { CoreV1Event, V1Node, V1Secret, V1Service } from "@kubernetes/client-node";
import { NodeBalancerCache } from "../cache/nodebalancers.ts";
import { systemClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import type { ServiceDefaults } from "../controllers/service/defaults.ts";
import { defaults as serviceDefaults } from "../controllers/service/fixtures.ts";
import {
  kubeServiceWriter,
  type ServiceControllerDeps,
  type ServiceControllerOptions,
  startServiceController,
} from "../controllers/service/service_controller.ts";
import { SubnetResolver } from "../controllers/service/subnets.ts";
import { makeKubeClients, nodeSource, secretSource, serviceSource } from "../kube/clients.ts";
import { loadKubeConfig } from "../kube/config.ts";
import { EventRecorder } from "../kube/events.ts";
import { Informer } from "../kube/informer.ts";
import { LinodeClient } from "../linode/client.ts";
import { staticToken } from "../linode/token.ts";
import { Registry } from "../server/metrics.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { kubeletNode, registerNode } from "../sim/kubelet.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import type { NodeBalancerSnapshot } from "../sim/mod.ts";

export { waitFor } from "./process.ts";

/** Options of `startServiceWorld`. */
export interface ServiceWorldOptions {
  controller?: ServiceControllerOptions;
  /** CCM-wide settings (default: the flags' defaults, cluster `kubernetes`, region `us-east`). */
  defaults?: ServiceDefaults;
}

/** Both emulators plus the wired service controller. */
export interface ServiceWorld extends AsyncDisposable {
  linode: Awaited<ReturnType<typeof startLinodeSim>>;
  kube: Awaited<ReturnType<typeof startKubeSim>>;
  client: LinodeClient;
  metrics: Registry;
  cache: NodeBalancerCache;
  deps: ServiceControllerDeps;
  /** Starts the informers and the controller (stopped on dispose, or by `stop()`). */
  start(): Promise<void>;
  /** Stops the controller and informers (as losing leadership would), keeping the emulators. */
  stop(): Promise<void>;
  /** Registers a Ready, initialised Node with this private address. */
  addNode(name: string, ip: string, options?: { ready?: boolean; labels?: Record<string, string> }): void;
  /** Creates a Service (default: LoadBalancer, one TCP port 80). */
  addService(name: string, spec?: Partial<ServiceInput>): V1Service;
  addSecret(name: string, data: Record<string, string>): void;
  service(name: string): V1Service | undefined;
  /** The NodeBalancers in the emulator, configs and nodes inline. */
  nodeBalancers(): NodeBalancerSnapshot[];
  /** The NodeBalancer at the Service's status IP. */
  nodeBalancerOf(name: string): NodeBalancerSnapshot | undefined;
  events(reason: string, service?: string): CoreV1Event[];
}

/** What `addService` takes. */
export interface ServiceInput {
  type: string;
  ports: { port: number; protocol?: string; name?: string }[];
  annotations: Record<string, string>;
  namespace: string;
}

/** Starts both emulators and wires the service controller to them through the real clients. */
export async function startServiceWorld(options: ServiceWorldOptions = {}): Promise<ServiceWorld> {
  const linode = await startLinodeSim();
  const kube = await startKubeSim();
  const dir = await Deno.makeTempDir({ prefix: "service_world_" });
  const kubeconfig = join(dir, "kubeconfig");
  await kube.writeKubeconfig(kubeconfig);
  const metrics = new Registry();
  const log = componentLogger("service-test");
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
  const cache = new NodeBalancerCache(client.nodeBalancers, { clock, metrics, region: "us-east" });
  const informerOptions = { log, metrics, backoff: { baseMs: 20, maxMs: 100 } };
  const nodes = new Informer(kc, nodeSource(clients.core), informerOptions);
  const services = new Informer(kc, serviceSource(clients.core), informerOptions);
  const secrets = new Informer(kc, secretSource(clients.core), informerOptions);
  const events = new EventRecorder(clients.core, { log });
  const deps: ServiceControllerDeps = {
    services,
    nodes,
    secrets,
    cache,
    nodeBalancers: client.nodeBalancers,
    firewalls: client.firewalls,
    reservedIps: client.reservedIps,
    writer: kubeServiceWriter(clients.core),
    defaults: options.defaults ?? serviceDefaults(),
    subnets: new SubnetResolver(client.vpcs, clock),
    events,
    log,
    metrics,
    clock,
  };
  let stopper = new AbortController();
  let running: Promise<unknown>[] = [];
  const stop = async () => {
    stopper.abort();
    await Promise.allSettled(running);
    running = [];
    stopper = new AbortController();
  };
  const controllerOptions = { retryBaseMs: 50, retryMaxMs: 200, ...options.controller };
  return {
    linode,
    kube,
    client,
    metrics,
    cache,
    deps,
    async start() {
      const signal = stopper.signal;
      running.push(nodes.start(signal), services.start(signal), secrets.start(signal));
      await Promise.all([
        nodes.waitForSync(signal),
        services.waitForSync(signal),
        secrets.waitForSync(signal),
      ]);
      running.push(startServiceController(deps, controllerOptions).run(signal));
    },
    stop,
    addNode(name, ip, o = {}) {
      registerNode(
        kube,
        kubeletNode(name, {
          providerID: `linode://${1000 + Number(ip.split(".").at(-1))}`,
          taints: [],
          ready: o.ready,
          labels: o.labels,
          addresses: [{ type: "Hostname", address: name }, { type: "InternalIP", address: ip }],
        }),
      );
    },
    addService(name, spec = {}) {
      return kube.store.create("services", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: spec.namespace ?? "default", annotations: spec.annotations },
        spec: {
          type: spec.type ?? "LoadBalancer",
          selector: { app: name },
          ports: (spec.ports ?? [{ port: 80 }]).map((p, _, all) => ({
            protocol: "TCP",
            ...(all.length > 1 ? { name: `p${p.port}` } : {}),
            ...p,
          })),
        },
      }) as unknown as V1Service;
    },
    addSecret(name, data) {
      const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, btoa(v)]));
      const secret: V1Secret = {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: "default" },
        data: encoded,
        type: "kubernetes.io/tls",
      };
      kube.store.create("secrets", secret as unknown as Record<string, unknown>);
    },
    service: (name) => kube.store.get("services", name, "default") as unknown as V1Service | undefined,
    nodeBalancers: () => linode.world.nodeBalancers(),
    nodeBalancerOf(name) {
      const svc = kube.store.get("services", name, "default") as unknown as V1Service | undefined;
      const ip = svc?.status?.loadBalancer?.ingress?.[0]?.ip;
      const hostname = svc?.status?.loadBalancer?.ingress?.[0]?.hostname;
      return linode.world.nodeBalancers().find((nb) =>
        (ip && nb.ipv4 === ip) || (!ip && nb.hostname === hostname)
      );
    },
    events: (reason, service) =>
      (kube.store.list("events") as unknown as CoreV1Event[]).filter((e) =>
        e.reason === reason && (service === undefined || e.involvedObject.name === service)
      ),
    async [Symbol.asyncDispose]() {
      await stop();
      await events.flush();
      await linode.close();
      await kube.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Node names of a NodeBalancer's backends, with their ids, per port: what must survive updates. */
export function backendIds(nb: NodeBalancerSnapshot | undefined): Record<number, Record<string, number>> {
  return Object.fromEntries(
    (nb?.configs ?? []).map((c) => [c.port, Object.fromEntries(c.nodes.map((n) => [n.address, n.id]))]),
  );
}

/** A Node as `V1Node` (for tests that read one). */
export type { V1Node };
