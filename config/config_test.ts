import assert from "node:assert/strict";
import { inspect } from "node:util";
import {
  checkTokenFile,
  type Config,
  ConfigError,
  CONTROLLER_NAMES,
  describeConfig,
  type Env,
  helpText,
  parseConfig,
} from "./config.ts";
import { FLAGS } from "./flags.ts";
import { VERSION } from "./version.ts";

const TOKEN = "tok-0123456789abcdef-SECRET";
const ENV: Env = {
  LINODE_API_TOKEN: TOKEN,
  LINODE_REGION: "us-east",
  KUBECONFIG: "/etc/kubernetes/ccm.conf",
};

function run(args: string[], env: Env = ENV): Config {
  const result = parseConfig(args, env);
  assert.equal(result.kind, "run");
  if (result.kind !== "run") throw new Error("unreachable");
  return result.config;
}

function problems(args: string[], env: Env = ENV): readonly string[] {
  try {
    parseConfig(args, env);
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.problems;
  }
  assert.fail(`no ConfigError for ${args.join(" ")}`);
}

Deno.test("parseConfig() applies the upstream and Go CCM defaults", () => {
  const c = run([]);
  assert.deepEqual(describeConfig(c), {
    dev: false,
    dryRun: false,
    clusterName: "kubernetes",
    controllers: ["cloud-node", "cloud-node-lifecycle", "service"],
    leaderElection: {
      enabled: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      resourceLock: "leases",
      namespace: "kube-system",
      name: "cloud-controller-manager",
    },
    vpc: { names: [], ids: [], subnetNames: ["default"], subnetIds: [] },
    nodes: {
      monitorPeriodMs: 5_000,
      statusUpdateFrequencyMs: 300_000,
      concurrentSyncs: 1,
      metadataUpdates: true,
    },
    routes: {
      enableRouteController: false,
      configureCloudRoutes: true,
      reconciliationPeriodMs: 10_000,
      clusterCidrs: [],
      allocateNodeCidrs: false,
      nodeCidrMaskSizeIpv4: 24,
      nodeCidrMaskSizeIpv6: 112,
      allocateIpv6NodeCidrs: true,
    },
    services: {
      concurrentSyncs: 1,
      loadBalancerType: "nodebalancer",
      defaultNodeBalancerType: "common",
      nodeBalancerTags: [],
      nodeBalancerPrefix: "ccm",
      backendIpv4Subnet: null,
      backendIpv4SubnetId: null,
      backendIpv4SubnetName: null,
      disableVpcBackends: false,
      enableIpv6ForLoadBalancers: false,
      enableIpv6ForNodeBalancerBackends: false,
      cleanupOrphanedNodeBalancers: false,
      nodeBalancerIdAdoptsAny: false,
    },
    serve: {
      auth: {
        authenticationKubeconfig: null,
        authorizationKubeconfig: null,
        alwaysAllowPaths: ["/healthz", "/readyz", "/livez"],
        tokenCacheTtlMs: 10_000,
        allowCacheTtlMs: 10_000,
        denyCacheTtlMs: 10_000,
      },
      bindAddress: "0.0.0.0",
      securePort: 10258,
      tlsCertFile: null,
      tlsPrivateKeyFile: null,
    },
    log: { format: "json", verbosity: 0, level: "info" },
    kube: { kind: "kubeconfig", kubeconfig: "/etc/kubernetes/ccm.conf", from: "env" },
    linode: {
      token: { kind: "env", token: "***" },
      region: "us-east",
      url: "https://api.linode.com/v4",
      requestTimeoutMs: 120_000,
      instanceCacheTtlMs: 15_000,
      routesCacheTtlMs: 60_000,
      externalSubnet: null,
      hostnameOnlyIngress: false,
      debug: false,
      tokenHealthCheck: false,
      tagFilter: null,
    },
    sentry: null,
    ignoredFlags: [],
    warnings: [],
  });
  assert.equal(c.linode.token.kind === "env" && c.linode.token.token.reveal(), TOKEN);
});

