/**
 * The Go CCM's Helm chart, as the kubelet starts it: each argument list and environment its template renders
 * (tests/testdata/go_chart_args.yaml, rendered from the chart's revision named there) starts this CCM and
 * yields the Config the Go CCM would run with. Values are read as pflag reads them: quotes in a value are CSV
 * syntax, a space-joined tag list is one tag.
 */
import assert from "node:assert/strict";
import { load } from "js-yaml";
import { type Config, ConfigError, type Env, parseConfig } from "../config/config.ts";

interface Render {
  name: string;
  args: string[];
  env: Record<string, string>;
}

const DATA = load(Deno.readTextFileSync(new URL("./testdata/go_chart_args.yaml", import.meta.url))) as {
  renders: Render[];
};

const BASE_CONTROLLERS = ["cloud-node", "cloud-node-lifecycle", "service"];

/** What each render must yield: a check of its Config, or the problem that stops the start. */
const EXPECT: Readonly<Record<string, ((c: Config) => void) | RegExp>> = {
  defaults: (c) => {
    assert.deepEqual([...c.controllers], BASE_CONTROLLERS);
    assert.deepEqual([c.serve.securePort, c.log.verbosity, c.leaderElection.resourceLock], [
      10253,
      3,
      "leases",
    ]);
    assert.deepEqual(c.ignoredFlags, ["--webhook-secure-port"]);
    assert.deepEqual(c.kube, { kind: "in-cluster", serviceHost: "10.96.0.1", servicePort: "443" });
    assert.equal(c.linode.token.kind, "env");
  },
  "token-file": (c) => {
    assert.deepEqual(c.linode.token, {
      kind: "file",
      path: "/var/run/secrets/linode/api-token",
      cacheTtlMs: 60_000,
    });
  },
  "routes-vpc-names": (c) => {
    assert.deepEqual([...c.controllers], ["cloud-node", "cloud-node-lifecycle", "route", "service"]);
    assert.deepEqual([c.vpc.names, c.vpc.subnetNames], [["vpc-a", "vpc-b"], ["nodes"]]);
    assert.deepEqual([c.routes.reconciliationPeriodMs, c.routes.clusterCidrs], [30_000, ["10.192.0.0/10"]]);
    assert.deepEqual(c.warnings, []);
  },
  // The chart's `default true` turns `configureCloudRoutes: false` into `true`: routes run, as for the Go CCM.
  "routes-configure-false": (c) => {
    assert.equal(c.routes.configureCloudRoutes, true);
    assert.ok(c.controllers.has("route"));
  },
  "routes-vpc-ids": (c) => {
    assert.deepEqual(c.vpc, { names: [], ids: [12345, 12346], subnetNames: [], subnetIds: [678] });
    assert.ok(c.controllers.has("route"));
  },
  "ipam-ipv4": (c) => {
    assert.deepEqual([...c.controllers], [...BASE_CONTROLLERS, "nodeipam"]);
    assert.deepEqual([c.routes.nodeCidrMaskSizeIpv4, c.routes.allocateIpv6NodeCidrs], [25, false]);
  },
  "ipam-ipv6-routes": (c) => {
    assert.deepEqual([...c.controllers], [
      "cloud-node",
      "cloud-node-lifecycle",
      "route",
      "service",
      "nodeipam",
    ]);
    assert.deepEqual([c.routes.nodeCidrMaskSizeIpv6, c.routes.allocateIpv6NodeCidrs], [64, true]);
    assert.deepEqual(c.vpc.names, ["cluster-vpc"]);
  },
  "ipv6-load-balancers": (c) => {
    assert.deepEqual(
      [c.services.enableIpv6ForLoadBalancers, c.services.enableIpv6ForNodeBalancerBackends],
      [true, true],
    );
  },
  "shared-ip": (c) => {
    assert.equal(c.services.loadBalancerType, "nodebalancer");
    assert.equal(c.warnings.length, 3);
    assert.match(c.warnings[0] ?? "", /^--load-balancer-type=cilium-bgp is not implemented/);
  },
  // `join " "` makes one CSV item: one tag with a space, which is what the Go CCM sends too.
  tags: (c) => assert.deepEqual(c.services.nodeBalancerTags, ["team-a env-prod"]),
  // The quotes are CSV quoting to pflag: the path is /metrics.
  "metrics-open": (c) => assert.deepEqual(c.serve.auth.alwaysAllowPaths, ["/metrics"]),
  "token-health-debug": (c) => {
    assert.deepEqual([c.linode.tokenHealthCheck, c.linode.debug, c.log.verbosity], [true, true, 5]);
  },
  nodebalancers: (c) => {
    const s = c.services;
    assert.deepEqual(
      [s.defaultNodeBalancerType, s.backendIpv4Subnet, s.nodeBalancerPrefix, s.disableVpcBackends],
      ["premium", "10.100.0.0/24", "mycluster", true],
    );
    assert.deepEqual([s.backendIpv4SubnetName, c.linode.tagFilter], ["nb-backends", "k8s-cluster"]);
  },
  "backend-subnet-id": (c) => assert.equal(c.services.backendIpv4SubnetId, 123456),
  // pflag's IntVar refuses the exponent form, so the Go CCM does not start either.
  "backend-subnet-id-7-digits": /^--nodebalancer-backend-ipv4-subnet-id: invalid integer "1\.234567e\+06"/,
  "extra-args-and-env": (c) => {
    assert.deepEqual(c.kube, { kind: "kubeconfig", kubeconfig: "/etc/kubernetes/value", from: "flag" });
    assert.equal(c.linode.hostnameOnlyIngress, true);
  },
  everything: (c) => {
    assert.deepEqual([...c.controllers], [
      "cloud-node",
      "cloud-node-lifecycle",
      "route",
      "service",
      "nodeipam",
    ]);
    assert.deepEqual(c.ignoredFlags, [
      "--cidr-allocator-type",
      "--feature-gates",
      "--node-sync-period",
      "--webhook-secure-port",
    ]);
    assert.deepEqual([c.services.defaultNodeBalancerType, c.services.backendIpv4SubnetId], [
      "premium_40gb",
      4321,
    ]);
    assert.deepEqual([c.serve.auth.alwaysAllowPaths, c.services.nodeBalancerTags], [["/metrics"], ["prod"]]);
    assert.equal(c.linode.token.kind, "file");
    assert.equal(c.routes.reconciliationPeriodMs, 60_000);
  },
};

Deno.test("tests/testdata/go_chart_args.yaml and the expectations name the same renders", () => {
  assert.deepEqual(DATA.renders.map((r) => r.name).sort(), Object.keys(EXPECT).sort());
});

function start(r: Render): Config | ConfigError {
  try {
    const result = parseConfig(r.args, r.env as Env);
    if (result.kind !== "run") throw new TypeError(`${r.name}: ${result.kind}`);
    return result.config;
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
}

for (const render of DATA.renders) {
  Deno.test(`parseConfig() takes the Go CCM chart's arguments as rendered: ${render.name}`, () => {
    const want = EXPECT[render.name];
    const got = start(render);
    if (want instanceof RegExp) {
      assert.ok(got instanceof ConfigError, "the start is refused");
      assert.equal(got.problems.length, 1, got.message);
      assert.match(got.problems[0] ?? "", want);
      return;
    }
    assert.ok(!(got instanceof ConfigError), got instanceof ConfigError ? got.message : "");
    assert.ok(got.nodes.metadataUpdates);
    want?.(got);
  });
}
