/**
 * Typed flag values → the flag-only sections of `Config`. Each section parser checks its own flags and
 * pushes one line per problem, so `parseConfig` can report every problem at once. `--controllers` is read in
 * `controllers.ts`.
 */
import { levelForVerbosity, type LogFormat } from "../common/log.ts";
import { FLAGS, type Flags, formatGoDuration, type ParsedArgs } from "./flags.ts";
import type { FlagNameOf } from "./flag_table.ts";
import type { LinodeEnv } from "./env.ts";
import { cidrFamily } from "../common/net.ts";
import {
  checkDnsLabel,
  checkDnsSubdomain,
  checkVpcLabels,
  MAX_TIMER_MS,
  MIN_TIMER_MS,
  splitClusterCidrs,
} from "./checks.ts";
import { chooseControllers } from "./controllers.ts";
import {
  type Config,
  type DelegatedAuthConfig,
  type LeaderElectionConfig,
  type LinodeConfig,
  type LogConfig,
  NODEBALANCER_TYPES,
  type NodeBalancerType,
  type RouteConfig,
  type ServeConfig,
  type ServiceConfig,
  type VpcConfig,
} from "./types.ts";

function isOneOf<T extends string>(value: string, allowed: readonly T[]): value is T {
  return (allowed as readonly string[]).includes(value);
}

function oneOf<T extends string>(
  flags: Flags,
  name: FlagNameOf<"string">,
  allowed: readonly [T, ...T[]],
  p: string[],
): T {
  const value = flags.get(name);
  if (isOneOf(value, allowed)) return value;
  p.push(`--${name}: invalid value "${value}" (use ${allowed.join(" or ")})`);
  return allowed[0];
}

/**
 * `--default-nodebalancer-type`: the API's three plan types (api-v4 `NodeBalancerType`), in any case, since
 * the Go CCM's help spells the third `premium_40GB` (it passes the flag on unchecked; the API would refuse
 * anything else at the first create).
 */
function nodeBalancerType(flags: Flags, p: string[]): NodeBalancerType {
  const value = flags.get("default-nodebalancer-type");
  const lower = value.toLowerCase();
  if (isOneOf(lower, NODEBALANCER_TYPES)) return lower;
  p.push(`--default-nodebalancer-type: invalid value "${value}" (use ${NODEBALANCER_TYPES.join(", ")})`);
  return "common";
}

/** A duration that becomes a timer: 1 ms to 240 h (a longer timer would fire at once). */
function timerMs(flags: Flags, name: FlagNameOf<"duration">, p: string[]): number {
  const ms = flags.get(name);
  if (ms >= MIN_TIMER_MS && ms <= MAX_TIMER_MS) return ms;
  const why = ms <= 0 ? "must be above 0" : ms < MIN_TIMER_MS ? "is below 1ms" : "is too long";
  const range = `use ${formatGoDuration(MIN_TIMER_MS)} to ${formatGoDuration(MAX_TIMER_MS)}, e.g. 10s`;
  p.push(`--${name}: ${why}, got ${formatGoDuration(ms)} (${range})`);
  return ms;
}

function count(flags: Flags, name: FlagNameOf<"int">, min: number, max: number, p: string[]): number {
  const n = flags.get(name);
  if (n < min || n > max) p.push(`--${name}: ${n} is out of range (use ${min} to ${max})`);
  return n;
}

function nullIfEmpty(text: string): string | null {
  return text === "" ? null : text;
}

