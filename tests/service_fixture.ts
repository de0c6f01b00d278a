/**
 * Scenario fixture for the service controller: the CCM of `ccm_fixture.ts`, started through `runCcm` with
 * every controller and a `FakeClock`, plus what a cluster with LoadBalancer Services is made of (Linodes
 * with their Nodes, Services, TLS Secrets) and views of the NodeBalancers the emulator holds.
 */
import { join } from "node:path";
import type { V1Secret, V1Service } from "@kubernetes/client-node";
import type { UpdateFirewallRules } from "@linode/api-v4";
import type { FakeClock } from "../common/clock.ts";
import type { NodeBalancerSnapshot } from "../sim/mod.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { apiFetch } from "../sim/linode/testdata/test_client.ts";
import {
  addNodes,
  type CcmWorld,
  kubeletNode,
  REGION,
  startWorld,
  type WorldOptions,
} from "./ccm_fixture.ts";

/**
 * Fake time per step while waiting for the CCM: a Linode retry's first backoff, so each retry, backoff and
 * period wakes in a step of its own and its requests are answered before time moves on.
 */
const STEP_MS = 500;

/** A CCM with every controller, against both emulators, and builders for a Service's world. */
export interface ServiceWorld extends CcmWorld {
  /**
   * Adds a Linode with this private address and its Node as kubelet registers it (Ready, tainted
   * uninitialised): the CCM's node controller initialises it.
   */
  addNode(name: string, ip: string): void;
  /** Creates a Service (default: LoadBalancer, one TCP port 80). */
  addService(name: string, spec?: Partial<ServiceInput>): V1Service;
  /** Creates a `kubernetes.io/tls` Secret in `default`. */
  addSecret(name: string, data: Record<string, string>): void;
  service(name: string): V1Service | undefined;
  /** The NodeBalancers in the emulator, configs and nodes inline. */
  nodeBalancers(): NodeBalancerSnapshot[];
  /** The NodeBalancer at the Service's status IP (or hostname, when the status has no IP). */
  nodeBalancerOf(name: string): NodeBalancerSnapshot | undefined;
  /** A user's own call to the Linode API (e.g. a NodeBalancer made by hand), counted like the CCM's. */
  userCall<T>(method: "POST" | "PUT" | "DELETE", path: string, body: unknown): Promise<T>;
}

/** What `addService` takes. */
export interface ServiceInput {
  type: string;
  ports: { port: number; protocol?: string; name?: string }[];
  annotations: Record<string, string>;
  namespace: string;
}

/** Starts both emulators; `start()` then runs the CCM (every controller, unless `flags` say otherwise). */
export async function startServiceWorld(options: WorldOptions = {}): Promise<ServiceWorld> {
  const world = await startWorld(options);
  const { kube, linode } = world;
  const service = (name: string) =>
    kube.store.get("services", name, "default") as unknown as V1Service | undefined;
  const extra: Omit<ServiceWorld, keyof CcmWorld> = {
    addNode(name, ip) {
      const octet = ip.split(".").at(-1);
      linode.world.addInstance({ label: name, region: REGION, ipv4: [`172.105.0.${octet}`, ip] });
      const addresses = [{ type: "Hostname", address: name }, { type: "InternalIP", address: ip }];
      addNodes(world, kubeletNode(name, { addresses }));
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
    service,
    nodeBalancers: () => linode.world.nodeBalancers(),
    nodeBalancerOf(name) {
      const ingress = service(name)?.status?.loadBalancer?.ingress?.[0];
      return linode.world.nodeBalancers().find((nb) =>
        (ingress?.ip && nb.ipv4 === ingress.ip) || (!ingress?.ip && nb.hostname === ingress?.hostname)
      );
    },
    async userCall<T>(method: string, path: string, body: unknown) {
      const res = await apiFetch(linode, method, path, JSON.stringify(body));
      if (res.status !== 200) {
        throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      }
      return res.body as T;
    },
  };
  return Object.assign(world, extra);
}

/**
 * A second cluster in `a`'s Linode account: its own Kubernetes emulator and CCM (`flags`), on the same fake
 * clock (pass `a`'s), for tests of clusters sharing one account.
 */
export async function startSecondCluster(
  a: ServiceWorld,
  clock: FakeClock,
  flags: readonly string[],
): Promise<ServiceWorld> {
  const kube = await startKubeSim();
  const dir = await Deno.makeTempDir({ prefix: "ccm_cluster_b_" });
  const kubeconfig = join(dir, "kubeconfig");
  await kube.writeKubeconfig(kubeconfig);
  const env = {
    LINODE_URL: a.linode.url,
    LINODE_API_TOKEN: a.linode.token,
    LINODE_REGION: REGION,
    KUBECONFIG: kubeconfig,
  };
  const sims = {
    linode: a.linode,
    kube,
    env,
    async close() {
      await kube.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
  return await startServiceWorld({ sims, clock, flags });
}

/** Moves fake time until `condition` holds (the CCM's retries, backoffs and periods run on it). */
export function until(world: CcmWorld, condition: () => boolean, what: string): Promise<number> {
  return world.advanceUntil(condition, { what, stepMs: STEP_MS });
}

/** Creates a NodeBalancer by hand, as a user would (no configs). */
export function userNodeBalancer(world: ServiceWorld, label: string): Promise<{ id: number; ipv4: string }> {
  return world.userCall("POST", "/nodebalancers", { label, region: REGION, configs: [] });
}

/** Creates a Cloud Firewall by hand, as a user would. */
export function userFirewall(
  world: ServiceWorld,
  label: string,
  rules: UpdateFirewallRules,
): Promise<{ id: number }> {
  return world.userCall("POST", "/networking/firewalls", { label, rules });
}

/** Node names of a NodeBalancer's backends, with their ids, per port: what must survive updates. */
export function backendIds(nb: NodeBalancerSnapshot | undefined): Record<number, Record<string, number>> {
  return Object.fromEntries(
    (nb?.configs ?? []).map((c) => [c.port, Object.fromEntries(c.nodes.map((n) => [n.address, n.id]))]),
  );
}
