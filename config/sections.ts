/**
 * Typed flag values → the flag-only sections of `Config`. Each section parser checks its own flags and
 * pushes one line per problem, so `parseConfig` can report every problem at once.
 */
import { levelForVerbosity, type LogFormat } from "../common/log.ts";
import { FLAG_INDEX, FLAGS, type FlagValue, formatGoDuration, type ParsedArgs } from "./flags.ts";
import { type LinodeEnv, splitList } from "./env.ts";
import { cidrFamily, isIpAddress } from "../common/net.ts";
import { delegatedAuth } from "./auth.ts";
import { checkDnsLabel, checkDnsSubdomain, checkVpcLabels, MAX_TIMER_MS, MIN_TIMER_MS } from "./checks.ts";
import { checkNodeIpam } from "./node_ipam.ts";
import {
  type Config,
  CONTROLLER_NAMES,
  type ControllerName,
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

/** Upstream's long controller names (`names.CCMControllerAliases`), accepted too. */
const CONTROLLER_ALIASES: Readonly<Record<string, ControllerName>> = {
  "cloud-node-controller": "cloud-node",
  "cloud-node-lifecycle-controller": "cloud-node-lifecycle",
  "node-route-controller": "route",
  "service-lb-controller": "service",
  "node-ipam-controller": "nodeipam",
};

/** Typed access to flag values, defaults filled in. */
export interface FlagReader {
  given(name: string): boolean;
  bool(name: string): boolean;
  str(name: string): string;
  num(name: string): number;
  list(name: string): readonly string[];
  ints(name: string): readonly number[];
}

/** Reads parsed flag values by name, each with its default when not given. */
export function readFlags(values: ParsedArgs["values"]): FlagReader {
  const raw = (name: string): FlagValue => {
    const spec = FLAG_INDEX.get(name);
    if (!spec) throw new TypeError(`No flag --${name}`);
    return values.get(name) ?? spec.def;
  };
  const typed = <T>(name: string, ok: (v: FlagValue) => v is FlagValue & T): T => {
    const v = raw(name);
    if (!ok(v)) throw new TypeError(`Flag --${name} has the wrong type`);
    return v;
  };
  return {
    given: (name) => values.has(name),
    bool: (name) => typed(name, (v): v is boolean => typeof v === "boolean"),
    str: (name) => typed(name, (v): v is string => typeof v === "string"),
    num: (name) => typed(name, (v): v is number => typeof v === "number"),
    list: (name) => typed(name, (v): v is readonly string[] => Array.isArray(v)),
    ints: (name) => typed(name, (v): v is readonly number[] => Array.isArray(v)),
  };
}

function isOneOf<T extends string>(value: string, allowed: readonly T[]): value is T {
  return (allowed as readonly string[]).includes(value);
}

function oneOf<T extends string>(
  flags: FlagReader,
  name: string,
  allowed: readonly [T, ...T[]],
  p: string[],
): T {
  const value = flags.str(name);
  if (isOneOf(value, allowed)) return value;
  p.push(`--${name}: invalid value "${value}" (use ${allowed.join(" or ")})`);
  return allowed[0];
}

/**
 * `--default-nodebalancer-type`: the API's three plan types (api-v4 `NodeBalancerType`), in any case, since
 * the Go CCM's help spells the third `premium_40GB` (it passes the flag on unchecked; the API would refuse
 * anything else at the first create).
 */
function nodeBalancerType(flags: FlagReader, p: string[]): NodeBalancerType {
  const value = flags.str("default-nodebalancer-type");
  const lower = value.toLowerCase();
  if (isOneOf(lower, NODEBALANCER_TYPES)) return lower;
  p.push(`--default-nodebalancer-type: invalid value "${value}" (use ${NODEBALANCER_TYPES.join(", ")})`);
  return "common";
}

/** A duration that becomes a timer: 1 ms to 240 h (a longer timer would fire at once). */
function timerMs(flags: FlagReader, name: string, p: string[]): number {
  const ms = flags.num(name);
  if (ms >= MIN_TIMER_MS && ms <= MAX_TIMER_MS) return ms;
  const why = ms <= 0 ? "must be above 0" : ms < MIN_TIMER_MS ? "is below 1ms" : "is too long";
  const range = `use ${formatGoDuration(MIN_TIMER_MS)} to ${formatGoDuration(MAX_TIMER_MS)}, e.g. 10s`;
  p.push(`--${name}: ${why}, got ${formatGoDuration(ms)} (${range})`);
  return ms;
}

function count(flags: FlagReader, name: string, min: number, max: number, p: string[]): number {
  const n = flags.num(name);
  if (n < min || n > max) p.push(`--${name}: ${n} is out of range (use ${min} to ${max})`);
  return n;
}

function nullIfEmpty(text: string): string | null {
  return text === "" ? null : text;
}

function leaderElection(flags: FlagReader, p: string[]): LeaderElectionConfig {
  const enabled = flags.bool("leader-elect");
  const [lease, renew, retry] = ["lease-duration", "renew-deadline", "retry-period"].map((n) =>
    timerMs(flags, `leader-elect-${n}`, p)
  ) as [number, number, number];
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
  const lock = flags.str("leader-elect-resource-lock");
  if (lock !== "leases") p.push(`--leader-elect-resource-lock: unsupported lock "${lock}" (only leases)`);
  const [namespace, name] = ["namespace", "name"].map((n) => flags.str(`leader-elect-resource-${n}`));
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
    namespace: namespace ?? "",
    name: name ?? "",
  };
}