function leaderElection(flags: Flags, p: string[]): LeaderElectionConfig {
  const enabled = flags.get("leader-elect");
  const lease = timerMs(flags, "leader-elect-lease-duration", p);
  const renew = timerMs(flags, "leader-elect-renew-deadline", p);
  const retry = timerMs(flags, "leader-elect-retry-period", p);
  // client-go's NewLeaderElector refuses these combinations, and so does lease/elector.ts.
  if (enabled && lease <= renew) {
    p.push(
      `--leader-elect-lease-duration: must exceed --leader-elect-renew-deadline (${
        formatGoDuration(renew)
      }), ` +
        `got ${formatGoDuration(lease)}`,
    );
  }
  if (enabled && renew <= 1.2 * retry) {
    p.push(
      `--leader-elect-renew-deadline: must exceed 1.2 × --leader-elect-retry-period (${
        formatGoDuration(retry)
      }), got ${formatGoDuration(renew)}`,
    );
  }
  const lock = flags.get("leader-elect-resource-lock");
  if (lock !== "leases") p.push(`--leader-elect-resource-lock: unsupported lock "${lock}" (only leases)`);
  const namespace = flags.get("leader-elect-resource-namespace");
  const name = flags.get("leader-elect-resource-name");
  if (!namespace) p.push("--leader-elect-resource-namespace: must not be empty (default kube-system)");
  else checkDnsLabel("--leader-elect-resource-namespace", namespace, p);
  if (!name) p.push("--leader-elect-resource-name: must not be empty (default cloud-controller-manager)");
  else checkDnsSubdomain("--leader-elect-resource-name", name, p);
  return {
    enabled,
    leaseDurationMs: lease,
    renewDeadlineMs: renew,
    retryPeriodMs: retry,
    resourceLock: "leases",
    namespace,
    name,
  };
}

function vpc(flags: Flags, p: string[], warnings: string[]): VpcConfig {
  let names = flags.get("vpc-names");
  const legacy = flags.get("vpc-name").trim();
  if (legacy !== "" && names.length > 0) {
    p.push("--vpc-name, --vpc-names: both are set (use only --vpc-names)");
  } else if (legacy !== "") {
    names = [legacy];
    warnings.push("--vpc-name is deprecated: use --vpc-names");
  }
  const ids = flags.get("vpc-ids");
  const subnetIds = flags.get("subnet-ids");
  for (const [flag, list] of [["vpc-ids", ids], ["subnet-ids", subnetIds]] as const) {
    for (const id of list) if (id <= 0) p.push(`--${flag}: invalid ID ${id} (use positive integers)`);
  }
  // The Go CCM's validateVPCSubnetFlags, in its order and with its texts (operators search for them).
  if (ids.length > 0 && names.length > 0) {
    p.push("--vpc-ids, --vpc-names: cannot have both vpc-ids and vpc-names set");
  }
  if (ids.length > 0 && subnetIds.length === 0) p.push("--vpc-ids: vpc-ids cannot be set without subnet-ids");
  if (subnetIds.length > 0 && ids.length === 0) {
    p.push("--subnet-ids: subnet-ids cannot be set without vpc-ids");
  }
  const routes = flags.get("enable-route-controller");
  if (routes && names.length === 0 && ids.length === 0) {
    // Go says the first when --subnet-names is given, the second (newRoutes) otherwise.
    p.push(
      flags.given("subnet-names")
        ? "--subnet-names: subnet-names cannot be set without vpc-names"
        : "--enable-route-controller: cannot enable route controller as vpc-names is empty (set --vpc-names or --vpc-ids)",
    );
  }
  if (subnetIds.length > 0 && flags.given("subnet-names")) {
    warnings.push("--subnet-names is ignored: --subnet-ids wins");
  }
  const subnetNames = subnetIds.length > 0 ? [] : flags.get("subnet-names");
  checkVpcLabels(legacy !== "" && !flags.given("vpc-names") ? "--vpc-name" : "--vpc-names", names, p);
  checkVpcLabels("--subnet-names", subnetNames, p);
  return { names, ids, subnetNames, subnetIds };
}

