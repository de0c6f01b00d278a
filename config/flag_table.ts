/**
 * The command-line flag table: the Go CCM's own flags, the upstream `k8s.io/cloud-provider` generic ones it
 * inherits (with the same defaults), and a few of ours, in `--help` order. Flags marked `ignored` are accepted
 * so manifests and Helm values keep working, but are not implemented here; each one given is warned about at
 * start (as the Go CCM warns about its deprecated cilium-bgp flags).
 */

/** How a flag's value is parsed (Go pflag types). */
export type FlagKind = "bool" | "string" | "int" | "float" | "duration" | "list" | "intList";

/** A parsed flag value: durations are milliseconds, lists are arrays. */
export type FlagValue = boolean | string | number | readonly string[] | readonly number[];

/** Where a flag is listed in `--help`. */
export type FlagGroup = "linode" | "cloud" | "leader" | "serve" | "log" | "ignored";

/** One flag: name without dashes, kind, upstream default and help line. */
export interface FlagSpec {
  readonly name: string;
  readonly kind: FlagKind;
  readonly def: FlagValue;
  readonly help: string;
  readonly group: FlagGroup;
}

type Row = readonly [name: string, kind: FlagKind, def: FlagValue, help: string];

function rows(group: FlagGroup, list: readonly Row[]): FlagSpec[] {
  return list.map(([name, kind, def, help]) => ({ name, kind, def, help, group }));
}

const LINODE: readonly Row[] = [
  [
    "enable-route-controller",
    "bool",
    false,
    "program pod CIDRs as VPC ip_ranges (needs --vpc-names or --vpc-ids)",
  ],
  ["vpc-names", "list", [], "comma-separated VPC labels whose routes are managed"],
  ["vpc-name", "string", "", "deprecated: use --vpc-names"],
  ["vpc-ids", "intList", [], "comma-separated VPC IDs (instead of --vpc-names; needs --subnet-ids)"],
  ["subnet-names", "list", ["default"], "comma-separated subnet labels whose routes are managed"],
  ["subnet-ids", "intList", [], "comma-separated subnet IDs (with --vpc-ids; overrides --subnet-names)"],
  [
    "load-balancer-type",
    "string",
    "nodebalancer",
    "LoadBalancer implementation: nodebalancer; cilium-bgp is not implemented (deprecated in the Go CCM): " +
    "warned at start and treated as nodebalancer",
  ],
  [
    "bgp-node-selector",
    "string",
    "",
    "not implemented (deprecated in the Go CCM, no effect there either): warned at start",
  ],
  [
    "ip-holder-suffix",
    "string",
    "",
    "not implemented (deprecated in the Go CCM, no effect there either): warned at start",
  ],
  [
    "default-nodebalancer-type",
    "string",
    "common",
    "type of new NodeBalancers: common, premium or premium_40gb",
  ],
  ["nodebalancer-tags", "list", [], "comma-separated tags put on every NodeBalancer"],
  [
    "nodebalancer-prefix",
    "string",
    "ccm",
    "label prefix of NodeBalancers (letters, digits, _ and -, at most 19)",
  ],
  ["linode-tag-filter", "string", "", "only Linodes carrying this tag are considered"],
  [
    "nodebalancer-backend-ipv4-subnet",
    "string",
    "",
    "IPv4 CIDR that NodeBalancer backend addresses must lie in",
  ],
  ["nodebalancer-backend-ipv4-subnet-id", "int", 0, "VPC subnet ID for NodeBalancer backends"],
  ["nodebalancer-backend-ipv4-subnet-name", "string", "", "VPC subnet label for NodeBalancer backends"],
  [
    "disable-nodebalancer-vpc-backends",
    "bool",
    false,
    "use private IPs, not VPC IPs, as NodeBalancer backends",
  ],
  [
    "enable-ipv6-for-loadbalancers",
    "bool",
    false,
    "report IPv4 and IPv6 ingress for every LoadBalancer Service",
  ],
  ["enable-ipv6-for-nodebalancer-backends", "bool", false, "use IPv6 addresses as NodeBalancer backends"],
  [
    "cleanup-orphaned-nodebalancers",
    "bool",
    false,
    "ours: delete NodeBalancers carrying this cluster's ownership tag that no Service is tied to",
  ],
  ["enable-token-health-checker", "bool", false, "check the Linode API token at start and every 5 minutes"],
  ["linodego-debug", "bool", false, "log every Linode API request: method, route, status, duration"],
];