/** [args, what to read from the config, expected value]. */
const FORMS: [string[], (c: Config) => unknown, unknown][] = [
  [["--leader-elect"], (c) => c.leaderElection.enabled, true],
  [["--leader-elect=false"], (c) => c.leaderElection.enabled, false],
  [["--leader-elect=0"], (c) => c.leaderElection.enabled, false],
  [["--leader-elect=f"], (c) => c.leaderElection.enabled, false],
  [["--leader-elect=F"], (c) => c.leaderElection.enabled, false],
  [["--leader-elect=FALSE"], (c) => c.leaderElection.enabled, false],
  [["--leader-elect=False"], (c) => c.leaderElection.enabled, false],
  [["--leader-elect=TRUE"], (c) => c.leaderElection.enabled, true],
  [["--leader-elect=t"], (c) => c.leaderElection.enabled, true],
  [["-leader-elect=false"], (c) => c.leaderElection.enabled, false],
  [["--leader_elect=false"], (c) => c.leaderElection.enabled, false],
  [["--", "--leader-elect=false"], (c) => c.leaderElection.enabled, false],
  [["--cluster-name=prod"], (c) => c.clusterName, "prod"],
  [["--cluster-name", "prod"], (c) => c.clusterName, "prod"],
  [["-cluster-name", "prod"], (c) => c.clusterName, "prod"],
  [["-cluster-name=prod"], (c) => c.clusterName, "prod"],
  [["--leader-elect-lease-duration=1m30s"], (c) => c.leaderElection.leaseDurationMs, 90_000],
  [
    ["--leader-elect-renew-deadline", "12.5s", "--leader-elect-lease-duration=20s"],
    (c) => c.leaderElection.renewDeadlineMs,
    12_500,
  ],
  [["--leader-elect-retry-period=100ms"], (c) => c.leaderElection.retryPeriodMs, 100],
  [
    ["--leader-elect-resource-namespace=ccm", "--leader-elect-resource-name=lock"],
    (c) => [c.leaderElection.namespace, c.leaderElection.name],
    ["ccm", "lock"],
  ],
  [
    ["--leader-elect=false", "--leader-elect-lease-duration=1s"],
    (c) => c.leaderElection.leaseDurationMs,
    1_000,
  ],
  [["--node-monitor-period=1s"], (c) => c.nodes.monitorPeriodMs, 1_000],
  [["--node-status-update-frequency=2h"], (c) => c.nodes.statusUpdateFrequencyMs, 7_200_000],
  [["--route-reconciliation-period=30s"], (c) => c.routes.reconciliationPeriodMs, 30_000],
  [["--concurrent-service-syncs=4"], (c) => c.services.concurrentSyncs, 4],
  [["--dry-run"], (c) => [c.dryRun, c.leaderElection.enabled], [true, true]],
  [["--cleanup-orphaned-nodebalancers"], (c) => c.services.cleanupOrphanedNodeBalancers, true],
  [["--nodebalancer-id-adopts-any"], (c) => c.services.nodeBalancerIdAdoptsAny, true],
  [["--concurrent-node-syncs", "3"], (c) => c.nodes.concurrentSyncs, 3],
  [["--v=4"], (c) => [c.log.verbosity, c.log.level], [4, "debug"]],
  [["--v", "6"], (c) => [c.log.verbosity, c.log.level], [6, "trace"]],
  [["-v=2"], (c) => c.log.verbosity, 2],
  [["--log-format=text"], (c) => c.log.format, "text"],
  [["--logging-format=text"], (c) => c.log.format, "text"],
  [["--logging-format=json", "--log-format=text"], (c) => c.log.format, "text"],
  [["--secure-port=10253"], (c) => c.serve.securePort, 10253],
  [["--secure-port=0"], (c) => c.serve.securePort, null],
  [["--bind-address=::"], (c) => c.serve.bindAddress, "::"],
  [
    ["--tls-cert-file=/c.pem", "--tls-private-key-file=/k.pem"],
    (c) => [c.serve.tlsCertFile, c.serve.tlsPrivateKeyFile],
    ["/c.pem", "/k.pem"],
  ],
  [["--controllers=*,-service"], (c) => [...c.controllers], ["cloud-node", "cloud-node-lifecycle"]],
  [["--controllers=cloud-node"], (c) => [...c.controllers], ["cloud-node"]],
  [["--controllers=service-lb-controller,cloud-node-controller"], (c) => [...c.controllers], [
    "cloud-node",
    "service",
  ]],
  [["--controllers=cloud-node-lifecycle", "--controllers=service"], (c) => [...c.controllers], [
    "cloud-node-lifecycle",
    "service",
  ]],
  [["--controllers="], (c) => [...c.controllers], []],
  [
    ["--enable-route-controller", "--vpc-names=vpc1,vpc2", "--cluster-cidr=10.192.0.0/10"],
    (c) => [[...c.controllers], c.vpc.names, c.routes.enableRouteController],
    [
      CONTROLLER_NAMES.filter((n) => n !== "nodeipam"),
      ["vpc1", "vpc2"],
      true,
    ],
  ],
  [["--vpc-ids=1,2", "--subnet-ids=3"], (c) => c.vpc, {
    names: [],
    ids: [1, 2],
    subnetNames: [],
    subnetIds: [3],
  }],
  [["--vpc-name=old"], (c) => [c.vpc.names, c.warnings], [["old"], [
    "--vpc-name is deprecated: use --vpc-names",
  ]]],
  [["--subnet-names=a,b"], (c) => c.vpc.subnetNames, ["a", "b"]],
  [["--cluster-cidr=10.192.0.0/10,fd00::/56"], (c) => c.routes.clusterCidrs, ["10.192.0.0/10", "fd00::/56"]],
  [
    ["--allocate-node-cidrs", "--cluster-cidr=10.192.0.0/10", "--node-cidr-mask-size-ipv4=25"],
    (c) => [c.routes.allocateNodeCidrs, c.routes.nodeCidrMaskSizeIpv4],
    [true, 25],
  ],
  [["--disable-ipv6-node-cidr-allocation"], (c) => c.routes.allocateIpv6NodeCidrs, false],
  [["--configure-cloud-routes=false"], (c) => c.routes.configureCloudRoutes, false],
  [["--nodebalancer-tags=a,b"], (c) => c.services.nodeBalancerTags, ["a", "b"]],
  [["--nodebalancer-tags=a b"], (c) => c.services.nodeBalancerTags, ["a b"]],
  [
    [
      "--load-balancer-type=cilium-bgp",
      "--bgp-node-selector=bgp=true",
      `--ip-holder-suffix=${"x".repeat(30)}`,
    ],
    (c) => [c.services.loadBalancerType, ...c.warnings],
    [
      "nodebalancer",
      "--load-balancer-type=cilium-bgp is not implemented (deprecated in the Go CCM); using nodebalancer",
      "--bgp-node-selector is not implemented (deprecated in the Go CCM) and has no effect",
      "--ip-holder-suffix is not implemented (deprecated in the Go CCM) and has no effect",
    ],
  ],
  [["--default-nodebalancer-type=premium"], (c) => c.services.defaultNodeBalancerType, "premium"],
  [["--default-nodebalancer-type=premium_40gb"], (c) => c.services.defaultNodeBalancerType, "premium_40gb"],
  [["--default-nodebalancer-type=premium_40GB"], (c) => c.services.defaultNodeBalancerType, "premium_40gb"],
  [["--nodebalancer-prefix=my_cluster-1"], (c) => c.services.nodeBalancerPrefix, "my_cluster-1"],
  [
    ["--nodebalancer-backend-ipv4-subnet=10.100.0.0/24"],
    (c) => c.services.backendIpv4Subnet,
    "10.100.0.0/24",
  ],
  [["--nodebalancer-backend-ipv4-subnet-id=77"], (c) => c.services.backendIpv4SubnetId, 77],
  [["--nodebalancer-backend-ipv4-subnet-name=nb"], (c) => c.services.backendIpv4SubnetName, "nb"],
  [["--disable-nodebalancer-vpc-backends"], (c) => c.services.disableVpcBackends, true],
  [["--enable-ipv6-for-loadbalancers"], (c) => c.services.enableIpv6ForLoadBalancers, true],
  [
    ["--enable-ipv6-for-nodebalancer-backends=true"],
    (c) => c.services.enableIpv6ForNodeBalancerBackends,
    true,
  ],
  [
    ["--enable-token-health-checker", "--linodego-debug"],
    (c) => [c.linode.tokenHealthCheck, c.linode.debug],
    [true, true],
  ],
  [["--linode-tag-filter=k8s"], (c) => c.linode.tagFilter, "k8s"],
  [["--cloud-provider=linode"], (c) => c.ignoredFlags, []],
  [[
    "--cloud-config=/etc/cloud.conf",
    "--webhook-secure-port=0",
    '--authorization-always-allow-paths="/metrics"',
  ], (
    c,
  ) => c.ignoredFlags, ["--cloud-config", "--webhook-secure-port"]],
  // pflag reads string slices as CSV: a quoted item may hold a comma, nothing is trimmed, an empty item stays.
  [['--nodebalancer-tags="a,b",c'], (c) => c.services.nodeBalancerTags, ["a,b", "c"]],
  [["--nodebalancer-tags=a, b"], (c) => c.services.nodeBalancerTags, ["a", " b"]],
  [["--authorization-always-allow-paths=/healthz,"], (c) => c.serve.auth.alwaysAllowPaths, ["/healthz", "/"]],
  // Upstream flags the Go CCM accepts and this CCM does not implement: accepted, their values consumed, warned.
  [["--cidr-allocator-type", "RangeAllocator", "--node-sync-period", "0s", "--v", "2"], (c) => [
    c.ignoredFlags,
    c.log.verbosity,
  ], [["--cidr-allocator-type", "--node-sync-period"], 2]],
  // The Go CCM Helm chart's quoted value: pflag's CSV reading drops the quotes, so does ours.
  [['--authorization-always-allow-paths="/metrics"'], (c) => c.serve.auth.alwaysAllowPaths, ["/metrics"]],
  [[], (c) => c.serve.auth, {
    authenticationKubeconfig: null,
    authorizationKubeconfig: null,
    alwaysAllowPaths: ["/healthz", "/readyz", "/livez"],
    tokenCacheTtlMs: 10_000,
    allowCacheTtlMs: 10_000,
    denyCacheTtlMs: 10_000,
  }],
  [
    ["--authorization-always-allow-paths=healthz,/debug/*", "--authentication-token-webhook-cache-ttl=0s"],
    (c) => [c.serve.auth.alwaysAllowPaths, c.serve.auth.tokenCacheTtlMs],
    [["/healthz", "/debug/*"], 0],
  ],
  [["--kubeconfig=/a.conf"], (c) => c.kube, { kind: "kubeconfig", kubeconfig: "/a.conf", from: "flag" }],
  [["--kubeconfig=/a.conf", "--master=https://127.0.0.1:6443"], (c) => c.kube, {
    kind: "kubeconfig",
    kubeconfig: "/a.conf",
    from: "flag",
    master: "https://127.0.0.1:6443",
  }],
];
for (const [args, read, want] of FORMS) {
  Deno.test(`parseConfig() reads ${args.join(" ")}`, () => assert.deepEqual(read(run(args)), want));
}

