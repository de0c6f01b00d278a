/**
 * The `service` controller as one process runs it: its Service and Secret informers, the NodeBalancer cache
 * and the controller over the shared Linode client, Node informer and Event recorder. `wiring/parts.ts`
 * runs the informers with the process; `ccm.ts` runs the controller for each leadership term.
 */
import type { KubeConfig, V1Service } from "@kubernetes/client-node";
import { NodeBalancerCache } from "../../cache/nodebalancers.ts";
import type { Clock } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Config } from "../../config/types.ts";
import type { KubeClients } from "../../kube/clients.ts";
import { secretReader, serviceSource } from "../../kube/clients.ts";
import type { EventSink } from "../../kube/events.ts";
import { Informer } from "../../kube/informer.ts";
import type { LinodeClient } from "../../linode/client.ts";
import type { Registry } from "../../common/metrics.ts";
import { serviceDefaults } from "./annotations/defaults.ts";
import { kubeServiceWriter, startServiceController } from "./service_controller.ts";
import { SubnetResolver } from "./nodebalancer/subnets.ts";
import { OrphanCheck, type OrphanedNodeBalancer } from "./orphans.ts";
import { ClusterIdentity } from "./identity.ts";
import type { PlanRecorder } from "../loop/plan.ts";
import type { NodeSource } from "../node/projected_nodes.ts";

/** What the process already has. */
export interface ServiceWiringDeps {
  kc: KubeConfig;
  kube: KubeClients;
  linode: LinodeClient;
  /** The Nodes to decide backends from (in dry run, with held initialisations applied). */
  nodes: NodeSource;
  events: EventSink;
  /** Where syncs name their writes (`--dry-run` holds them). */
  plan?: PlanRecorder;
  clock: Clock;
  metrics: Registry;
  logFor: (component: string) => Logger;
}

/** The wired controller: informers to run with the process, the controller to run per term. */
export interface ServiceWiring {
  readonly nodeBalancers: NodeBalancerCache;
  /** Services: a term's controllers wait for it to sync, and `/readyz` checks it. */
  readonly services: Informer<V1Service>;
  /** Runs the controller for one leadership term. */
  run(term: AbortSignal): Promise<void>;
  /** The orphaned NodeBalancers found by the last check (for `/plan`). */
  orphans(): readonly OrphanedNodeBalancer[];
  /** This cluster's identity in the Linode account (the `kube-system` Namespace UID). */
  readonly identity: ClusterIdentity;
}

/** Wires the `service` controller from `config` and the process's clients. */
export function wireServiceController(config: Config, deps: ServiceWiringDeps): ServiceWiring {
  const { clock, metrics } = deps;
  const informerOptions = { log: deps.logFor("informer"), metrics, clock };
  const services = new Informer(deps.kc, serviceSource(deps.kube.core), informerOptions);
  const nodeBalancers = new NodeBalancerCache(deps.linode.nodeBalancers, {
    clock,
    metrics,
    region: config.linode.region,
    ttlMs: config.linode.instanceCacheTtlMs,
  });
  const identity = new ClusterIdentity({
    namespaceUid: async (name) => (await deps.kube.core.readNamespace({ name })).metadata?.uid ?? "",
  });
  const orphanCheck = new OrphanCheck({
    clusterName: config.clusterName,
    cleanup: config.services.cleanupOrphanedNodeBalancers,
  });
  const orphanDeps = {
    cache: nodeBalancers,
    nodeBalancers: deps.linode.nodeBalancers,
    firewalls: deps.linode.firewalls,
    services: { list: () => services.list(), trusted: () => services.synced && services.healthy },
    identity,
    events: deps.events,
    log: deps.logFor("service"),
    metrics,
  };
  const controller = startServiceController({
    services,
    nodes: deps.nodes,
    secrets: secretReader(deps.kube.core),
    cache: nodeBalancers,
    nodeBalancers: deps.linode.nodeBalancers,
    firewalls: deps.linode.firewalls,
    reservedIps: deps.linode.reservedIps,
    writer: kubeServiceWriter(deps.kube.core),
    defaults: serviceDefaults(config),
    identity,
    subnets: new SubnetResolver(deps.linode.vpcs, clock),
    events: deps.events,
    plan: deps.plan,
    orphans: { check: (plan) => orphanCheck.check(orphanDeps, plan) },
    forTerm: (term) => {
      const linode = deps.linode.withSignal(term);
      return {
        nodeBalancers: linode.nodeBalancers,
        firewalls: linode.firewalls,
        reservedIps: linode.reservedIps,
      };
    },
    log: deps.logFor("service"),
    metrics,
    clock,
  }, { workers: config.services.concurrentSyncs });
  return {
    nodeBalancers,
    services,
    run: (term) => controller.run(term),
    orphans: () => orphanCheck.list(),
    identity,
  };
}