const CLOUD: readonly Row[] = [
  ["cloud-provider", "string", "linode", "cloud provider name; must be linode"],
  ["cloud-config", "string", "", "cloud configuration file; accepted and ignored (configure through env)"],
  ["kubeconfig", "string", "", "kubeconfig file; else KUBECONFIG, else in-cluster"],
  ["master", "string", "", "Kubernetes API server address; overrides the kubeconfig's server"],
  ["cluster-name", "string", "kubernetes", "name of the cluster"],
  [
    "controllers",
    "list",
    ["*"],
    "controllers to run: * for all, name to enable, -name to disable " +
    "(cloud-node, cloud-node-lifecycle, route, service, nodeipam: on with --allocate-node-cidrs)",
  ],
  ["configure-cloud-routes", "bool", true, "let the route controller program routes"],
  [
    "allocate-node-cidrs",
    "bool",
    false,
    "allocate pod CIDRs to Nodes (the nodeipam controller; needs --cluster-cidr)",
  ],
  ["cluster-cidr", "string", "", "pod CIDR(s) of the cluster, comma-separated for dual stack"],
  ["node-cidr-mask-size-ipv4", "int", 0, "IPv4 pod CIDR size per node (0: 24)"],
  ["node-cidr-mask-size-ipv6", "int", 0, "IPv6 pod CIDR size per node (0: 112)"],
  ["disable-ipv6-node-cidr-allocation", "bool", false, "allocate only IPv4 pod CIDRs"],
  ["node-monitor-period", "duration", 5_000, "period of the node lifecycle check"],
  ["node-status-update-frequency", "duration", 300_000, "period of node address refresh"],
  ["route-reconciliation-period", "duration", 10_000, "period of route reconciliation"],
  ["concurrent-service-syncs", "int", 1, "Services reconciled in parallel"],
  ["concurrent-node-syncs", "int", 1, "Nodes initialised in parallel"],
  ["dev", "bool", false, "ours: run against the built-in Linode and Kubernetes emulators"],
  [
    "dry-run",
    "bool",
    false,
    "ours: shadow mode: decide and serve the plan on /plan, write nothing, take no part in leader election",
  ],
];

const LEADER: readonly Row[] = [
  ["leader-elect", "bool", true, "run controllers only while holding the leader Lease"],
  ["leader-elect-lease-duration", "duration", 15_000, "how long non-leaders wait before taking over"],
  ["leader-elect-renew-deadline", "duration", 10_000, "how long the leader tries to renew before giving up"],
  ["leader-elect-retry-period", "duration", 2_000, "wait between acquire and renew attempts"],
  ["leader-elect-resource-lock", "string", "leases", "lock object type; only leases"],
  ["leader-elect-resource-name", "string", "cloud-controller-manager", "name of the Lease"],
  ["leader-elect-resource-namespace", "string", "kube-system", "namespace of the Lease"],
];

const SERVE: readonly Row[] = [
  ["bind-address", "string", "0.0.0.0", "address of the HTTPS health and metrics server"],
  ["secure-port", "int", 10258, "HTTPS port of /healthz, /readyz, /metrics (0 disables)"],
  ["tls-cert-file", "string", "", "serving certificate (PEM); self-signed when empty"],
  ["tls-private-key-file", "string", "", "serving private key (PEM)"],
  [
    "authentication-kubeconfig",
    "string",
    "",
    "kubeconfig for the TokenReviews of /metrics and /plan callers (empty: the CCM's own kubeconfig)",
  ],
  [
    "authorization-kubeconfig",
    "string",
    "",
    "kubeconfig for the SubjectAccessReviews of /metrics and /plan callers (empty: the CCM's own)",
  ],
  [
    "authorization-always-allow-paths",
    "list",
    ["/healthz", "/readyz", "/livez"],
    "paths served without authentication or authorisation; a trailing * matches a prefix",
  ],
  ["authentication-token-webhook-cache-ttl", "duration", 10_000, "how long a TokenReview answer is cached"],
  [
    "authorization-webhook-cache-authorized-ttl",
    "duration",
    10_000,
    "how long an allowing SubjectAccessReview answer is cached",
  ],
  [
    "authorization-webhook-cache-unauthorized-ttl",
    "duration",
    10_000,
    "how long a denying SubjectAccessReview answer is cached",
  ],
  [
    "authentication-skip-lookup",
    "bool",
    false,
    "accepted: only bearer tokens are authenticated, so no client CA is looked up in the cluster",
  ],
  [
    "authentication-tolerate-lookup-failure",
    "bool",
    false,
    "accepted: no client CA lookup is made (see --authentication-skip-lookup)",
  ],
];