/** The arguments the Go CCM's Helm chart and manifests pass are accepted as they are. */
Deno.test("parseConfig() accepts the Helm chart's arguments", () => {
  const c = run([
    "--leader-elect-resource-lock=leases",
    "--v=3",
    "--secure-port=10253",
    "--webhook-secure-port=0",
    "--linodego-debug=false",
    "--allocate-node-cidrs=true",
    "--node-cidr-mask-size-ipv4=24",
    "--enable-route-controller=true",
    "--configure-cloud-routes=true",
    "--route-reconciliation-period=30s",
    "--vpc-names=cluster-vpc",
    "--subnet-names=default",
    "--cluster-cidr=10.192.0.0/10",
    "--enable-token-health-checker=true",
    "--nodebalancer-tags=team-a env-prod",
    '--authorization-always-allow-paths="/metrics"',
    "--default-nodebalancer-type=common",
    "--enable-ipv6-for-loadbalancers=true",
    "--nodebalancer-backend-ipv4-subnet=10.100.0.0/24",
    "--disable-nodebalancer-vpc-backends=true",
    "--nodebalancer-backend-ipv4-subnet-name=nb-backends",
  ]);
  assert.ok(c.controllers.has("route"));
  assert.equal(c.serve.securePort, 10253);
  assert.deepEqual(c.ignoredFlags, ["--webhook-secure-port"]);
});

