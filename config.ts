/**
 * Flags + environment → one validated, deeply frozen `Config`. `parseConfig` is pure and reports every
 * problem at once; `readConfig` is the only reader of `Deno.args` and `Deno.env` in the program.
 */
import { levelForVerbosity, type LogFormat, type LogLevel, redactSecrets } from "./log.ts";
import {
  FLAG_INDEX,
  FLAGS,
  type FlagValue,
  formatGoDuration,
  helpText,
  parseArgs,
  type ParsedArgs,
} from "./config_flags.ts";
import {
  chooseKubeSource,
  cidrFamily,
  type Env,
  ENV_VARS,
  isIpAddress,
  type KubeSource,
  type LinodeEnv,
  parseLinodeEnv,
  Secret,
  splitList,
  type TokenFileCheck,
  type TokenSource,
} from "./config_env.ts";
import { VERSION } from "./version.ts";

export { helpText, Secret };
export type { Env, KubeSource, LogFormat, LogLevel, TokenSource };

/** The controllers `--controllers` can name (upstream's short names). */
export type ControllerName = "cloud-node" | "cloud-node-lifecycle" | "route" | "service";

/** Every controller, in start order. */
export const CONTROLLER_NAMES: readonly ControllerName[] = Object.freeze([
  "cloud-node",
  "cloud-node-lifecycle",
  "route",
  "service",
]);

/** Upstream's long controller names (`names.CCMControllerAliases`), accepted too. */
const CONTROLLER_ALIASES: Readonly<Record<string, ControllerName>> = {
  "cloud-node-controller": "cloud-node",
  "cloud-node-lifecycle-controller": "cloud-node-lifecycle",
  "node-route-controller": "route",
  "service-lb-controller": "service",
};

/** `--leader-elect*`. */
export interface LeaderElectionConfig {
  readonly enabled: boolean;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly resourceLock: "leases";
  readonly namespace: string;
  readonly name: string;
}

/** The VPCs and subnets whose addresses the CCM manages (`--vpc-names`/`--vpc-ids`, `--subnet-*`). */
export interface VpcConfig {
  readonly names: readonly string[];
  readonly ids: readonly number[];
  /** Empty when `subnetIds` is given (the Go CCM resolves the IDs to names at start). */
  readonly subnetNames: readonly string[];
  readonly subnetIds: readonly number[];
}

/** The cloud-node and cloud-node-lifecycle controllers. */
export interface NodeConfig {
  /** `--node-monitor-period`: lifecycle check period. */
  readonly monitorPeriodMs: number;
  /** `--node-status-update-frequency`: address refresh period. */
  readonly statusUpdateFrequencyMs: number;
  readonly concurrentSyncs: number;
}

/** The route controller and node IPAM. */
export interface RouteConfig {
  readonly enableRouteController: boolean;
  readonly configureCloudRoutes: boolean;
  readonly reconciliationPeriodMs: number;
  /** `--cluster-cidr`, split: one IPv4 and/or one IPv6 CIDR. */
  readonly clusterCidrs: readonly string[];
  readonly allocateNodeCidrs: boolean;
  readonly nodeCidrMaskSizeIpv4: number;
  readonly nodeCidrMaskSizeIpv6: number;
  readonly allocateIpv6NodeCidrs: boolean;
}

/** The service controller (NodeBalancers). */
export interface ServiceConfig {
  readonly concurrentSyncs: number;
  readonly loadBalancerType: "nodebalancer" | "cilium-bgp";
  readonly defaultNodeBalancerType: "common" | "premium";
  readonly nodeBalancerTags: readonly string[];
  readonly nodeBalancerPrefix: string;
  readonly backendIpv4Subnet: string | null;
  readonly backendIpv4SubnetId: number | null;
  readonly backendIpv4SubnetName: string | null;
  readonly disableVpcBackends: boolean;
  readonly enableIpv6ForLoadBalancers: boolean;
  readonly enableIpv6ForNodeBalancerBackends: boolean;
  readonly bgpNodeSelector: string | null;
  readonly ipHolderSuffix: string | null;
}

/** The HTTPS health and metrics server. */
export interface ServeConfig {
  readonly bindAddress: string;
  /** `--secure-port`; `null` when 0 (serving disabled). */
  readonly securePort: number | null;
  readonly tlsCertFile: string | null;
  readonly tlsPrivateKeyFile: string | null;
}

