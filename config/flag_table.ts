/**
 * The command-line flag table. Each flag is declared once, below, with its kind, default and help line; the
 * types of what the sections read follow from it (`FlagName`, `FlagValues`), so reading a flag that is not
 * declared, or as the wrong kind, does not compile. `--help`, validation and the docs tables are generated from
 * it. Every other flag of the Go CCM's command (`upstream_flags.ts`, generated from the Go sources) is accepted
 * too, read with its pflag type, and warned about at start as having no effect here.
 */
import { isIpAddress } from "../common/net.ts";
import { parseGoBool, parseGoDuration, parseGoFloat, parseGoInt, readCsv } from "./env.ts";
import { UPSTREAM_FLAGS, type UpstreamFlag, type UpstreamFlagType } from "./upstream_flags.ts";

/** How a flag's value is read: Go pflag's value types, as `readValue` reads them. */
export type FlagKind =
  | "bool"
  | "string"
  | "int"
  | "float"
  | "duration"
  | "ip"
  | "list"
  | "intList"
  | "array"
  | "map"
  | "quantity";

/** What a value of each kind becomes: durations are milliseconds, lists arrays. */
export interface KindValues {
  bool: boolean;
  string: string;
  int: number;
  float: number;
  duration: number;
  ip: string;
  /** pflag's StringSlice: CSV, each use appends. */
  list: readonly string[];
  /** pflag's IntSlice: split on commas, each use appends. */
  intList: readonly number[];
  /** pflag's StringArray (and NamedCertKey): one item per use, never split. */
  array: readonly string[];
  /** pflag's mapStringBool (`--feature-gates`): `key=bool` pairs. */
  map: readonly string[];
  /** A Kubernetes resource quantity (`512`, `2Ki`, `4G`). */
  quantity: string;
}

/** A parsed flag value. */
export type FlagValue = KindValues[FlagKind];

/** Where a flag is listed in `--help`. */
export type FlagGroup = "linode" | "cloud" | "leader" | "serve" | "log" | "ignored";

/** A flag as declared: kind, default (the Go CCM's, unless the help says otherwise) and help line. */
interface Decl<K extends FlagKind> {
  readonly kind: K;
  readonly def: KindValues[K];
  readonly help: string;
}

const bool = (def: boolean, help: string): Decl<"bool"> => ({ kind: "bool", def, help });
const str = (def: string, help: string): Decl<"string"> => ({ kind: "string", def, help });
const int = (def: number, help: string): Decl<"int"> => ({ kind: "int", def, help });
const ms = (def: number, help: string): Decl<"duration"> => ({ kind: "duration", def, help });
const ip = (def: string, help: string): Decl<"ip"> => ({ kind: "ip", def, help });
const list = (def: readonly string[], help: string): Decl<"list"> => ({ kind: "list", def, help });
const ints = (def: readonly number[], help: string): Decl<"intList"> => ({ kind: "intList", def, help });

/** The Go CCM's own flags, and one of ours. */
const LINODE = {
  "enable-route-controller": bool(
    false,
    "program pod CIDRs as VPC ip_ranges (needs --vpc-names or --vpc-ids)",
  ),
  "vpc-names": list([], "comma-separated VPC labels whose routes are managed"),
  "vpc-name": str("", "deprecated: use --vpc-names"),
  "vpc-ids": ints([], "comma-separated VPC IDs (instead of --vpc-names; needs --subnet-ids)"),
  "subnet-names": list(["default"], "comma-separated subnet labels whose routes are managed"),
  "subnet-ids": ints([], "comma-separated subnet IDs (with --vpc-ids; overrides --subnet-names)"),
  "load-balancer-type": str(
    "nodebalancer",
    "LoadBalancer implementation: nodebalancer; cilium-bgp is not implemented (deprecated in the Go CCM): " +
      "warned at start and treated as nodebalancer",
  ),
  "bgp-node-selector": str(
    "",
    "not implemented (deprecated in the Go CCM, no effect there either): warned at start",
  ),
  "ip-holder-suffix": str(
    "",
    "not implemented (deprecated in the Go CCM, no effect there either): warned at start",
  ),
  "default-nodebalancer-type": str("common", "type of new NodeBalancers: common, premium or premium_40gb"),
  "nodebalancer-tags": list([], "comma-separated tags put on every NodeBalancer"),
  "nodebalancer-prefix": str("ccm", "label prefix of NodeBalancers (letters, digits, _ and -, at most 19)"),
  "linode-tag-filter": str("", "only Linodes carrying this tag are considered"),
  "nodebalancer-backend-ipv4-subnet": str("", "IPv4 CIDR that NodeBalancer backend addresses must lie in"),
  "nodebalancer-backend-ipv4-subnet-id": int(0, "VPC subnet ID for NodeBalancer backends"),
  "nodebalancer-backend-ipv4-subnet-name": str("", "VPC subnet label for NodeBalancer backends"),
  "disable-nodebalancer-vpc-backends": bool(false, "use private IPs, not VPC IPs, as NodeBalancer backends"),
  "enable-ipv6-for-loadbalancers": bool(false, "report IPv4 and IPv6 ingress for every LoadBalancer Service"),
  "enable-ipv6-for-nodebalancer-backends": bool(false, "use IPv6 addresses as NodeBalancer backends"),
  "cleanup-orphaned-nodebalancers": bool(
    false,
    "ours: delete NodeBalancers carrying this cluster's ownership tag that no Service is tied to",
  ),
  "nodebalancer-id-adopts-any": bool(
    false,
    "ours: nodebalancer-id adopts any NodeBalancer without ownership tags, as the Go CCM (even one serving others)",
  ),
  "enable-token-health-checker": bool(false, "check the Linode API token at start and every 5 minutes"),
  "linodego-debug": bool(false, "log every Linode API request: method, route, status, duration"),
};