/** [name, args, environment, expected problem]. */
const ERRORS: [string, string[], Env, string | RegExp][] = [
  [
    "an unknown flag with a suggestion",
    ["--leader-elct"],
    ENV,
    "--leader-elct: unknown flag (did you mean --leader-elect?)",
  ],
  ["an unknown flag without one", ["--zzzzzzzzzzzz=1"], ENV, "--zzzzzzzzzzzz: unknown flag (see --help)"],
  [
    "a bad boolean",
    ["--leader-elect=yes"],
    ENV,
    /^--leader-elect: invalid boolean "yes" \(use true or false/,
  ],
  ["an empty boolean", ["--leader-elect="], ENV, /^--leader-elect: invalid boolean ""/],
  ["a boolean as a separate word", ["--leader-elect", "false"], ENV, /^unexpected argument "false"/],
  ["a positional argument", ["run"], ENV, /^unexpected argument "run"/],
  ["a bad flag syntax", ["---v=1"], ENV, "---v=1: bad flag syntax (use --name=value)"],
  [
    "a bare number as duration",
    ["--leader-elect-lease-duration=15"],
    ENV,
    /^--leader-elect-lease-duration: invalid duration "15" \(use a Go duration/,
  ],
  [
    "a word as duration",
    ["--node-monitor-period=soon"],
    ENV,
    /^--node-monitor-period: invalid duration "soon"/,
  ],
  [
    "a zero period",
    ["--route-reconciliation-period=0s"],
    ENV,
    /^--route-reconciliation-period: must be above 0/,
  ],
  [
    "a negative period",
    ["--node-monitor-period=-5s"],
    ENV,
    /^--node-monitor-period: must be above 0, got -5s/,
  ],
  [
    "a bad integer",
    ["--secure-port=https"],
    ENV,
    '--secure-port: invalid integer "https" (use a whole number)',
  ],
  [
    "a port out of range",
    ["--secure-port=70000"],
    ENV,
    "--secure-port: 70000 is out of range (use 0 to 65535)",
  ],
  [
    "zero service workers",
    ["--concurrent-service-syncs=0"],
    ENV,
    /^--concurrent-service-syncs: 0 is out of range/,
  ],
  ["a negative verbosity", ["--v=-1"], ENV, /^--v: -1 is out of range/],
  ["a missing value", ["--cluster-name"], ENV, "--cluster-name: needs a value (--cluster-name=VALUE)"],
  ["a bad CIDR", ["--cluster-cidr=10.0.0.0/33"], ENV, /^--cluster-cidr: invalid CIDR "10.0.0.0\/33"/],
  [
    "two IPv4 cluster CIDRs",
    ["--cluster-cidr=10.0.0.0/8,10.1.0.0/16"],
    ENV,
    /^--cluster-cidr: at most one IPv4/,
  ],
  [
    "a bad mask size",
    ["--node-cidr-mask-size-ipv4=33"],
    ENV,
    /^--node-cidr-mask-size-ipv4: 33 is out of range/,
  ],
  [
    "a bad load balancer type",
    ["--load-balancer-type=metallb"],
    ENV,
    '--load-balancer-type: invalid value "metallb" (use nodebalancer or cilium-bgp)',
  ],
  [
    "a bad NodeBalancer type",
    ["--default-nodebalancer-type=huge"],
    ENV,
    /^--default-nodebalancer-type: invalid value "huge" \(use common, premium, premium_40gb\)/,
  ],
  ["a bad log format", ["--log-format=xml"], ENV, '--log-format: invalid value "xml" (use json or text)'],
  [
    "another cloud provider",
    ["--cloud-provider=aws"],
    ENV,
    '--cloud-provider: unsupported provider "aws" (only linode)',
  ],
  [
    "a bad resource lock",
    ["--leader-elect-resource-lock=endpoints"],
    ENV,
    '--leader-elect-resource-lock: unsupported lock "endpoints" (only leases)',
  ],
  [
    "an empty lock namespace",
    ["--leader-elect-resource-namespace="],
    ENV,
    /^--leader-elect-resource-namespace: must not be empty/,
  ],
  [
    "a lease not above the renew deadline",
    ["--leader-elect-lease-duration=10s"],
    ENV,
    /^--leader-elect-lease-duration: must exceed --leader-elect-renew-deadline \(10s\)/,
  ],
  [
    "a renew deadline within 1.2 retry periods",
    ["--leader-elect-retry-period=9s"],
    ENV,
    /^--leader-elect-renew-deadline: must exceed 1\.2 × --leader-elect-retry-period \(9s\)/,
  ],
  [
    "an unknown controller",
    ["--controllers=*,nodes"],
    ENV,
    /^--controllers: unknown controller "nodes" \(use \*, cloud-node, cloud-node-lifecycle, route, service/,
  ],
  [
    "an unknown disabled controller",
    ["--controllers=-nodes"],
    ENV,
    /^--controllers: unknown controller "-nodes"/,
  ],
  [
    "VPC names and IDs together",
    ["--vpc-names=a", "--vpc-ids=1", "--subnet-ids=2"],
    ENV,
    "--vpc-ids, --vpc-names: cannot have both vpc-ids and vpc-names set",
  ],
  ["VPC IDs without subnet IDs", ["--vpc-ids=1"], ENV, "--vpc-ids: vpc-ids cannot be set without subnet-ids"],
  [
    "subnet IDs without VPC IDs",
    ["--subnet-ids=1"],
    ENV,
    "--subnet-ids: subnet-ids cannot be set without vpc-ids",
  ],
  [
    "a non-numeric VPC ID",
    ["--vpc-ids=1,abc"],
    ENV,
    /^--vpc-ids: invalid list "1,abc" \(use comma-separated whole numbers\)/,
  ],
  [
    "a zero subnet ID",
    ["--vpc-ids=1", "--subnet-ids=0"],
    ENV,
    "--subnet-ids: invalid ID 0 (use positive integers)",
  ],
  [
    "both VPC name flags",
    ["--vpc-name=a", "--vpc-names=b"],
    ENV,
    "--vpc-name, --vpc-names: both are set (use only --vpc-names)",
  ],
  [
    "routes without a VPC",
    ["--enable-route-controller", "--cluster-cidr=10.0.0.0/8"],
    ENV,
    "--enable-route-controller: cannot enable route controller as vpc-names is empty (set --vpc-names or --vpc-ids)",
  ],
  [
    "routes with subnet names but no VPC",
    ["--enable-route-controller", "--subnet-names=s", "--cluster-cidr=10.0.0.0/8"],
    ENV,
    "--subnet-names: subnet-names cannot be set without vpc-names",
  ],
  [
    "routes without a cluster CIDR",
    ["--enable-route-controller", "--vpc-names=v"],
    ENV,
    /^--cluster-cidr: needed by the route controller/,
  ],
  [
    "node CIDRs without a cluster CIDR",
    ["--allocate-node-cidrs"],
    ENV,
    "--allocate-node-cidrs: needs --cluster-cidr",
  ],
  [
    "a long NodeBalancer prefix",
    ["--nodebalancer-prefix=abcdefghijklmnopqrst"],
    ENV,
    /^--nodebalancer-prefix: invalid prefix/,
  ],
  [
    "a NodeBalancer prefix with symbols",
    ["--nodebalancer-prefix=a+b"],
    ENV,
    /^--nodebalancer-prefix: invalid prefix "a\+b"/,
  ],
  [
    "an empty NodeBalancer prefix",
    ["--nodebalancer-prefix="],
    ENV,
    /^--nodebalancer-prefix: invalid prefix ""/,
  ],
  [
    "an IPv6 backend subnet",
    ["--nodebalancer-backend-ipv4-subnet=fd00::/64"],
    ENV,
    /^--nodebalancer-backend-ipv4-subnet: invalid IPv4 CIDR/,
  ],
  [
    "backend subnet ID and name",
    ["--nodebalancer-backend-ipv4-subnet-id=1", "--nodebalancer-backend-ipv4-subnet-name=a"],
    ENV,
    /both are set \(use one\)$/,
  ],
  [
    "a * inside an always-allowed path",
    ["--authorization-always-allow-paths=/healthz,/de*bug"],
    ENV,
    '--authorization-always-allow-paths: "/de*bug": * is only allowed at the end (use e.g. /healthz,/readyz,/livez)',
  ],
  [
    "a negative review cache TTL",
    ["--authorization-webhook-cache-authorized-ttl=-1s"],
    ENV,
    "--authorization-webhook-cache-authorized-ttl: -1000 ms is out of range (use 0s to 24h)",
  ],
  [
    "a certificate without a key",
    ["--tls-cert-file=/c.pem"],
    ENV,
    "--tls-cert-file, --tls-private-key-file: set both or neither",
  ],
  [
    "a host name as bind address",
    ["--bind-address=localhost"],
    ENV,
    /^--bind-address: invalid IP address "localhost"/,
  ],
  ["a bad --version value", ["--version=maybe"], ENV, /^--version: invalid value "maybe"/],
  ["a missing region", [], { LINODE_API_TOKEN: TOKEN, KUBECONFIG: "/k" }, /^LINODE_REGION: not set/],
  [
    "no token source",
    [],
    { LINODE_REGION: "us-east", KUBECONFIG: "/k" },
    /^LINODE_API_TOKEN: not set, and the token file \/var\/run\/secrets\/linode\/api-token cannot be used/,
  ],
  [
    "a plain-http remote API",
    [],
    { ...ENV, LINODE_URL: "http://api.linode.com/v4" },
    /^LINODE_URL: http:\/\/ is only allowed for loopback hosts, not api\.linode\.com/,
  ],
  [
    "an API URL without version",
    [],
    { ...ENV, LINODE_URL: "https://api.linode.com" },
    /^LINODE_URL: no API version/,
  ],
  [
    "a zero request timeout",
    [],
    { ...ENV, LINODE_REQUEST_TIMEOUT_SECONDS: "0" },
    /^LINODE_REQUEST_TIMEOUT_SECONDS: invalid value "0"/,
  ],
  [
    "a word as cache TTL",
    [],
    { ...ENV, LINODE_INSTANCE_CACHE_TTL: "15s" },
    /^LINODE_INSTANCE_CACHE_TTL: invalid value "15s" \(use a whole number of seconds/,
  ],
  [
    "a bad routes cache TTL",
    [],
    { ...ENV, LINODE_ROUTES_CACHE_TTL_SECONDS: "-1" },
    /^LINODE_ROUTES_CACHE_TTL_SECONDS: invalid value "-1"/,
  ],
  [
    "a bad external subnet",
    [],
    { ...ENV, LINODE_EXTERNAL_SUBNET: "172.24.0.0" },
    /^LINODE_EXTERNAL_SUBNET: invalid IPv4 CIDR "172\.24\.0\.0"/,
  ],
  [
    "a bad ingress boolean",
    [],
    { ...ENV, LINODE_HOSTNAME_ONLY_INGRESS: "yes" },
    /^LINODE_HOSTNAME_ONLY_INGRESS: invalid boolean "yes"/,
  ],
  [
    "no Kubernetes API",
    [],
    { LINODE_API_TOKEN: TOKEN, LINODE_REGION: "us-east" },
    /^--kubeconfig: no Kubernetes API to talk to/,
  ],
];
for (const [name, args, env, want] of ERRORS) {
  Deno.test(`parseConfig() rejects ${name}`, () => {
    const got = problems(args, env);
    assert.equal(got.length, 1, got.join("\n"));
    if (typeof want === "string") assert.equal(got[0], want);
    else assert.match(got[0] ?? "", want);
  });
}

Deno.test("parseConfig() reports every problem at once, one line each", () => {
  const env = { LINODE_URL: "http://example.com/v4", KUBECONFIG: "/k" };
  const got = problems(["--leader-elct", "--v=x", "--controllers=nodes", "--cluster-cidr=1.2.3.4/40"], env);
  assert.equal(got.length, 7, got.join("\n"));
  for (
    const start of [
      "--leader-elct:",
      "--v:",
      "--controllers:",
      "--cluster-cidr:",
      "LINODE_REGION:",
      "LINODE_URL:",
    ]
  ) {
    assert.ok(got.some((line) => line.startsWith(start)), start);
  }
  const error = (() => {
    try {
      parseConfig(["--v=x", "--leader-elct"], ENV);
    } catch (e) {
      return e;
    }
  })();
  assert.ok(error instanceof ConfigError);
  assert.equal(error.message.split("\n").length, 2);
});

Deno.test("parseConfig() never puts the token in errors, descriptions or printed config", () => {
  const c = run([]);
  const printed = [
    JSON.stringify(describeConfig(c)),
    JSON.stringify(c),
    Deno.inspect(c, { depth: 10 }),
    inspect(c, { depth: 10 }),
    String(c.linode.token),
    helpText(),
  ];
  // A token pasted into a flag by mistake is redacted from the error too.
  printed.push(...problems([`--cloud-provider=${TOKEN}`, `--cluster-cidr=${TOKEN}`, `--zz=${TOKEN}`]));
  printed.push(...problems([], { ...ENV, LINODE_API_TOKEN_FILE: "/t", LINODE_REGION: "" }));
  for (const text of printed) assert.ok(!text.includes(TOKEN), text);
  assert.equal(
    problems([`--cloud-provider=${TOKEN}`])[0],
    '--cloud-provider: unsupported provider "***" (only linode)',
  );
});

Deno.test("helpText() says which accepted flags are not implemented", () => {
  const help = helpText();
  for (const name of ["bgp-node-selector", "ip-holder-suffix", "kube-api-qps", "feature-gates"]) {
    const line = help.split("\n").find((l) => l.startsWith(`  --${name}`)) ?? "";
    assert.match(line, /not implemented/, name);
  }
  assert.match(
    help.split("\n").find((l) => l.startsWith("  --load-balancer-type")) ?? "",
    /cilium-bgp is not implemented/,
  );
});

Deno.test("parseConfig() returns a deeply frozen config", () => {
  const c = run(["--vpc-names=a"]);
  for (const part of [c, c.leaderElection, c.linode, c.linode.token, c.vpc, c.vpc.names, c.controllers]) {
    assert.ok(Object.isFrozen(part));
  }
  assert.throws(() => (c.controllers as Set<string>).add("route"), TypeError);
  assert.throws(() => (c.controllers as Set<string>).delete("service"), TypeError);
  assert.throws(() => (c.vpc.names as string[]).push("b"), TypeError);
  assert.equal(c.controllers.has("service"), true);
});

Deno.test("parseConfig() reads the token file path and reports why it cannot be used", () => {
  const env = { LINODE_API_TOKEN_FILE: "/run/token", LINODE_REGION: "us-east", KUBECONFIG: "/k" };
  const ok = parseConfig([], env, { checkTokenFile: () => undefined });
  assert.deepEqual(ok.kind === "run" && ok.config.linode.token, {
    kind: "file",
    path: "/run/token",
    cacheTtlMs: 60_000,
  });
  assert.throws(
    () => parseConfig([], env, { checkTokenFile: checkTokenFile }),
    (e) =>
      e instanceof ConfigError && e.problems[0] ===
        "LINODE_API_TOKEN_FILE: cannot use /run/token: not found (and LINODE_API_TOKEN, the fallback, is not set)",
  );
  // Both set (this project refused that before; the Go CCM prefers the file and falls back to the variable).
  const both = parseConfig([], { ...env, LINODE_API_TOKEN: TOKEN }, { checkTokenFile: checkTokenFile });
  assert.equal(both.kind === "run" && both.config.linode.token.kind, "env");
  assert.match(
    both.kind === "run" ? both.config.warnings.join("\n") : "",
    /cannot use \/run\/token: not found; using/,
  );
});

Deno.test("checkTokenFile() accepts a readable token file and rejects an empty or missing one", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/token`, `${TOKEN}\n`);
    Deno.writeTextFileSync(`${dir}/empty`, " \n");
    assert.equal(checkTokenFile(`${dir}/token`), undefined);
    assert.equal(checkTokenFile(`${dir}/empty`), "it is empty");
    assert.equal(checkTokenFile(`${dir}/missing`), "not found");
    assert.equal(checkTokenFile(dir), "cannot read it");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("parseConfig() chooses in-cluster credentials when no kubeconfig is given", () => {
  const env = { LINODE_API_TOKEN: TOKEN, LINODE_REGION: "us-east" };
  const c = run([], { ...env, KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: "443" });
  assert.deepEqual(c.kube, { kind: "in-cluster", serviceHost: "127.0.0.1", servicePort: "443" });
  assert.deepEqual(run(["--master=http://127.0.0.1:8080"], env).kube, {
    kind: "master",
    master: "http://127.0.0.1:8080",
  });
});

Deno.test("parseConfig() reads a loopback emulator URL and the cache variables", () => {
  const c = run([], {
    ...ENV,
    LINODE_URL: "http://127.0.0.1:41234/v4/",
    LINODE_INSTANCE_CACHE_TTL: "30",
    LINODE_HOSTNAME_ONLY_INGRESS: "true",
  });
  assert.equal(c.linode.url, "http://127.0.0.1:41234/v4");
  assert.equal(c.linode.instanceCacheTtlMs, 30_000);
  assert.equal(c.linode.hostnameOnlyIngress, true);
});

Deno.test("parseConfig() warns when a requested route controller cannot run", () => {
  const base = ["--vpc-names=v", "--cluster-cidr=10.0.0.0/8"];
  const cases: [string[], string][] = [
    [["--controllers=route"], "route controller not started: --enable-route-controller is false"],
    [
      [...base, "--enable-route-controller", "--configure-cloud-routes=false"],
      "route controller not started: --configure-cloud-routes is false",
    ],
    [
      [...base, "--enable-route-controller", "--controllers=*,-route"],
      "route controller not started: --controllers excludes it",
    ],
  ];
  for (const [args, warning] of cases) {
    const c = run(args);
    assert.equal(c.controllers.has("route"), false);
    assert.deepEqual(c.warnings, [warning]);
  }
  assert.deepEqual(run(["--subnet-ids=4", "--vpc-ids=3", "--subnet-names=x"]).warnings, [
    "--subnet-names is ignored: --subnet-ids wins",
  ]);
});

Deno.test("parseConfig() answers --help and --version before reporting errors", () => {
  const help = parseConfig(["--bogus", "--help"], {});
  assert.equal(help.kind, "help");
  assert.equal(help.kind === "help" && help.text, helpText());
  assert.deepEqual(parseConfig(["-h"], {}).kind, "help");
  assert.deepEqual(parseConfig(["--", "--version"], {}), {
    kind: "version",
    text: `linode-cloud-controller-manager v${VERSION}`,
  });
  const raw = parseConfig(["--version=raw"], {});
  assert.deepEqual(raw.kind === "version" && JSON.parse(raw.text), { version: VERSION });
});

Deno.test("helpText() names every flag", () => {
  const text = helpText();
  for (const flag of FLAGS) assert.ok(text.includes(`--${flag.name}`), flag.name);
});

Deno.test("parseConfig() with --dev defers to the emulators and never uses the real token", () => {
  const real = { ...ENV, LINODE_URL: "https://api.linode.com/v4", LINODE_INSTANCE_CACHE_TTL: "20" };
  const result = parseConfig(["--dev", "--v=4"], real);
  assert.equal(result.kind, "dev");
  if (result.kind !== "dev") return;
  const c = result.resolve({
    LINODE_URL: "http://127.0.0.1:5555/v4",
    LINODE_API_TOKEN: "emulator-token",
    LINODE_REGION: "us-east",
    KUBECONFIG: "/tmp/sim.kubeconfig",
  });
  assert.equal(c.dev, true);
  assert.equal(c.log.verbosity, 4);
  assert.equal(c.linode.url, "http://127.0.0.1:5555/v4");
  assert.equal(c.linode.token.kind === "env" && c.linode.token.token.reveal(), "emulator-token");
  assert.equal(c.linode.instanceCacheTtlMs, 20_000);
  assert.deepEqual(c.kube, { kind: "kubeconfig", kubeconfig: "/tmp/sim.kubeconfig", from: "env" });
  assert.throws(() => result.resolve({ LINODE_REGION: "us-east" }), ConfigError);
});

Deno.test("parseConfig() with --dev still reports flag mistakes up front", () => {
  assert.deepEqual(problems(["--dev", "--kubeconfig=/k", "--v=x"], {}), [
    '--v: invalid integer "x" (use a whole number)',
    "--kubeconfig: not allowed with --dev (it uses its own cluster)",
  ]);
});

Deno.test("VERSION equals deno.json's version", () => {
  const denoJson: unknown = JSON.parse(Deno.readTextFileSync(new URL("../deno.json", import.meta.url)));
  assert.ok(typeof denoJson === "object" && denoJson !== null && "version" in denoJson);
  assert.equal(denoJson.version, VERSION);
});
