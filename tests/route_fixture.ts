/**
 * Scenario fixture for the route controller: the CCM of `ccm_fixture.ts`, started through `runCcm` with
 * `--controllers=route --enable-route-controller` and a `FakeClock`, so every setting is the production
 * default unless a test passes a flag or variable. The world follows the Linode Cluster API layout: VPC
 * `cluster` with subnet `default` 10.0.0.0/8, pod CIDRs in 10.192.0.0/10.
 */
import type { CcmWorld, WorldOptions } from "./ccm_fixture.ts";
import { addNodes, kubeletNode, REGION, startWorld } from "./ccm_fixture.ts";

/** The cluster CIDR of the scenarios (Cluster API's pod range). */
export const CLUSTER_CIDR = "10.192.0.0/10";

/** The route key of a legacy interface write. */
export const PUT_CONFIG_INTERFACE = "PUT /v4/linode/instances/{id}/configs/{id}/interfaces/{id}";
/** The route key of a Linode interface write. */
export const PUT_LINODE_INTERFACE = "PUT /v4/linode/instances/{id}/interfaces/{id}";
/** The route key of one VPC listing page. */
export const LIST_VPC_IPS = "GET /v4/vpcs/{id}/ips";

/**
 * Fake time per step while waiting for the CCM: the route controller's least time between two passes
 * (250 ms), so each coalesced pass, retry and backoff wakes in a step of its own.
 */
const STEP_MS = 250;

/**
 * The route controller as an operator enables it. A test adds flags after these (list flags such as
 * `--vpc-names` append, as with pflag).
 */
const ROUTE_FLAGS = [
  "--controllers=route",
  "--enable-route-controller",
  `--cluster-cidr=${CLUSTER_CIDR}`,
  "--vpc-names=cluster",
  "--subnet-names=default",
];

/** The CCM with the route controller, against both emulators, and builders for a routed cluster. */
export interface RouteWorld extends CcmWorld {
  /** The VPC `cluster` and its subnet `default`. */
  readonly vpcId: number;
  readonly subnetId: number;
  /** A running Linode in the VPC `cluster` (`ipRanges` seeds ranges on its interface). */
  addLinode(label: string, ipRanges?: string[]): number;
  /** Registers a Node for `linodeId` (providerID set, as after initialisation), with an optional pod CIDR. */
  addNode(name: string, linodeId: number, podCidr?: string): void;
  /** The Node's NetworkUnavailable condition as `status/reason`. */
  condition(name: string): string | undefined;
  /**
   * Route passes that ended, by result (`success`, `rate-limited`, ...); `success` (the default) counts the
   * passes the runtime skipped too (nothing they read changed since a settled pass): each ended a resync.
   */
  passes(result?: string): number;
}

/** Starts both emulators with the VPC `cluster`; `start()` then runs the CCM with the route controller. */
export async function startRouteWorld(options: WorldOptions = {}): Promise<RouteWorld> {
  const world = await startWorld({ ...options, flags: [...ROUTE_FLAGS, ...(options.flags ?? [])] });
  const vpc = world.linode.world.createVpc({
    label: "cluster",
    region: REGION,
    subnets: [{ label: "default", ipv4: "10.0.0.0/8" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const reconciles = world.metrics.counter("ccm_reconciles_total", "", ["controller", "result"]);
  const skipped = world.metrics.counter("ccm_passes_skipped_total", "", ["controller"]);
  const extra: Omit<RouteWorld, keyof CcmWorld> = {
    vpcId: vpc.id,
    subnetId,
    addLinode(label, ipRanges) {
      return world.linode.world.addInstance({
        label,
        region: REGION,
        vpc: { vpcId: vpc.id, subnetId, ipRanges },
      }).id;
    },
    addNode(name, linodeId, podCidr) {
      addNodes(world, kubeletNode(name, { providerID: `linode://${linodeId}`, taints: [], podCidr }));
    },
    condition(name) {
      const c = world.node(name)?.status?.conditions?.find((c) => c.type === "NetworkUnavailable");
      return c && `${c.status}/${c.reason}`;
    },
    passes: (result = "success") =>
      reconciles.get({ controller: "route", result }) +
      (result === "success" ? skipped.get({ controller: "route" }) : 0),
  };
  return Object.assign(world, extra);
}

/** Moves fake time until `condition` holds (passes, retries and backoffs run on it); returns the time taken. */
export function until(world: CcmWorld, condition: () => boolean, what: string): Promise<number> {
  return world.advanceUntil(condition, { what, stepMs: STEP_MS });
}

/**
 * Moves fake time through `count` resyncs (`--route-reconciliation-period`), each ending in a pass, or in a pass
 * the runtime skipped because nothing it reads changed since the last settled one.
 */
export async function resyncs(world: RouteWorld, count: number): Promise<void> {
  for (let i = 1; i <= count; i++) {
    const before = world.passes();
    await world.tick(world.config.routes.reconciliationPeriodMs, 1_000);
    await world.waitFor(() => world.passes() > before, { what: `the pass of resync ${i} of ${count}` });
  }
}