function clusterCidrs(flags: Flags, p: string[]): string[] {
  const cidrs = splitClusterCidrs(flags.get("cluster-cidr"));
  const families = cidrs.map(cidrFamily);
  cidrs.forEach((c, i) => {
    if (families[i] === undefined) {
      p.push(`--cluster-cidr: invalid CIDR "${c}" (use e.g. 10.192.0.0/10, or IPv4,IPv6 for dual stack)`);
    }
  });
  if (cidrs.length > 2 || (cidrs.length === 2 && families[0] === families[1])) {
    p.push("--cluster-cidr: at most one IPv4 and one IPv6 CIDR");
  }
  return cidrs;
}

/** Upstream's `clusterSubnetMaxDiff`: a cluster CIDR is cut into at most 2^16 Node ranges. */
const MAX_MASK_DIFF = 16;

/**
 * What stops node IPAM from starting, as the Go CCM checks it (`startNodeIpamController`): one IPv4
 * `--cluster-cidr`, no larger than the per-Node size, and (upstream's `cidrset` limit) at most 16 bits finer.
 */
function checkNodeIpam(cidrs: readonly string[], nodeMaskIpv4: number, p: string[]): void {
  const [cidr, ...more] = cidrs;
  if (cidr === undefined) return; // reported as "needs --cluster-cidr"
  if (more.length > 0) {
    p.push(
      "--cluster-cidr: too many cluster CIDRs for node IPAM (one IPv4 CIDR; IPv6 ranges come from the VPC)",
    );
    return;
  }
  if (cidrFamily(cidr) !== 4) {
    p.push(
      `--cluster-cidr: ${cidr} is not IPv4 (node IPAM allocates IPv4 from it; IPv6 ranges come from the VPC)`,
    );
    return;
  }
  const clusterPrefix = Number(cidr.split("/")[1]);
  if (clusterPrefix > nodeMaskIpv4) {
    p.push(`--node-cidr-mask-size-ipv4: /${nodeMaskIpv4} is larger than the cluster CIDR ${cidr}`);
  } else if (nodeMaskIpv4 - clusterPrefix > MAX_MASK_DIFF) {
    p.push(
      `--node-cidr-mask-size-ipv4: /${nodeMaskIpv4} cuts ${cidr} into more than 2^${MAX_MASK_DIFF} ranges ` +
        `(use at most /${clusterPrefix + MAX_MASK_DIFF})`,
    );
  }
}

function routes(flags: Flags, p: string[]): RouteConfig {
  const cidrs = clusterCidrs(flags, p);
  const allocateNodeCidrs = flags.get("allocate-node-cidrs");
  if (allocateNodeCidrs && cidrs.length === 0) p.push("--allocate-node-cidrs: needs --cluster-cidr");
  const v4 = count(flags, "node-cidr-mask-size-ipv4", 0, 32, p);
  const v6 = count(flags, "node-cidr-mask-size-ipv6", 0, 128, p);
  if (allocateNodeCidrs) checkNodeIpam(cidrs, v4 === 0 ? 24 : v4, p);
  return {
    enableRouteController: flags.get("enable-route-controller"),
    configureCloudRoutes: flags.get("configure-cloud-routes"),
    reconciliationPeriodMs: timerMs(flags, "route-reconciliation-period", p),
    clusterCidrs: cidrs,
    allocateNodeCidrs,
    nodeCidrMaskSizeIpv4: v4 === 0 ? 24 : v4,
    nodeCidrMaskSizeIpv6: v6 === 0 ? 112 : v6,
    allocateIpv6NodeCidrs: !flags.get("disable-ipv6-node-cidr-allocation"),
  };
}

/**
 * The Go CCM's deprecated cilium-bgp flags: accepted, warned about as the Go CCM warns (cloud.go), no effect.
 * `--load-balancer-type=cilium-bgp` runs NodeBalancers, as the Go CCM now does.
 */
