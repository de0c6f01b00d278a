/**
 * The Go CCM's cost and timings for the work the CCM-process benchmarks measure, derived from its source
 * (linode/linode-cloud-controller-manager: cloud/linode/services/instances.go, services/vpc.go,
 * route_controller.go, loadbalancers.go, services/firewalls.go) and the upstream controllers it runs
 * (kubernetes/cloud-provider: controllers/route, controllers/service, controllers/node, app/
 * controllermanager.go), and checked against the route controller PR's measurement
 * (`/work/shared/reference/route-controller-pr.txt`: an instance listing every 20 s). A MODEL, not a
 * measurement: no Go binary and no real API run here. Each figure has a `why` line for the report.
 */

/** The Go CCM's settings that the figures depend on (its defaults and linodego's paging). */
export const GO = {
  /** `LINODE_INSTANCE_CACHE_TTL` default (services/instances.go NewInstances). */
  instanceTtlSec: 15,
  /** `LINODE_ROUTES_CACHE_TTL_SECONDS` default (route_controller.go newRoutes). */
  routeTtlSec: 60,
  /** `--route-reconciliation-period` default: upstream's route controller lists routes this often. */
  routePeriodSec: 10,
  /** ListInstances sends page_size 500 (client.MaxPageSize). */
  instancePageSize: 500,
  /** The VPC IP and NodeBalancer node listings send no page size: the API's default of 100. */
  defaultPageSize: 100,
  /** `--leader-elect-lease-duration`, `-retry-period` defaults (client-go). */
  leaseDurationSec: 15,
  retryPeriodSec: 2,
} as const;

/** `/vpcs/{id}/ips` holds two entries per routed Node: its VPC address and its pod CIDR range. */
const VPC_ENTRIES_PER_NODE = 2;

/**
 * The instance cache refreshes every 20 s with the route controller on: its 10 s passes find the 15 s cache
 * expired every second pass (the PR's log shows the listing every 20 s).
 */
export const GO_INSTANCE_REFRESH_SEC = 2 * GO.routePeriodSec;

/**
 * The route cache refreshes every 70 s: its 60 s TTL is checked by the 10 s passes and its `lastUpdate` is
 * set after the listing, so the pass 60 s later still finds it fresh and the 7th pass refreshes.
 */
export const GO_ROUTE_CACHE_SEC = GO.routeTtlSec + GO.routePeriodSec;

function pages(entries: number, pageSize: number): number {
  return Math.max(1, Math.ceil(entries / pageSize));
}

/** Calls of one instance-cache refresh: ListInstances, then per VPC its IPv4 and IPv6 address listings. */
export function goInstanceRefreshCalls(nodes: number): number {
  return pages(nodes, GO.instancePageSize) + pages(VPC_ENTRIES_PER_NODE * nodes, GO.defaultPageSize) + 1;
}

/** Linode calls per minute of a steady cluster with one VPC and routes; unchanged Services add none. */
export function goSteadyCallsPerMin(nodes: number): number {
  const routeCache = pages(VPC_ENTRIES_PER_NODE * nodes, GO.defaultPageSize);
  return (60 / GO_INSTANCE_REFRESH_SEC) * goInstanceRefreshCalls(nodes) +
    (60 / GO_ROUTE_CACHE_SEC) * routeCache;
}

/**
 * Calls of one UpdateLoadBalancer (a node set sync) for a Service with `ports` ports and `backends` Nodes:
 * ListNodeBalancers filtered by the status IP, ListNodeBalancerFirewalls, ListNodeBalancerConfigs, then per
 * port ListNodeBalancerNodes (100 a page) and RebuildNodeBalancerConfig.
 */
export function goNodeSetSyncCalls(backends: number, ports = 1): number {
  return 3 + ports * (pages(backends, GO.defaultPageSize) + 1);
}

/**
 * Node set syncs per replaced pool Node: the deletion, the new Node (upstream counts it before it has a
 * providerID; only the ToBeDeleted taint keeps a Node out) and its providerID being set.
 */
export const GO_SYNCS_PER_REPLACEMENT = 3;

/** Linode calls per minute with `fraction` of the Nodes replaced each minute (pool Nodes sync every LB). */
export function goChurnCallsPerMin(
  nodes: number,
  o: { services: number; backends: number; fraction: number },
): number {
  const replacedPerMin = o.fraction * nodes;
  const poolShare = o.backends / nodes;
  const lbCalls = poolShare * GO_SYNCS_PER_REPLACEMENT * o.services * goNodeSetSyncCalls(o.backends);
  // One interface PUT per new Node; a deleted Linode takes its range with it.
  return goSteadyCallsPerMin(nodes) + replacedPerMin * (1 + lbCalls);
}