/** Logging. */
export interface LogConfig {
  readonly format: LogFormat;
  /** `--v`. */
  readonly verbosity: number;
  readonly level: LogLevel;
}

/** The settings every module reads. Durations are milliseconds; the token prints as `***`. */
export interface Config {
  /** `--dev`: running against the built-in emulators. */
  readonly dev: boolean;
  readonly clusterName: string;
  /** What to start: `--controllers`, less `route` unless `--enable-route-controller` and routes are on. */
  readonly controllers: ReadonlySet<ControllerName>;
  readonly leaderElection: LeaderElectionConfig;
  readonly kube: KubeSource;
  readonly linode: LinodeConfig;
  readonly vpc: VpcConfig;
  readonly nodes: NodeConfig;
  readonly routes: RouteConfig;
  readonly services: ServiceConfig;
  readonly serve: ServeConfig;
  readonly log: LogConfig;
  /** Flags given that change nothing here (for one startup log line), e.g. `--cloud-config`. */
  readonly ignoredFlags: readonly string[];
  /** Things worth a warning at startup (deprecated flags, a requested controller that will not run). */
  readonly warnings: readonly string[];
}

/** Linode API settings: environment plus the Linode-wide flags. */
export interface LinodeConfig extends LinodeEnv {
  /** `--linodego-debug`: log each request and response at debug level. */
  readonly debug: boolean;
  /** `--enable-token-health-checker`. */
  readonly tokenHealthCheck: boolean;
  /** `--linode-tag-filter`, or `null`. */
  readonly tagFilter: string | null;
}

/** What `main.ts` should do. */
export type ParseResult =
  | { readonly kind: "run"; readonly config: Config }
  | { readonly kind: "help"; readonly text: string }
  | { readonly kind: "version"; readonly text: string }
  | {
    readonly kind: "dev";
    /** Builds the config once the emulators run, from their `LINODE_URL`, token, region and `KUBECONFIG`. */
    resolve(emulatorEnv: Env): Config;
  };

/** The command line or environment is unusable: exit 2 and print `message` (one line per problem). */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** One line per problem, each naming the flag or variable. */
  readonly problems: readonly string[];
  /** Builds the error from its problem lines. */
  constructor(problems: readonly string[]) {
    super(problems.join("\n"));
    this.problems = Object.freeze([...problems]);
  }
}

/** Options of `parseConfig`. */
export interface ParseOptions {
  /** Checks `LINODE_API_TOKEN_FILE` at start (`readConfig` reads it once); skipped when absent. */
  checkTokenFile?: TokenFileCheck;
}

/** Variables that the emulators replace in `--dev`, so a real token or cluster is never used there. */
const DEV_REPLACED = [
  "LINODE_API_TOKEN",
  "LINODE_API_TOKEN_FILE",
  "LINODE_URL",
  "KUBECONFIG",
  "KUBERNETES_SERVICE_HOST",
  "KUBERNETES_SERVICE_PORT",
];

/** Typed access to flag values, defaults filled in. */
interface FlagReader {
  given(name: string): boolean;
  bool(name: string): boolean;
  str(name: string): string;
  num(name: string): number;
  list(name: string): readonly string[];
  ints(name: string): readonly number[];
}