/** The upstream cloud-controller-manager's controller flags, the node IPAM flags the Go CCM adds, and ours. */
const CLOUD = {
  "cloud-provider": str("linode", "cloud provider name; must be linode"),
  "cloud-config": str("", "cloud configuration file; accepted and ignored (configure through env)"),
  kubeconfig: str("", "kubeconfig file; else KUBECONFIG, else in-cluster"),
  master: str("", "Kubernetes API server address; overrides the kubeconfig's server"),
  "cluster-name": str("kubernetes", "name of the cluster"),
  controllers: list(
    ["*"],
    "upstream controllers to run: * all, name on, -name off (cloud-node, cloud-node-lifecycle, route, service); " +
      "node IPAM and node metadata updates run regardless, as in the Go CCM",
  ),
  "configure-cloud-routes": bool(true, "let the route controller program routes"),
  "allocate-node-cidrs": bool(false, "allocate pod CIDRs to Nodes (node IPAM; needs --cluster-cidr)"),
  "cluster-cidr": str("", "pod CIDR(s) of the cluster, comma-separated for dual stack"),
  "node-cidr-mask-size-ipv4": int(0, "IPv4 pod CIDR size per node (0: 24)"),
  "node-cidr-mask-size-ipv6": int(0, "IPv6 pod CIDR size per node (0: 112)"),
  "disable-ipv6-node-cidr-allocation": bool(false, "allocate only IPv4 pod CIDRs"),
  "node-monitor-period": ms(5_000, "period of the node lifecycle check"),
  "node-status-update-frequency": ms(300_000, "period of node address refresh"),
  "route-reconciliation-period": ms(10_000, "period of route reconciliation"),
  "concurrent-service-syncs": int(1, "Services reconciled in parallel"),
  "concurrent-node-syncs": int(1, "Nodes initialised in parallel"),
  dev: bool(false, "ours: run against the built-in Linode and Kubernetes emulators"),
  "dry-run": bool(
    false,
    "ours: shadow mode: decide and serve the plan on /plan, write nothing, take no part in leader election",
  ),
};

const LEADER = {
  "leader-elect": bool(true, "run controllers only while holding the leader Lease"),
  "leader-elect-lease-duration": ms(15_000, "how long non-leaders wait before taking over"),
  "leader-elect-renew-deadline": ms(10_000, "how long the leader tries to renew before giving up"),
  "leader-elect-retry-period": ms(2_000, "wait between acquire and renew attempts"),
  "leader-elect-resource-lock": str("leases", "lock object type; only leases"),
  "leader-elect-resource-name": str("cloud-controller-manager", "name of the Lease"),
  "leader-elect-resource-namespace": str("kube-system", "namespace of the Lease"),
};