function loadBalancerType(flags: Flags, p: string[], warnings: string[]): "nodebalancer" {
  const type = oneOf(flags, "load-balancer-type", ["nodebalancer", "cilium-bgp"], p);
  if (type === "cilium-bgp") {
    warnings.push(
      "--load-balancer-type=cilium-bgp is not implemented (deprecated in the Go CCM); using nodebalancer",
    );
  }
  for (const name of ["bgp-node-selector", "ip-holder-suffix"] as const) {
    if (flags.get(name) !== "") {
      warnings.push(`--${name} is not implemented (deprecated in the Go CCM) and has no effect`);
    }
  }
  return "nodebalancer";
}

function services(flags: Flags, p: string[], warnings: string[]): ServiceConfig {
  const prefix = flags.get("nodebalancer-prefix");
  if (!/^[A-Za-z0-9_-]{1,19}$/.test(prefix)) {
    p.push(`--nodebalancer-prefix: invalid prefix "${prefix}" (1 to 19 letters, digits, _ or -)`);
  }
  const subnet = flags.get("nodebalancer-backend-ipv4-subnet");
  if (subnet !== "" && cidrFamily(subnet) !== 4) {
    p.push(`--nodebalancer-backend-ipv4-subnet: invalid IPv4 CIDR "${subnet}" (use e.g. 10.100.0.0/24)`);
  }
  const subnetId = count(flags, "nodebalancer-backend-ipv4-subnet-id", 0, Number.MAX_SAFE_INTEGER, p);
  const subnetName = flags.get("nodebalancer-backend-ipv4-subnet-name");
  if (subnetId !== 0 && subnetName !== "") {
    p.push(
      "--nodebalancer-backend-ipv4-subnet-id, --nodebalancer-backend-ipv4-subnet-name: both are set (use one)",
    );
  }
  return {
    concurrentSyncs: count(flags, "concurrent-service-syncs", 1, 1000, p),
    loadBalancerType: loadBalancerType(flags, p, warnings),
    defaultNodeBalancerType: nodeBalancerType(flags, p),
    nodeBalancerTags: flags.get("nodebalancer-tags"),
    nodeBalancerPrefix: prefix,
    backendIpv4Subnet: nullIfEmpty(subnet),
    backendIpv4SubnetId: subnetId === 0 ? null : subnetId,
    backendIpv4SubnetName: nullIfEmpty(subnetName),
    disableVpcBackends: flags.get("disable-nodebalancer-vpc-backends"),
    enableIpv6ForLoadBalancers: flags.get("enable-ipv6-for-loadbalancers"),
    enableIpv6ForNodeBalancerBackends: flags.get("enable-ipv6-for-nodebalancer-backends"),
    cleanupOrphanedNodeBalancers: flags.get("cleanup-orphaned-nodebalancers"),
    nodeBalancerIdAdoptsAny: flags.get("nodebalancer-id-adopts-any"),
  };
}

/** TTLs above a day would keep a revoked token working for that long: refused as a likely unit mistake. */
const MAX_CACHE_TTL_MS = 24 * 3600_000;

/**
 * One `--authorization-always-allow-paths` item as upstream's path authorizer reads it: a leading `/` is
 * optional (an empty item is `/`), `*` may only end it (prefix match). Quotes are pflag's CSV syntax, read
 * before this: the Go CCM Helm chart's `--authorization-always-allow-paths="/metrics"` is `/metrics`.
 */
