/**
 * The controller table: every controller this release implements, by its `--controllers` name, with how its
 * declaration (`controllers/loop/runtime.ts`'s `ControllerSpec`) is built from the wired parts. A new
 * controller is one row here; `runControllers` runs the enabled rows, each on the one runtime, once per
 * leadership term.
 */
import { componentLogger, type Logger } from "../common/log.ts";
import { parseCidr4 } from "../common/net.ts";
import type { ControllerName } from "../config/config.ts";
import { secretReader } from "../kube/clients.ts";
import { type ControllerSpec, runController, type RuntimeDeps } from "../controllers/loop/runtime.ts";
import { cloudNodeController, kubeNodeWriter } from "../controllers/node/cloud_node.ts";
import { LIFECYCLE_EVENT_COMPONENT, nodeLifecycleController } from "../controllers/node/lifecycle.ts";
import { kubeConditionWriter, linodeRangeWriter, routeController } from "../controllers/route/controller.ts";
import {
  cachedIpv6Lookup,
  cachedSubnetLookup,
  kubePodCidrWriter,
  nodeIpamController,
} from "../controllers/nodeipam/controller.ts";
import { serviceDefaults } from "../controllers/service/annotations/defaults.ts";
import { SubnetResolver } from "../controllers/service/nodebalancer/subnets.ts";
import { kubeServiceWriter, serviceController } from "../controllers/service/service_controller.ts";
import type { CcmParts } from "./parts.ts";

/** One row of the table: a controller's name and how to declare it from the wired parts and its logger. */
export interface ControllerEntry {
  readonly name: ControllerName;
  // deno-lint-ignore no-explicit-any -- each row's memory type is its own; the runtime is generic over it
  readonly build: (parts: CcmParts, log: Logger, term: AbortSignal) => ControllerSpec<any>;
}

/** What both node controllers share: one Node informer, one instance cache, one fenced writer. */
function nodeDeps(parts: CcmParts, log: Logger) {
  const { nodes, instances, linode, kube, events, projection, metrics, clock } = parts;
  return {
    nodes,
    projection,
    instances,
    linode: linode.instances,
    writer: kubeNodeWriter(kube.core),
    events,
    log,
    metrics,
    clock,
  };
}

/** The service controller's deps: the Service informer, the NodeBalancer cache, the Linode writers. */
function serviceDeps(parts: CcmParts, log: Logger) {
  const { config, services, nodeBalancers, linode, kube, events, clock, metrics, orphanCheck } = parts;
  const identity = parts.clusterIdentity;
  if (!services || !nodeBalancers) throw new Error("Cannot run the service controller: it was not wired");
  const orphanDeps = {
    cache: nodeBalancers,
    nodeBalancers: linode.nodeBalancers,
    firewalls: linode.firewalls,
    services: { list: () => services.list(), trusted: () => services.synced && services.healthy },
    identity,
    events,
    log,
    metrics,
  };
  return {
    services,
    nodes: parts.plannedNodes,
    secrets: secretReader(kube.core),
    cache: nodeBalancers,
    nodeBalancers: linode.nodeBalancers,
    firewalls: linode.firewalls,
    reservedIps: linode.reservedIps,
    writer: kubeServiceWriter(kube.core),
    defaults: serviceDefaults(config),
    identity,
    subnets: new SubnetResolver(linode.vpcs, clock),
    events,
    orphans: {
      check: (writes: Parameters<typeof orphanCheck.check>[1]) => orphanCheck.check(orphanDeps, writes),
    },
    // The Linode writers bound to a term's signal, so a hand-over aborts the term's requests in flight.
    forTerm: (term: AbortSignal) => {
      const bound = linode.withSignal(term);
      return {
        nodeBalancers: bound.nodeBalancers,
        firewalls: bound.firewalls,
        reservedIps: bound.reservedIps,
      };
    },
    log,
    metrics,
    clock,
  };
}

/** Every implemented controller, in start order. */
export const CONTROLLERS: readonly ControllerEntry[] = [
  {
    name: "cloud-node",
    build: (parts, log) => {
      const { linode, nodes } = parts.config;
      const subnet = linode.externalSubnet;
      const externalSubnet = subnet ? parseCidr4(subnet) : undefined;
      // Validation refuses such a value at start; one that slips past it fails the term, loudly.
      if (subnet && !externalSubnet) throw new RangeError(`Invalid IPv4 CIDR ${subnet}`);
      return cloudNodeController(nodeDeps(parts, log), {
        externalSubnet,
        statusUpdateFrequencyMs: nodes.statusUpdateFrequencyMs,
        workers: nodes.concurrentSyncs,
      });
    },
  },
  {
    name: "cloud-node-lifecycle",
    build: (parts, log) => {
      // Its Events come from upstream's component name, as the Go CCM's do.
      const events = parts.events.forComponent(LIFECYCLE_EVENT_COMPONENT);
      const deps = { ...nodeDeps(parts, log), events };
      return nodeLifecycleController(deps, { monitorPeriodMs: parts.config.nodes.monitorPeriodMs });
    },
  },
  {
    name: "route",
    build: (parts, log) => {
      const { plannedNodes: nodes, vpcIps, vpcs, linode, kube, events, metrics, clock, config } = parts;
      const writer = linodeRangeWriter(linode);
      const conditions = kubeConditionWriter(kube.core);
      return routeController({ nodes, vpcIps, vpcs, writer, conditions, events, log, metrics, clock }, {
        clusterCidrs: config.routes.clusterCidrs,
        resyncMs: config.routes.reconciliationPeriodMs,
        retryListingAfterMs: config.linode.routesCacheTtlMs,
      });
    },
  },
  {
    name: "nodeipam",
    build: (parts, log) => {
      const { nodes, kube, events, metrics, clock, config, instances, vpcIpv6, vpcs, projection } = parts;
      const r = config.routes;
      const ipv6 = r.allocateIpv6NodeCidrs ? cachedIpv6Lookup(instances, vpcIpv6) : undefined;
      const subnet = cachedSubnetLookup(vpcs, config.vpc);
      const writer = kubePodCidrWriter(kube.core);
      return nodeIpamController({ nodes, writer, ipv6, subnet, events, projection, log, metrics, clock }, {
        clusterCidr: r.clusterCidrs[0] ?? "",
        nodeMaskIpv4: r.nodeCidrMaskSizeIpv4,
        nodeMaskIpv6: r.nodeCidrMaskSizeIpv6,
      });
    },
  },
  {
    name: "service",
    build: (parts, log) =>
      serviceController(serviceDeps(parts, log), { workers: parts.config.services.concurrentSyncs }),
  },
];

/** The `--controllers` names this release can run; others are accepted and reported as not yet available. */
export const IMPLEMENTED: ReadonlySet<ControllerName> = new Set(CONTROLLERS.map((c) => c.name));

/** Runs the controllers `--controllers` enables until `term` aborts (one leadership term). */
export async function runControllers(parts: CcmParts, term: AbortSignal): Promise<void> {
  const enabled = CONTROLLERS.filter((c) => parts.config.controllers.has(c.name));
  await Promise.all(enabled.map((c) => {
    const log = componentLogger(c.name);
    const deps: RuntimeDeps = {
      clock: parts.clock,
      metrics: parts.metrics,
      log,
      shadow: parts.shadow,
      executors: parts.executors,
    };
    return runController(c.build(parts, log, term), deps, term);
  }));
}
