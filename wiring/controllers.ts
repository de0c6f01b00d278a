/**
 * The controller table: every controller this release implements, by its `--controllers` name, with the
 * parts it takes. A new controller is one row here (its deps picked from `CcmParts`, its options from the
 * Config); `runCcm` runs the enabled rows once per leadership term.
 */
import { componentLogger, type Logger } from "../common/log.ts";
import type { ControllerName } from "../config/config.ts";
import { parseIpv4Cidr } from "../controllers/node/addresses.ts";
import { startNodeController } from "../controllers/node/cloud_node.ts";
import { kubeNodeWriter } from "../controllers/node/node_writer.ts";
import { startNodeLifecycleController } from "../controllers/node/lifecycle.ts";
import {
  kubeConditionWriter,
  linodeRangeWriter,
  startRouteController,
} from "../controllers/route/controller.ts";
import { kubePodCidrWriter, startNodeIpamController } from "../controllers/nodeipam/controller.ts";
import { cachedIpv6Lookup, cachedSubnetLookup } from "../controllers/nodeipam/lookup.ts";
import type { CcmParts } from "./parts.ts";

/** A controller as the CCM runs it: one task per leadership term, ended by aborting `signal`. */
export interface Controller {
  run(signal: AbortSignal): Promise<void>;
}

/** One row of the table: a controller's name and how to build it from the wired parts and its logger. */
export interface ControllerEntry {
  readonly name: ControllerName;
  readonly build: (parts: CcmParts, log: Logger) => Controller;
}

/** What both node controllers share: one Node informer, one instance cache, one fenced writer. */
function nodeDeps(parts: CcmParts, log: Logger) {
  const { nodes, instances, linode, kube, events, plan, projection, metrics, clock } = parts;
  return {
    nodes,
    projection,
    instances,
    linode: linode.instances,
    writer: kubeNodeWriter(kube.core),
    events,
    plan,
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
      return startNodeController(nodeDeps(parts, log), {
        externalSubnet: linode.externalSubnet ? parseIpv4Cidr(linode.externalSubnet) : undefined,
        statusUpdateFrequencyMs: nodes.statusUpdateFrequencyMs,
        workers: nodes.concurrentSyncs,
      });
    },
  },
  {
    name: "cloud-node-lifecycle",
    build: (parts, log) =>
      startNodeLifecycleController(nodeDeps(parts, log), {
        monitorPeriodMs: parts.config.nodes.monitorPeriodMs,
      }),
  },
  {
    name: "route",
    build: (parts, log) => {
      const { plannedNodes: nodes, vpcIps, vpcs, linode, kube, events, plan, metrics, clock, config } = parts;
      const writer = linodeRangeWriter(linode);
      const conditions = kubeConditionWriter(kube.core);
      const deps = { nodes, vpcIps, vpcs, writer, conditions, events, plan, log, metrics, clock };
      return startRouteController(deps, {
        clusterCidrs: config.routes.clusterCidrs,
        resyncMs: config.routes.reconciliationPeriodMs,
        retryListingAfterMs: config.linode.routesCacheTtlMs,
      });
    },
  },
  {
    name: "nodeipam",
    build: (parts, log) => {
      const { nodes, kube, events, plan, metrics, clock, config, instances, vpcIpv6, vpcs, projection } =
        parts;
      const r = config.routes;
      const ipv6 = r.allocateIpv6NodeCidrs ? cachedIpv6Lookup(instances, vpcIpv6) : undefined;
      const subnet = cachedSubnetLookup(vpcs, config.vpc);
      const writer = kubePodCidrWriter(kube.core);
      return startNodeIpamController({
        nodes,
        writer,
        ipv6,
        subnet,
        events,
        plan,
        projection,
        log,
        metrics,
        clock,
      }, {
        clusterCidr: r.clusterCidrs[0] ?? "",
        nodeMaskIpv4: r.nodeCidrMaskSizeIpv4,
        nodeMaskIpv6: r.nodeCidrMaskSizeIpv6,
      });
    },
  },
  {
    name: "service",
    // Wired with the parts (its Service and Secret informers run with the process, not per term).
    build: (parts) => {
      if (!parts.service) throw new Error("Cannot run the service controller: it was not wired");
      return parts.service;
    },
  },
];

/** The `--controllers` names this release can run; others are accepted and reported as not yet available. */
export const IMPLEMENTED: ReadonlySet<ControllerName> = new Set(CONTROLLERS.map((c) => c.name));

/** Runs the controllers `--controllers` enables until `term` aborts (one leadership term). */
export async function runControllers(parts: CcmParts, term: AbortSignal): Promise<void> {
  const enabled = CONTROLLERS.filter((c) => parts.config.controllers.has(c.name));
  await Promise.all(enabled.map((c) => c.build(parts, componentLogger(c.name)).run(term)));
}
