/**
 * The switch from the Go CCM, as a scenario: a world as the Go CCM left it (`startGoCcmWorld`, its Lease holder
 * on the test's `FakeClock`) and this CCM started on it through `runCcm` with the Go CCM's own flags.
 */
import { dirname, join } from "node:path";
import type { V1Service } from "@kubernetes/client-node";
import { FakeClock } from "../common/clock.ts";
import { clusterTag, IDENTITY_NAMESPACE, ownershipTag } from "../controllers/service/ownership.ts";
import type { KubeSim } from "../sim/kube/server.ts";
import {
  type GoCcmWorld,
  type GoCcmWorldOptions,
  type NodeBalancerSnapshot,
  type SeededService,
  startGoCcmWorld,
} from "../sim/mod.ts";
import { type CcmWorld, startWorld } from "./ccm_fixture.ts";

/** Options of `startSwitch`. */
export interface SwitchOptions extends Omit<GoCcmWorldOptions, "clock" | "tls"> {
  /** Flags after the Go CCM's (e.g. `--leader-elect=true`). */
  flags?: readonly string[];
  /**
   * `namespace/name` of a ServiceAccount this CCM authenticates as (a token of it in its own kubeconfig), as the
   * Go CCM's DaemonSet runs; default the emulator's admin. What it may do is up to the test's RBAC objects and
   * `go.kube.enforceRbac`.
   */
  serviceAccount?: string;
}

/** The Go CCM's world and this CCM, not started yet. */
export interface Switch extends AsyncDisposable {
  readonly go: GoCcmWorld;
  readonly ccm: CcmWorld;
  /** The NodeBalancers as the Go CCM left them. */
  readonly before: readonly NodeBalancerSnapshot[];
  service(name: string): V1Service | undefined;
  nodeBalancers(): NodeBalancerSnapshot[];
  /** The ownership tag this CCM gives the seeded Service's NodeBalancer. */
  tagOf(svc: SeededService): string;
  /** The cluster identity tag this CCM puts beside the ownership tag. */
  readonly clusterIdTag: string;
  /** True once every seeded Service's NodeBalancer carries its ownership tag. */
  adopted(): boolean;
  /** Linode writes (POST, PUT, DELETE) by route key, in order. */
  linodeWrites(): string[];
}

const WRITES = /^(POST|PUT|DELETE) /;

/** The identity tag of the emulated cluster (its `kube-system` Namespace UID). */
export function clusterIdTagOf(kube: KubeSim): string {
  const ns = kube.store.get("namespaces", IDENTITY_NAMESPACE);
  return clusterTag(String(ns?.metadata?.uid ?? ""));
}

/** Seeds the Go CCM's world and prepares this CCM with the Go CCM's flags (start it with `ccm.start()`). */
export async function startSwitch(options: SwitchOptions = {}): Promise<Switch> {
  const clock = new FakeClock();
  const { flags = [], serviceAccount, ...worldOptions } = options;
  const go = await startGoCcmWorld({ ...worldOptions, clock, tls: false });
  const env: Record<string, string> = serviceAccount
    ? { KUBECONFIG: await serviceAccountKubeconfig(go, serviceAccount) }
    : {};
  const ccm = await startWorld({ sims: go, clock, flags: [...go.flags, ...flags], env });
  const before = go.linode.world.nodeBalancers();
  const tagOf = (svc: SeededService) => ownershipTag(go.clusterName, svc.uid);
  const byId = () => new Map(go.linode.world.nodeBalancers().map((nb) => [nb.id, nb]));
  return {
    go,
    ccm,
    before,
    service: (name) => go.kube.store.get("services", name, "default") as unknown as V1Service | undefined,
    nodeBalancers: () => go.linode.world.nodeBalancers(),
    tagOf,
    clusterIdTag: clusterIdTagOf(go.kube),
    adopted: () => {
      const now = byId();
      return go.services.every((s) => now.get(s.nodeBalancerId)?.tags.includes(tagOf(s)));
    },
    linodeWrites: () => go.linode.calls.log.map((c) => c.key).filter((k) => WRITES.test(k)),
    [Symbol.asyncDispose]: () => ccm[Symbol.asyncDispose](),
  };
}

/** A kubeconfig beside the world's that authenticates as the ServiceAccount `namespace/name`; returns its path. */
async function serviceAccountKubeconfig(go: GoCcmWorld, serviceAccount: string): Promise<string> {
  const [namespace = "", name = ""] = serviceAccount.split("/");
  const path = join(dirname(go.kubeconfigPath), "service-account.kubeconfig");
  await go.kube.writeKubeconfig(path, go.kube.identities.addServiceAccount(namespace, name));
  return path;
}

/** Backend node ids per NodeBalancer, per port, per address: what must survive the switch. */
export function backendIds(
  nbs: readonly NodeBalancerSnapshot[],
): Record<number, Record<number, Record<string, number>>> {
  return Object.fromEntries(nbs.map((nb) => [
    nb.id,
    Object.fromEntries(
      nb.configs.map((c) => [c.port, Object.fromEntries(c.nodes.map((n) => [n.address, n.id]))]),
    ),
  ]));
}