const SERVE = {
  "bind-address": ip("0.0.0.0", "address of the HTTPS health and metrics server"),
  "secure-port": int(10258, "HTTPS port of /healthz, /readyz, /metrics (0 disables)"),
  "tls-cert-file": str("", "serving certificate (PEM); self-signed when empty"),
  "tls-private-key-file": str("", "serving private key (PEM)"),
  "authentication-kubeconfig": str(
    "",
    "kubeconfig for the TokenReviews of /metrics and /plan callers (empty: the CCM's own kubeconfig)",
  ),
  "authorization-kubeconfig": str(
    "",
    "kubeconfig for the SubjectAccessReviews of /metrics and /plan callers (empty: the CCM's own)",
  ),
  "authorization-always-allow-paths": list(
    ["/healthz", "/readyz", "/livez"],
    "paths served without authentication or authorisation; a trailing * matches a prefix",
  ),
  "authentication-token-webhook-cache-ttl": ms(10_000, "how long a TokenReview answer is cached"),
  "authorization-webhook-cache-authorized-ttl": ms(
    10_000,
    "how long an allowing SubjectAccessReview answer is cached",
  ),
  "authorization-webhook-cache-unauthorized-ttl": ms(
    10_000,
    "how long a denying SubjectAccessReview answer is cached",
  ),
  "authentication-skip-lookup": bool(
    true,
    "accepted (the Go CCM sets it to true): only bearer tokens are authenticated, so no client CA is looked up",
  ),
  "authentication-tolerate-lookup-failure": bool(
    false,
    "accepted: no client CA lookup is made (see --authentication-skip-lookup)",
  ),
};

const LOG = {
  v: int(0, "log verbosity: 0-3 info, 4-5 debug, 6+ trace"),
  "log-format": str("json", "ours: json (one object per line) or text"),
  "logging-format": str("", "upstream spelling of --log-format: text or json (--log-format wins)"),
};

type Table = typeof LINODE & typeof CLOUD & typeof LEADER & typeof SERVE & typeof LOG;

/** The name of a flag this CCM implements (without dashes). */
export type FlagName = keyof Table;

/** The implemented flags of one kind, e.g. `FlagNameOf<"duration">`. */
export type FlagNameOf<K extends FlagKind> = {
  [N in FlagName]: Table[N]["kind"] extends K ? N : never;
}[FlagName];

/** The value of every implemented flag, typed by its kind. */
export type FlagValues = { readonly [N in FlagName]: KindValues[Table[N]["kind"]] };

/** One accepted flag: name without dashes, kind, default, help line and group; `upstream` when the Go CCM has it. */
export interface FlagSpec {
  readonly name: string;
  readonly kind: FlagKind;
  readonly def: FlagValue;
  readonly help: string;
  readonly group: FlagGroup;
  readonly upstream?: UpstreamFlag;
}

/** How pflag's value types are read here. `version` is `--version`, which `parseArgs` answers itself. */
export const KIND_OF_UPSTREAM_TYPE: Readonly<Record<Exclude<UpstreamFlagType, "version">, FlagKind>> = {
  bool: "bool",
  string: "string",
  moduleSpec: "string",
  int: "int",
  int32: "int",
  level: "int",
  float32: "float",
  duration: "duration",
  ip: "ip",
  stringSlice: "list",
  intSlice: "intList",
  namedCertKey: "array",
  mapStringBool: "map",
  quantity: "quantity",
};

/** What flags of the Go CCM's command that change nothing here mean there, where worth saying. */
const IGNORED_NOTES: Readonly<Record<string, string>> = {
  "cert-dir": "directory for self-signed certificates (ours stay in memory)",
  "cidr-allocator-type": "the Go CCM's node IPAM always uses its own cloud allocator",
  "node-sync-period": "deprecated upstream, a no-op there too",
  "allow-untagged-cloud": "deprecated upstream",
};

const ACCEPTED = {
  bool: "use true or false; also 1, 0, t, f, T, F, TRUE, FALSE, True, False",
  duration: "use a Go duration such as 15s, 1m30s, 100ms or 2h",
  int: "use a whole number",
  float: "use a number",
  ip: "use an IP address, e.g. 0.0.0.0 or ::",
  intList: "use comma-separated whole numbers",
  list:
    'pflag reads lists as CSV: quote an item that holds a comma or a quote ("a,b"), doubling quotes in it',
  map: "use comma-separated key=true or key=false pairs",
  quantity: "use a quantity such as 512, 1K or 2Ki",
  array: "use CERT,KEY or CERT,KEY:DOMAIN,…",
} as const;

const QUANTITY = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[numkMGTPE])?$/;

function bad(what: string, text: string, kind: keyof typeof ACCEPTED): { problem: string } {
  return { problem: `invalid ${what} "${text}" (${ACCEPTED[kind]})` };
}

/** pflag's IntSlice: split on commas, each item a decimal whole number as Go's `strconv.Atoi` reads it. */
function readIntList(text: string): readonly number[] | { problem: string } {
  const ids = text.split(",").map((s) => /^[+-]?\d+$/.test(s) ? Number(s) : NaN);
  return ids.every(Number.isSafeInteger) ? ids : bad("list", text, "intList");
}