/** p50, p95 and max of a uniform wait over [lo, hi] seconds, in milliseconds. */
function uniformMs(lo: number, hi: number): { p50: number; p95: number; max: number } {
  return { p50: 1000 * (lo + (hi - lo) / 2), p95: 1000 * (lo + 0.95 * (hi - lo)), max: 1000 * hi };
}

/** A pod CIDR waits for the next 10 s route pass (its Linode already in the route cache). */
export const GO_ROUTE_LATENCY_MS = uniformMs(0, GO.routePeriodSec);

/**
 * A new Node's Linode is found once the instance cache is older than its TTL (the node controller's retries
 * refresh it then); with the route controller refreshing every 20 s the wait is 0 to 15 s.
 */
export const GO_INIT_LATENCY_MS = uniformMs(0, GO.instanceTtlSec);

/**
 * Takeover after the leader dies, in ms: the standby waits a lease duration from the last renew it saw and
 * polls every retry period × [1, 2.2), so from leaseDuration − retryPeriod to leaseDuration + 2.2 ×
 * retryPeriod. The Go CCM does not release its Lease on SIGTERM (upstream's RunOrDie without
 * ReleaseOnCancel), so SIGTERM costs the same.
 */
export function goTakeoverMs(timing: { leaseDurationMs: number; retryPeriodMs: number }): {
  min: number;
  max: number;
} {
  return {
    min: timing.leaseDurationMs - timing.retryPeriodMs,
    max: timing.leaseDurationMs + 2.2 * timing.retryPeriodMs,
  };
}

/** Calls for a new LoadBalancer Service: no status yet, so no lookup; one CreateNodeBalancer with its configs. */
export const GO_CREATE_CALLS = 1;

/** Node set syncs for a Node joining (added without providerID, then given one) and leaving. */
export const GO_SYNCS_PER_JOIN = 2;
export const GO_SYNCS_PER_LEAVE = 1;

/** The `why` line of each Go figure, numbered in the report. */
export const GO_WHY = {
  steady: `${60 / GO_INSTANCE_REFRESH_SEC}/min x (ceil(N/500) instance pages + ceil(2N/100) VPC IP pages ` +
    `+ 1 IPv6 page) [instance cache, every ${GO_INSTANCE_REFRESH_SEC} s: 10 s route passes vs 15 s TTL, as ` +
    `the route controller PR logged] + 60/${GO_ROUTE_CACHE_SEC} x ceil(2N/100) [route cache: 60 s TTL seen ` +
    `by 10 s passes]; VPC IP listings send no page_size (API default 100); 2 entries per Node (address, range)`,
  service: "0: upstream's service controller syncs a Service only when it or the node set changes " +
    "(resyncs of unchanged objects enqueue nothing); the Go CCM's own service controller handles deletions only",
  churn: `steady + 0.05N/min x (1 interface PUT + pool share x ${GO_SYNCS_PER_REPLACEMENT} node set syncs ` +
    "[Node deleted, added without providerID, providerID set] x Services x (3 + ceil(pool/100) + 1) " +
    "[ListNodeBalancers by IP, firewalls, configs, nodes at 100/page, rebuild]); pool = min(N, 500)",
  route: "next pass of upstream's route controller (every 10 s, uniform wait) when the Go CCM's route " +
    "cache holds the Linode; up to 70 s more when the Linode is newer than that cache",
  init: "the new Linode is found when the node controller's retry finds the instance cache older than its " +
    "15 s TTL: a uniform 0-15 s wait (plus API time)",
  events:
    `a join is ${GO_SYNCS_PER_JOIN} node set syncs (added without providerID, providerID set), a leave ` +
    `${GO_SYNCS_PER_LEAVE}, each (3 + ceil(pool/100) + 1) calls per Service, plus 1 interface PUT per join; a new ` +
    `Service is ${GO_CREATE_CALLS} CreateNodeBalancer with its configs and nodes inline (no status to look up)`,
  takeover: "client-go with the same timings: from leaseDuration - retryPeriod to leaseDuration + 2.2 x " +
    "retryPeriod (the lease duration counts from the last renew the standby saw; it polls every retry " +
    "period x [1, 2.2)); the Go CCM keeps its Lease on SIGTERM (RunOrDie without ReleaseOnCancel), so " +
    "SIGTERM waits for expiry too",
  notModelled:
    "not modelled: depends on the real API's latency, or needs the Go binary, which does not run here",
  memory: "not measured (no Go binary here); its Helm chart's example asks 100 MiB and caps at 1,000 MiB",
} as const;