function reader(values: ParsedArgs["values"]): FlagReader {
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

function positiveMs(flags: FlagReader, name: string, p: string[]): number {
  const ms = flags.num(name);
  if (!(ms > 0)) p.push(`--${name}: must be above 0, got ${formatGoDuration(ms)} (use e.g. 10s)`);
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
    positiveMs(flags, `leader-elect-${n}`, p)
  ) as [number, number, number];
  // client-go's NewLeaderElector refuses these combinations.
  if (enabled && lease <= renew) {
    p.push(
      `--leader-elect-lease-duration: must exceed --leader-elect-renew-deadline (${formatGoDuration(renew)})`,
    );
  }
  if (enabled && renew <= 1.2 * retry) {
    p.push(
      `--leader-elect-renew-deadline: must exceed 1.2 × --leader-elect-retry-period (${
        formatGoDuration(retry)
      })`,
    );
  }
  const lock = flags.str("leader-elect-resource-lock");
  if (lock !== "leases") p.push(`--leader-elect-resource-lock: unsupported lock "${lock}" (only leases)`);
  const [namespace, name] = ["namespace", "name"].map((n) => flags.str(`leader-elect-resource-${n}`));
  if (!namespace) p.push("--leader-elect-resource-namespace: must not be empty (default kube-system)");
  if (!name) p.push("--leader-elect-resource-name: must not be empty (default cloud-controller-manager)");
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
  // The Go CCM's validateVPCSubnetFlags, in its order.
  if (ids.length > 0 && names.length > 0) p.push("--vpc-ids, --vpc-names: both are set (use one of them)");
  if (ids.length > 0 && subnetIds.length === 0) p.push("--vpc-ids: needs --subnet-ids");
  if (subnetIds.length > 0 && ids.length === 0) p.push("--subnet-ids: needs --vpc-ids");
  if (flags.bool("enable-route-controller") && names.length === 0 && ids.length === 0) {
    p.push("--enable-route-controller: needs --vpc-names or --vpc-ids");
  }
  if (subnetIds.length > 0 && flags.given("subnet-names")) {
    warnings.push("--subnet-names is ignored: --subnet-ids wins");
  }
  const subnetNames = subnetIds.length > 0 ? [] : flags.list("subnet-names");
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
  return {
    enableRouteController: flags.bool("enable-route-controller"),
    configureCloudRoutes: flags.bool("configure-cloud-routes"),
    reconciliationPeriodMs: positiveMs(flags, "route-reconciliation-period", p),
    clusterCidrs: cidrs,
    allocateNodeCidrs,
    nodeCidrMaskSizeIpv4: v4 === 0 ? 24 : v4,
    nodeCidrMaskSizeIpv6: v6 === 0 ? 112 : v6,
    allocateIpv6NodeCidrs: !flags.bool("disable-ipv6-node-cidr-allocation"),
  };
}

function services(flags: FlagReader, p: string[]): ServiceConfig {
  const prefix = flags.str("nodebalancer-prefix");
  if (!/^[A-Za-z0-9_-]{1,19}$/.test(prefix)) {
    p.push(`--nodebalancer-prefix: invalid prefix "${prefix}" (1 to 19 letters, digits, _ or -)`);
  }
  const suffix = flags.str("ip-holder-suffix");
  if (suffix.length > 23) p.push(`--ip-holder-suffix: ${suffix.length} characters (at most 23)`);
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
    loadBalancerType: oneOf(flags, "load-balancer-type", ["nodebalancer", "cilium-bgp"], p),
    defaultNodeBalancerType: oneOf(flags, "default-nodebalancer-type", ["common", "premium"], p),
    nodeBalancerTags: flags.list("nodebalancer-tags"),
    nodeBalancerPrefix: prefix,
    backendIpv4Subnet: nullIfEmpty(subnet),
    backendIpv4SubnetId: subnetId === 0 ? null : subnetId,
    backendIpv4SubnetName: nullIfEmpty(subnetName),
    disableVpcBackends: flags.bool("disable-nodebalancer-vpc-backends"),
    enableIpv6ForLoadBalancers: flags.bool("enable-ipv6-for-loadbalancers"),
    enableIpv6ForNodeBalancerBackends: flags.bool("enable-ipv6-for-nodebalancer-backends"),
    bgpNodeSelector: nullIfEmpty(flags.str("bgp-node-selector")),
    ipHolderSuffix: nullIfEmpty(suffix),
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
  return { bindAddress, securePort: port === 0 ? null : port, tlsCertFile: cert, tlsPrivateKeyFile: key };
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
  if (chosen.has("route") && splitList(flags.str("cluster-cidr")).length === 0) {
    p.push("--cluster-cidr: needed by the route controller (--enable-route-controller)");
  }
  return chosen;
}

function ignoredFlags(flags: FlagReader): string[] {
  const names = FLAGS.filter((f) => f.group === "ignored" || f.name === "cloud-config").map((f) => f.name);
  return names.filter((n) => flags.given(n)).map((n) => `--${n}`);
}