function vpc(flags: FlagReader, p: string[], warnings: string[]): VpcConfig {
  let names = flags.list("vpc-names");
  const legacy = flags.str("vpc-name").trim();
  if (legacy !== "" && names.length > 0) {
    p.push("--vpc-name, --vpc-names: both are set (use only --vpc-names)");
  } else if (legacy !== "") {
    names = [legacy];
    warnings.push("--vpc-name is deprecated: use --vpc-names");
  }
  const ids = flags.ints("vpc-ids");
  const subnetIds = flags.ints("subnet-ids");
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
  const routes = flags.bool("enable-route-controller");
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
  const subnetNames = subnetIds.length > 0 ? [] : flags.list("subnet-names");
  checkVpcLabels(legacy !== "" && !flags.given("vpc-names") ? "--vpc-name" : "--vpc-names", names, p);
  checkVpcLabels("--subnet-names", subnetNames, p);
  return { names, ids, subnetNames, subnetIds };
}

function clusterCidrs(flags: FlagReader, p: string[]): string[] {
  const cidrs = splitList(flags.str("cluster-cidr"));
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

function routes(flags: FlagReader, p: string[]): RouteConfig {
  const cidrs = clusterCidrs(flags, p);
  const allocateNodeCidrs = flags.bool("allocate-node-cidrs");
  if (allocateNodeCidrs && cidrs.length === 0) p.push("--allocate-node-cidrs: needs --cluster-cidr");
  const v4 = count(flags, "node-cidr-mask-size-ipv4", 0, 32, p);
  const v6 = count(flags, "node-cidr-mask-size-ipv6", 0, 128, p);
  if (allocateNodeCidrs) checkNodeIpam({ clusterCidrs: cidrs, nodeCidrMaskSizeIpv4: v4 === 0 ? 24 : v4 }, p);
  return {
    enableRouteController: flags.bool("enable-route-controller"),
    configureCloudRoutes: flags.bool("configure-cloud-routes"),
    reconciliationPeriodMs: timerMs(flags, "route-reconciliation-period", p),
    clusterCidrs: cidrs,
    allocateNodeCidrs,
    nodeCidrMaskSizeIpv4: v4 === 0 ? 24 : v4,
    nodeCidrMaskSizeIpv6: v6 === 0 ? 112 : v6,
    allocateIpv6NodeCidrs: !flags.bool("disable-ipv6-node-cidr-allocation"),
  };
}

/**
 * The Go CCM's deprecated cilium-bgp flags: accepted, warned about as the Go CCM warns (cloud.go), no effect.
 * `--load-balancer-type=cilium-bgp` runs NodeBalancers, as the Go CCM now does.
 */
function loadBalancerType(flags: FlagReader, p: string[], warnings: string[]): "nodebalancer" {
  const type = oneOf(flags, "load-balancer-type", ["nodebalancer", "cilium-bgp"], p);
  if (type === "cilium-bgp") {
    warnings.push(
      "--load-balancer-type=cilium-bgp is not implemented (deprecated in the Go CCM); using nodebalancer",
    );
  }
  for (const name of ["bgp-node-selector", "ip-holder-suffix"]) {
    if (flags.str(name) !== "") {
      warnings.push(`--${name} is not implemented (deprecated in the Go CCM) and has no effect`);
    }
  }
  return "nodebalancer";
}

function services(flags: FlagReader, p: string[], warnings: string[]): ServiceConfig {
  const prefix = flags.str("nodebalancer-prefix");
  if (!/^[A-Za-z0-9_-]{1,19}$/.test(prefix)) {
    p.push(`--nodebalancer-prefix: invalid prefix "${prefix}" (1 to 19 letters, digits, _ or -)`);
  }
  const subnet = flags.str("nodebalancer-backend-ipv4-subnet");
  if (subnet !== "" && cidrFamily(subnet) !== 4) {
    p.push(`--nodebalancer-backend-ipv4-subnet: invalid IPv4 CIDR "${subnet}" (use e.g. 10.100.0.0/24)`);
  }
  const subnetId = count(flags, "nodebalancer-backend-ipv4-subnet-id", 0, Number.MAX_SAFE_INTEGER, p);
  const subnetName = flags.str("nodebalancer-backend-ipv4-subnet-name");
  if (subnetId !== 0 && subnetName !== "") {
    p.push(
      "--nodebalancer-backend-ipv4-subnet-id, --nodebalancer-backend-ipv4-subnet-name: both are set (use one)",
    );
  }
  return {
    concurrentSyncs: count(flags, "concurrent-service-syncs", 1, 1000, p),
    loadBalancerType: loadBalancerType(flags, p, warnings),
    defaultNodeBalancerType: nodeBalancerType(flags, p),
    nodeBalancerTags: flags.list("nodebalancer-tags"),
    nodeBalancerPrefix: prefix,
    backendIpv4Subnet: nullIfEmpty(subnet),
    backendIpv4SubnetId: subnetId === 0 ? null : subnetId,
    backendIpv4SubnetName: nullIfEmpty(subnetName),
    disableVpcBackends: flags.bool("disable-nodebalancer-vpc-backends"),
    enableIpv6ForLoadBalancers: flags.bool("enable-ipv6-for-loadbalancers"),
    enableIpv6ForNodeBalancerBackends: flags.bool("enable-ipv6-for-nodebalancer-backends"),
    cleanupOrphanedNodeBalancers: flags.bool("cleanup-orphaned-nodebalancers"),
  };
}

function serve(flags: FlagReader, p: string[]): ServeConfig {
  const bindAddress = flags.str("bind-address");
  if (!isIpAddress(bindAddress)) {
    p.push(`--bind-address: invalid IP address "${bindAddress}" (use e.g. 0.0.0.0 or ::)`);
  }
  const port = count(flags, "secure-port", 0, 65535, p);
  const cert = nullIfEmpty(flags.str("tls-cert-file"));
  const key = nullIfEmpty(flags.str("tls-private-key-file"));
  if ((cert === null) !== (key === null)) {
    p.push("--tls-cert-file, --tls-private-key-file: set both or neither");
  }
  return {
    auth: delegatedAuth(flags, p),
    bindAddress,
    securePort: port === 0 ? null : port,
    tlsCertFile: cert,
    tlsPrivateKeyFile: key,
  };
}

function log(flags: FlagReader, p: string[]): LogConfig {
  const verbosity = count(flags, "v", 0, 10, p);
  const format: LogFormat = flags.given("log-format") || !flags.given("logging-format")
    ? oneOf(flags, "log-format", ["json", "text"], p)
    : oneOf(flags, "logging-format", ["text", "json"], p);
  return { format, verbosity, level: levelForVerbosity(verbosity) };
}

function controllers(flags: FlagReader, p: string[], warnings: string[]): Set<ControllerName> {
  let all = false;
  const on = new Set<ControllerName>();
  const off = new Set<ControllerName>();
  for (const entry of flags.list("controllers")) {
    const name = entry.replace(/^-/, "");
    if (entry === "*") all = true;
    const known = isOneOf(name, CONTROLLER_NAMES) ? name : CONTROLLER_ALIASES[name];
    if (known) (entry.startsWith("-") ? off : on).add(known);
    else if (entry !== "*") {
      p.push(
        `--controllers: unknown controller "${entry}" (use *, ${
          CONTROLLER_NAMES.join(", ")
        }; -name disables)`,
      );
    }
  }
  const chosen = new Set(CONTROLLER_NAMES.filter((n) => !off.has(n) && (all || on.has(n))));
  // Upstream starts the route controller only with --configure-cloud-routes, and the Linode cloud offers
  // routes only with --enable-route-controller.
  const why = !flags.bool("enable-route-controller")
    ? "--enable-route-controller is false"
    : !flags.bool("configure-cloud-routes")
    ? "--configure-cloud-routes is false"
    : undefined;
  if (chosen.has("route") && why) {
    chosen.delete("route");
    if (on.has("route") || flags.bool("enable-route-controller")) {
      warnings.push(`route controller not started: ${why}`);
    }
  } else if (!chosen.has("route") && flags.bool("enable-route-controller")) {
    warnings.push("route controller not started: --controllers excludes it");
  }
  nodeIpam(flags, { chosen, on }, warnings);
  if (chosen.has("route") && splitList(flags.str("cluster-cidr")).length === 0) {
    p.push("--cluster-cidr: needed by the route controller (--enable-route-controller)");
  }
  return chosen;
}

/** As the Go CCM: node IPAM runs with `--allocate-node-cidrs` (and not when `--controllers` excludes it). */
function nodeIpam(
  flags: FlagReader,
  sets: { chosen: Set<ControllerName>; on: Set<ControllerName> },
  warnings: string[],
): void {
  const allocate = flags.bool("allocate-node-cidrs");
  if (!allocate && sets.chosen.delete("nodeipam") && sets.on.has("nodeipam")) {
    warnings.push("nodeipam controller not started: --allocate-node-cidrs is false");
  } else if (allocate && !sets.chosen.has("nodeipam")) {
    warnings.push("node IPAM not started: --controllers excludes nodeipam");
  }
}

/** The flags given that change nothing here, as `--name`. */
export function ignoredFlags(flags: FlagReader): string[] {
  const names = FLAGS.filter((f) => f.group === "ignored" || f.name === "cloud-config").map((f) => f.name);
  return names.filter((n) => flags.given(n)).map((n) => `--${n}`);
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
  flags: FlagReader,
  notes: { problems: string[]; warnings: string[] },
): FlagSections {
  const { problems: p, warnings } = notes;
  return {
    dryRun: flags.bool("dry-run"),
    clusterName: flags.str("cluster-name"),
    controllers: controllers(flags, p, warnings),
    leaderElection: leaderElection(flags, p),
    vpc: vpc(flags, p, warnings),
    nodes: {
      monitorPeriodMs: timerMs(flags, "node-monitor-period", p),
      statusUpdateFrequencyMs: timerMs(flags, "node-status-update-frequency", p),
      concurrentSyncs: count(flags, "concurrent-node-syncs", 1, 1000, p),
    },
    routes: routes(flags, p),
    services: services(flags, p, warnings),
    serve: serve(flags, p),
    log: log(flags, p),
  };
}

/** The Linode-wide flags, which `LinodeConfig` adds to the environment's settings. */
export function linodeFlags(flags: FlagReader): Omit<LinodeConfig, keyof LinodeEnv> {
  return {
    debug: flags.bool("linodego-debug"),
    tokenHealthCheck: flags.bool("enable-token-health-checker"),
    tagFilter: nullIfEmpty(flags.str("linode-tag-filter")),
  };
}