const LOG: readonly Row[] = [
  ["v", "int", 0, "log verbosity: 0-3 info, 4-5 debug, 6+ trace"],
  ["log-format", "string", "json", "ours: json (one object per line) or text"],
  ["logging-format", "string", "", "upstream spelling of --log-format: text or json (--log-format wins)"],
];

/** Upstream generic flags accepted for compatibility but not implemented: they change nothing here. */
const IGNORED: readonly Row[] = [
  ["port", "int", 0, "insecure port (removed upstream)"],
  ["cert-dir", "string", "", "directory for self-signed certificates (ours stay in memory)"],
  ["allow-untagged-cloud", "bool", false, ""],
  ["client-ca-file", "string", "", ""],
  ["requestheader-client-ca-file", "string", "", ""],
  ["requestheader-allowed-names", "list", [], ""],
  ["requestheader-username-headers", "list", ["x-remote-user"], ""],
  ["requestheader-group-headers", "list", ["x-remote-group"], ""],
  ["requestheader-extra-headers-prefix", "list", ["x-remote-extra-"], ""],
  ["requestheader-uid-headers", "list", [], ""],
  ["use-service-account-credentials", "bool", false, ""],
  ["external-cloud-volume-plugin", "string", "", ""],
  ["min-resync-period", "duration", 43_200_000, ""],
  ["controller-start-interval", "duration", 0, ""],
  ["kube-api-qps", "float", 20, ""],
  ["kube-api-burst", "int", 30, ""],
  ["kube-api-content-type", "string", "application/vnd.kubernetes.protobuf", ""],
  ["profiling", "bool", true, ""],
  ["contention-profiling", "bool", false, ""],
  ["enable-leader-migration", "bool", false, ""],
  ["leader-migration-config", "string", "", ""],
  ["feature-gates", "string", "", ""],
  ["tls-cipher-suites", "list", [], ""],
  ["tls-min-version", "string", "", ""],
  ["tls-sni-cert-key", "list", [], ""],
  ["http2-max-streams-per-connection", "int", 0, ""],
  ["permit-port-sharing", "bool", false, ""],
  ["permit-address-sharing", "bool", false, ""],
  ["webhooks", "list", ["*"], ""],
  ["webhook-bind-address", "string", "0.0.0.0", ""],
  ["webhook-secure-port", "int", 10260, ""],
  ["webhook-cert-dir", "string", "", ""],
  ["webhook-tls-cert-file", "string", "", ""],
  ["webhook-tls-private-key-file", "string", "", ""],
  ["show-hidden-metrics-for-version", "string", "", ""],
  ["disabled-metrics", "list", [], ""],
  ["allow-metric-labels", "list", [], ""],
  ["allow-metric-labels-manifest", "string", "", ""],
  ["vmodule", "string", "", ""],
  ["log-flush-frequency", "duration", 5_000, ""],
  ["log-json-split-stream", "bool", false, ""],
  ["log-text-split-stream", "bool", false, ""],
  ["add-dir-header", "bool", false, ""],
  ["alsologtostderr", "bool", false, ""],
  ["logtostderr", "bool", true, ""],
  ["log-backtrace-at", "string", "", ""],
  ["log-dir", "string", "", ""],
  ["log-file", "string", "", ""],
  ["log-file-max-size", "int", 1800, ""],
  ["one-output", "bool", false, ""],
  ["skip-headers", "bool", false, ""],
  ["skip-log-headers", "bool", false, ""],
  ["stderrthreshold", "string", "2", ""],
];

/** Every flag, in `--help` order. */
export const FLAGS: readonly FlagSpec[] = Object.freeze([
  ...rows("linode", LINODE),
  ...rows("cloud", CLOUD),
  ...rows("leader", LEADER),
  ...rows("serve", SERVE),
  ...rows("log", LOG),
  ...rows("ignored", IGNORED),
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
  ignored: "Accepted for compatibility but not implemented (no effect; a warning at start when given)",
};