function deepFreeze<T>(value: T): T {
  if (value instanceof Set) {
    const deny = () => {
      throw new TypeError("Config is read-only");
    };
    Object.assign(value, { add: deny, delete: deny, clear: deny });
  } else if (typeof value === "object" && value !== null && !(value instanceof Secret)) {
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return Object.freeze(value);
}

function build(args: ParsedArgs, env: Env, dev: boolean, options: ParseOptions): Config {
  const flags = reader(args.values);
  const p = [...args.problems];
  const warnings: string[] = [];
  const provider = flags.str("cloud-provider");
  if (provider !== "linode") p.push(`--cloud-provider: unsupported provider "${provider}" (only linode)`);
  const sections = {
    clusterName: flags.str("cluster-name"),
    controllers: controllers(flags, p, warnings),
    leaderElection: leaderElection(flags, p),
    vpc: vpc(flags, p, warnings),
    nodes: {
      monitorPeriodMs: positiveMs(flags, "node-monitor-period", p),
      statusUpdateFrequencyMs: positiveMs(flags, "node-status-update-frequency", p),
      concurrentSyncs: count(flags, "concurrent-node-syncs", 1, 1000, p),
    },
    routes: routes(flags, p),
    services: services(flags, p),
    serve: serve(flags, p),
    log: log(flags, p),
  };
  const linodeEnv = parseLinodeEnv(env, p, options.checkTokenFile);
  const kube = chooseKubeSource({ kubeconfig: flags.str("kubeconfig"), master: flags.str("master") }, env, p);
  if (p.length > 0) {
    const token = env["LINODE_API_TOKEN"]?.trim() ?? "";
    throw new ConfigError(p.map((line) => redactSecrets(line, [token])));
  }
  const tagFilter = flags.str("linode-tag-filter");
  const linode: LinodeConfig = {
    ...linodeEnv,
    debug: flags.bool("linodego-debug"),
    tokenHealthCheck: flags.bool("enable-token-health-checker"),
    tagFilter: nullIfEmpty(tagFilter),
  };
  return deepFreeze({ ...sections, dev, kube, linode, ignoredFlags: ignoredFlags(flags), warnings });
}

/**
 * Parses the command line and environment. Pure: throws `ConfigError` listing every problem. `--help`
 * and `--version` win over errors; `--dev` defers the Linode and Kubernetes settings to `resolve`.
 */
export function parseConfig(args: readonly string[], env: Env, options: ParseOptions = {}): ParseResult {
  const parsed = parseArgs(args);
  if (parsed.help) return { kind: "help", text: helpText() };
  if (parsed.version === "raw") return { kind: "version", text: JSON.stringify({ version: VERSION }) };
  if (parsed.version) return { kind: "version", text: `linode-cloud-controller-manager v${VERSION}` };
  if (parsed.values.get("dev") !== true) return { kind: "run", config: build(parsed, env, false, options) };
  const problems = [...parsed.problems];
  for (const name of ["kubeconfig", "master"]) {
    if (parsed.values.has(name)) problems.push(`--${name}: not allowed with --dev (it uses its own cluster)`);
  }
  // Check the flags now, so mistakes show before the emulators start.
  const devEnv: Env = { LINODE_API_TOKEN: "dev", LINODE_REGION: "us-east", KUBECONFIG: "dev" };
  build({ ...parsed, problems }, devEnv, true, {});
  const kept = Object.fromEntries(Object.entries(env).filter(([k]) => !DEV_REPLACED.includes(k)));
  return {
    kind: "dev",
    resolve: (emulatorEnv) => build(parsed, { ...kept, ...emulatorEnv }, true, options),
  };
}

/** Reads a token file once at start: why it cannot be used (never its content), or `undefined`. */
export function checkTokenFile(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path).trim() === "" ? "it is empty" : undefined;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "not found";
    if (e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.NotCapable) {
      return "no permission to read it";
    }
    return "cannot read it";
  }
}

function readEnv(): Env {
  const env: Record<string, string | undefined> = {};
  for (const { name } of ENV_VARS) {
    try {
      env[name] = Deno.env.get(name);
    } catch {
      // Not granted by the permission set: treat as unset, like `--ignore-env` does.
      env[name] = undefined;
    }
  }
  return env;
}

/** Reads `Deno.args` and the variables in `ENV_VARS`, and parses them; throws `ConfigError`. */
export function readConfig(): ParseResult {
  return parseConfig(Deno.args, readEnv(), { checkTokenFile });
}

/** The config as a plain object for one startup log line: token `***`, sets as sorted arrays. */
export function describeConfig(config: Config): Record<string, unknown> {
  const json = JSON.stringify(config, (_key, value: unknown) => {
    if (value instanceof Set) return [...value].sort();
    if (value instanceof Secret) return "***";
    return value;
  });
  return JSON.parse(json);
}