export function normaliseAllowPath(item: string): string | { problem: string } {
  const path = item.replace(/^\//, "");
  if (path.slice(0, -1).includes("*")) return { problem: `"${item}": * is only allowed at the end` };
  return `/${path}`;
}

function ttlMs(flags: Flags, name: FlagNameOf<"duration">, p: string[]): number {
  const ms = flags.get(name);
  if (ms < 0 || ms > MAX_CACHE_TTL_MS) p.push(`--${name}: ${ms} ms is out of range (use 0s to 24h)`);
  return ms;
}

/** The delegated authentication and authorisation of the secure port, with upstream's flags and defaults. */
function delegatedAuth(flags: Flags, p: string[]): DelegatedAuthConfig {
  const paths: string[] = [];
  for (const item of flags.get("authorization-always-allow-paths")) {
    const path = normaliseAllowPath(item);
    if (typeof path === "string") paths.push(path);
    else p.push(`--authorization-always-allow-paths: ${path.problem} (use e.g. /healthz,/readyz,/livez)`);
  }
  return {
    authenticationKubeconfig: nullIfEmpty(flags.get("authentication-kubeconfig")),
    authorizationKubeconfig: nullIfEmpty(flags.get("authorization-kubeconfig")),
    alwaysAllowPaths: paths,
    tokenCacheTtlMs: ttlMs(flags, "authentication-token-webhook-cache-ttl", p),
    allowCacheTtlMs: ttlMs(flags, "authorization-webhook-cache-authorized-ttl", p),
    denyCacheTtlMs: ttlMs(flags, "authorization-webhook-cache-unauthorized-ttl", p),
  };
}

function serve(flags: Flags, p: string[]): ServeConfig {
  const port = count(flags, "secure-port", 0, 65535, p);
  const cert = nullIfEmpty(flags.get("tls-cert-file"));
  const key = nullIfEmpty(flags.get("tls-private-key-file"));
  if ((cert === null) !== (key === null)) {
    p.push("--tls-cert-file, --tls-private-key-file: set both or neither");
  }
  return {
    auth: delegatedAuth(flags, p),
    bindAddress: flags.get("bind-address"),
    securePort: port === 0 ? null : port,
    tlsCertFile: cert,
    tlsPrivateKeyFile: key,
  };
}

function log(flags: Flags, p: string[]): LogConfig {
  const verbosity = count(flags, "v", 0, 10, p);
  const format: LogFormat = flags.given("log-format") || !flags.given("logging-format")
    ? oneOf(flags, "log-format", ["json", "text"], p)
    : oneOf(flags, "logging-format", ["text", "json"], p);
  return { format, verbosity, level: levelForVerbosity(verbosity) };
}

/** The flags given that change nothing here, as `--name`: the Go CCM's command's others, and `--cloud-config`. */
export function ignoredFlags(values: ParsedArgs["values"]): string[] {
  const names = FLAGS.filter((f) => f.group === "ignored" || f.name === "cloud-config").map((f) => f.name);
  return names.filter((n) => values.has(n)).map((n) => `--${n}`);
}

/** The sections of `Config` that come from flags alone. */
export type FlagSections = Pick<
  Config,
  | "dryRun"
  | "clusterName"
  | "controllers"
  | "leaderElection"
  | "vpc"
  | "nodes"
  | "routes"
  | "services"
  | "serve"
  | "log"
>;

/** Reads every flag-only section, in this order, pushing to `problems` and `warnings`. */
export function parseFlagSections(
  flags: Flags,
  notes: { problems: string[]; warnings: string[] },
): FlagSections {
  const { problems: p, warnings } = notes;
  return {
    dryRun: flags.get("dry-run"),
    clusterName: flags.get("cluster-name"),
    controllers: chooseControllers(flags, notes),
    leaderElection: leaderElection(flags, p),
    vpc: vpc(flags, p, warnings),
    nodes: {
      monitorPeriodMs: timerMs(flags, "node-monitor-period", p),
      statusUpdateFrequencyMs: timerMs(flags, "node-status-update-frequency", p),
      concurrentSyncs: count(flags, "concurrent-node-syncs", 1, 1000, p),
      metadataUpdates: true,
    },
    routes: routes(flags, p),
    services: services(flags, p, warnings),
    serve: serve(flags, p),
    log: log(flags, p),
  };
}

/** The Linode-wide flags, which `LinodeConfig` adds to the environment's settings. */
export function linodeFlags(flags: Flags): Omit<LinodeConfig, keyof LinodeEnv> {
  return {
    debug: flags.get("linodego-debug"),
    tokenHealthCheck: flags.get("enable-token-health-checker"),
    tagFilter: nullIfEmpty(flags.get("linode-tag-filter")),
  };
}
