/**
 * The controller table: every controller this release implements, by its `--controllers` name, with how its
 * declaration (`controllers/loop/runtime.ts`'s `ControllerSpec`) is built from the wired parts. A new
 * controller is one row here; `runControllers` runs the enabled rows, each on the one runtime, once per
 * leadership term.
 */
import { componentLogger, type Logger } from "../common/log.ts";
import { parseCidr4 } from "../common/net.ts";
import type { Config, ControllerName } from "../config/config.ts";
import { secretReader } from "../kube/clients.ts";
import { type ControllerSpec, runController, type RuntimeDeps } from "../controllers/loop/runtime.ts";
import { cloudNodeController, kubeNodeWriter } from "../controllers/node/cloud_node.ts";
import { nodeLifecycleController } from "../controllers/node/lifecycle.ts";
import { kubeConditionWriter, linodeRangeWriter, routeController } from "../controllers/route/controller.ts";
import {
  cachedIpv6Lookup,
  cachedSubnetLookup,
  kubePodCidrWriter,
  nodeIpamController,
} from "../controllers/nodeipam/controller.ts";
import { serviceDefaults } from "../controllers/service/annotations/spec.ts";
import { SubnetResolver } from "../controllers/service/decide.ts";
import { kubeServiceWriter, serviceController } from "../controllers/service/controller.ts";
import type { CcmParts } from "./parts.ts";

/**
 * One row of the table: a controller's name, when it runs (default: when `--controllers` enables it), and how
 * to declare it from the wired parts and its logger.
 */
export interface ControllerEntry {
  readonly name: ControllerName | "node-metadata";
  readonly runs?: (config: Config) => boolean;
  // deno-lint-ignore no-explicit-any -- each row's memory type is its own; the runtime is generic over it
  readonly build: (parts: CcmParts, log: Logger, term: AbortSignal) => ControllerSpec<any>;
}

/**
 * The `source.component` of each controller's Events: upstream's recorders' names (k8s.io/cloud-provider
 * v0.35.4, each controller's `NewRecorder`), and the Go CCM's node IPAM allocator's (`cloud_allocator.go`).
 */
export const EVENT_COMPONENTS: Readonly<Record<ControllerName, string>> = {
  "cloud-node": "cloud-node-controller",
  "cloud-node-lifecycle": "cloud-node-lifecycle-controller",
  route: "route_controller",
  service: "service-controller",
  nodeipam: "cidrAllocator",
};

/** What both node controllers share: one Node informer, one instance cache, one fenced writer. */
function nodeDeps(parts: CcmParts, log: Logger, controller: ControllerName) {
  const { nodes, instances, linode, kube, events, projection, metrics, clock } = parts;
  return {
    nodes,
    projection,
    instances,
    linode: linode.instances,
    writer: kubeNodeWriter(kube.core),
    events: events.for(EVENT_COMPONENTS[controller]),
    log,
    metrics,
    clock,
  };
}

/** The service controller's deps: the Service informer, the NodeBalancer cache, the Linode writers. */
function serviceDeps(parts: CcmParts, log: Logger) {
  const { config, services, nodeBalancers, linode, kube, clock, metrics, orphanCheck } = parts;
  const events = parts.events.for(EVENT_COMPONENTS.service);
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

/** `LINODE_EXTERNAL_SUBNET` parsed; validation refuses a bad value at start, one that slips past fails the term. */
function externalSubnetOf(config: Config) {
  const subnet = config.linode.externalSubnet;
  const externalSubnet = subnet ? parseCidr4(subnet) : undefined;
  if (subnet && !externalSubnet) throw new RangeError(`Invalid IPv4 CIDR ${subnet}`);
  return externalSubnet;
}

/** Every implemented controller, in start order. */
export const CONTROLLERS: readonly ControllerEntry[] = [
  {
    name: "cloud-node",
    build: (parts, log) =>
      cloudNodeController(nodeDeps(parts, log, "cloud-node"), {
        externalSubnet: externalSubnetOf(parts.config),
        statusUpdateFrequencyMs: parts.config.nodes.statusUpdateFrequencyMs,
        workers: parts.config.nodes.concurrentSyncs,
      }),
  },
  {
    // The Go CCM's own node controller, which its cloud's `Initialize` starts whatever `--controllers` says:
    // with upstream's cloud-node off, the host-uuid label, private-ip/public-ipv6 annotations and providerID.
    name: "node-metadata",
    runs: (config) => config.nodes.metadataUpdates && !config.controllers.has("cloud-node"),
    build: (parts, log) =>
      cloudNodeController(nodeDeps(parts, log, "cloud-node"), {
        externalSubnet: externalSubnetOf(parts.config),
        statusUpdateFrequencyMs: parts.config.nodes.statusUpdateFrequencyMs,
        workers: parts.config.nodes.concurrentSyncs,
        metadataOnly: true,
      }),
  },
  {
    name: "cloud-node-lifecycle",
    build: (parts, log) =>
      nodeLifecycleController(nodeDeps(parts, log, "cloud-node-lifecycle"), {
        monitorPeriodMs: parts.config.nodes.monitorPeriodMs,
      }),
  },
  {
    name: "route",
    build: (parts, log) => {
      const { plannedNodes: nodes, vpcIps, vpcs, linode, kube, metrics, clock, config } = parts;
      const events = parts.events.for(EVENT_COMPONENTS.route);
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
      const { nodes, kube, metrics, clock, config, instances, vpcIpv6, vpcs, projection } = parts;
      const events = parts.events.for(EVENT_COMPONENTS.nodeipam);
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
export const IMPLEMENTED: ReadonlySet<string> = new Set(CONTROLLERS.map((c) => c.name));

/** Runs the controllers `--controllers` enables until `term` aborts (one leadership term). */
export async function runControllers(parts: CcmParts, term: AbortSignal): Promise<void> {
  const config = parts.config;
  const enabled = CONTROLLERS.filter((c) =>
    c.runs ? c.runs(config) : c.name !== "node-metadata" && config.controllers.has(c.name)
  );
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