/** `--feature-gates`: comma-separated `key=bool` pairs, blanks around each part allowed, empty items skipped. */
function readPairs(text: string): readonly string[] | { problem: string } {
  const pairs = text.split(",").filter((s) => s !== "");
  const ok = pairs.every((s) =>
    s.includes("=") && parseGoBool(s.slice(s.indexOf("=") + 1).trim()) !== undefined
  );
  return ok ? pairs : bad("feature gates", text, "map");
}

/** One value of `kind` as Go's pflag reads it; a problem line (without the flag name) when it cannot. */
export function readValue(kind: FlagKind, text: string): FlagValue | { problem: string } {
  const or = <T>(v: T | undefined, what: string, k: keyof typeof ACCEPTED) => v ?? bad(what, text, k);
  switch (kind) {
    case "bool":
      return or(parseGoBool(text), "boolean", "bool");
    case "duration":
      return or(parseGoDuration(text), "duration", "duration");
    case "int":
      return or(parseGoInt(text), "integer", "int");
    case "float":
      return or(parseGoFloat(text), "number", "float");
    case "ip":
      return isIpAddress(text.trim()) ? text.trim() : bad("IP address", text, "ip");
    case "string":
      return text;
    case "list": {
      const items = readCsv(text);
      return typeof items === "string"
        ? { problem: `invalid list "${text}": ${items} (${ACCEPTED.list})` }
        : items;
    }
    case "intList":
      return text === "" ? bad("list", text, "intList") : readIntList(text);
    case "array":
      return /^[^,:]+,[^,:]+(:.*)?$/.test(text) ? [text] : bad("certificate and key", text, "array");
    case "map":
      return readPairs(text);
    case "quantity":
      return QUANTITY.test(text) ? text : bad("quantity", text, "quantity");
  }
}

function declared(group: Exclude<FlagGroup, "ignored">, decls: Readonly<Record<string, Decl<FlagKind>>>) {
  return Object.entries(decls).map(([name, d]): FlagSpec => ({ name, ...d, group }));
}

const LIST_KINDS: ReadonlySet<FlagKind> = new Set(["list", "intList", "array", "map"]);

/** An upstream flag not implemented here, with its default read as its kind. */
function ignored(u: UpstreamFlag & { type: Exclude<UpstreamFlagType, "version"> }): FlagSpec {
  const kind = KIND_OF_UPSTREAM_TYPE[u.type];
  const read = u.def === "" && LIST_KINDS.has(kind) ? [] : readValue(kind, u.def);
  if (typeof read === "object" && "problem" in read) {
    throw new TypeError(`--${u.name} default: ${read.problem}`);
  }
  const note = IGNORED_NOTES[u.name] ?? (u.deprecated ? "deprecated upstream" : "");
  return { name: u.name, kind, def: read, help: note, group: "ignored", upstream: u };
}

const IMPLEMENTED: readonly FlagSpec[] = [
  ...declared("linode", LINODE),
  ...declared("cloud", CLOUD),
  ...declared("leader", LEADER),
  ...declared("serve", SERVE),
  ...declared("log", LOG),
];

const UPSTREAM_INDEX = new Map(UPSTREAM_FLAGS.map((u) => [u.name, u]));
const IMPLEMENTED_NAMES = new Set(IMPLEMENTED.map((f) => f.name));

/** Every accepted flag, in `--help` order: the implemented ones, then the rest of the Go CCM's command. */
export const FLAGS: readonly FlagSpec[] = Object.freeze([
  ...IMPLEMENTED.map((f) => {
    const upstream = UPSTREAM_INDEX.get(f.name);
    return upstream ? { ...f, upstream } : f;
  }),
  ...UPSTREAM_FLAGS.filter((u) => !IMPLEMENTED_NAMES.has(u.name) && u.name !== "help")
    .flatMap((u) => u.type === "version" ? [] : [ignored({ ...u, type: u.type })]),
]);

/** Flags by name. */
export const FLAG_INDEX: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((f) => [f.name, f]));

/** Headings of the `--help` sections. */
export const FLAG_GROUP_TITLES: Readonly<Record<FlagGroup, string>> = {
  linode: "Linode flags",
  cloud: "Cloud controller flags",
  leader: "Leader election flags",
  serve: "Serving flags",
  log: "Logging flags",
  ignored: "Flags of the Go CCM's command that change nothing here (accepted; a warning at start when given)",
};
