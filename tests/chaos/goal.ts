/**
 * The goal state of a demo cluster, read from the emulators alone (so it serves in-process CCMs and CCM
 * processes alike): every Node initialised as its own Linode (the demo world labels Linodes like their Nodes),
 * its pod CIDR routed and `NetworkUnavailable=False`; every LoadBalancer Service at a NodeBalancer with one
 * config per port, each backed by every eligible Node (NotReady ones included, as upstream).
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type { KubeSim } from "../../sim/kube/server.ts";
import type { LinodeSim } from "../../sim/linode/server.ts";
import type { NodeBalancerSnapshot } from "../../sim/mod.ts";
import { UNINITIALIZED_TAINT } from "../../sim/kubelet.ts";
import { isEligibleNode } from "../../controllers/service/nodebalancer/plan.ts";

/** Both emulators of a world. */
export interface Sims {
  readonly linode: LinodeSim;
  readonly kube: KubeSim;
}

/** The Nodes in the Kubernetes emulator. */
export function nodesOf(sims: Sims): V1Node[] {
  return sims.kube.store.list("nodes") as unknown as V1Node[];
}

/** The LoadBalancer Services in the Kubernetes emulator. */
export function loadBalancersOf(sims: Sims): V1Service[] {
  return (sims.kube.store.list("services") as unknown as V1Service[]).filter((s) =>
    s.spec?.type === "LoadBalancer"
  );
}

/** The id of the Linode labelled `label` (0 when none). */
export function linodeIdOf(sims: Sims, label: string): number {
  return sims.linode.world.listInstances().find((l) => l.label === label)?.id ?? 0;
}

/** The NodeBalancer at a Service's status IP. */
export function nodeBalancerOf(sims: Sims, service: V1Service): NodeBalancerSnapshot | undefined {
  const ip = service.status?.loadBalancer?.ingress?.[0]?.ip;
  return ip ? sims.linode.world.nodeBalancers().find((nb) => nb.ipv4 === ip) : undefined;
}

/** True when the Node's kubelet reports Ready. */
export function isReady(node: V1Node): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

function nodeProblems(sims: Sims, node: V1Node, idOf: (name: string) => number): string[] {
  const name = node.metadata?.name ?? "";
  const id = idOf(name);
  const out: string[] = [];
  if ((node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT.key)) {
    out.push(`${name} not initialised`);
  }
  if (node.spec?.providerID !== `linode://${id}`) out.push(`${name} providerID ${node.spec?.providerID}`);
  const cidr = node.spec?.podCIDR;
  if (cidr && id > 0 && !sims.linode.world.ipRanges(id).includes(cidr)) {
    out.push(`${name} ${cidr} not routed`);
  }
  const route = node.status?.conditions?.find((c) => c.type === "NetworkUnavailable");
  if (route?.status !== "False") out.push(`${name} NetworkUnavailable=${route?.status}`);
  return out;
}

function serviceProblems(sims: Sims, service: V1Service, eligibleNodes: number): string[] {
  const name = service.metadata?.name ?? "";
  if (service.metadata?.deletionTimestamp) return [`${name} still terminating`];
  const nb = nodeBalancerOf(sims, service);
  if (!nb) return [`${name} has no NodeBalancer at its status`];
  const ports = service.spec?.ports?.length ?? 0;
  if (nb.configs.length !== ports) return [`${name}: ${nb.configs.length} configs for ${ports} ports`];
  return nb.configs.filter((c) => c.nodes.length !== eligibleNodes)
    .map((c) => `${name}: port ${c.port} has ${c.nodes.length} backends, ${eligibleNodes} eligible Nodes`);
}

/** What still differs from the goal state; empty once converged. `idOf` may cache Linode ids. */
export function convergenceProblems(sims: Sims, idOf = (name: string) => linodeIdOf(sims, name)): string[] {
  const nodes = nodesOf(sims);
  const eligible = nodes.filter(isEligibleNode).length;
  return [
    ...nodes.flatMap((n) => nodeProblems(sims, n, idOf)),
    ...loadBalancersOf(sims).flatMap((s) => serviceProblems(sims, s, eligible)),
  ];
}
