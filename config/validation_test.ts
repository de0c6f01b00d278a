/**
 * Config validation rejects every value that later code cannot use, naming the setting, the value and what is
 * accepted; and what it accepts, the consumers do use (checked against the consumers themselves).
 */
import assert from "node:assert/strict";
import { parseCidr4 } from "../common/net.ts";
import { systemClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { LeaderElector } from "../lease/elector.ts";
import { SwitchFence } from "../common/write_guard.ts";
import { Registry } from "../common/metrics.ts";
import { type Config, ConfigError, type Env, parseConfig } from "./config.ts";
import { MAX_TIMER_MS } from "./checks.ts";

const ENV: Env = { LINODE_API_TOKEN: "tok", LINODE_REGION: "us-east", KUBECONFIG: "/k" };

function problems(args: string[], env: Env = ENV): readonly string[] {
  try {
    parseConfig(args, env);
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.problems;
  }
  return [];
}

function accepted(args: string[], env: Env = ENV): Config {
  const parsed = parseConfig(args, env);
  if (parsed.kind !== "run") throw new Error(parsed.kind);
  return parsed.config;
}

/** [name, args, env, the one problem line]: each line names the setting, the value and what is accepted. */
const REJECTED: [string, string[], Env, RegExp][] = [
  [
    "an IPv6 external subnet (it threw when the leader term started)",
    [],
    { ...ENV, LINODE_EXTERNAL_SUBNET: "fd00::/64" },
    /^LINODE_EXTERNAL_SUBNET: invalid IPv4 CIDR "fd00::\/64" \(use an IPv4 network such as 172\.24\.0\.0\/16/,
  ],
  [
    "a timer longer than a JavaScript timer can wait",
    ["--node-monitor-period=600h"],
    ENV,
    /^--node-monitor-period: is too long, got 600h0m0s \(use 1ms to 240h0m0s, e\.g\. 10s\)$/,
  ],
  [
    "a retry period below timer resolution",
    ["--leader-elect-retry-period=500us"],
    ENV,
    /^--leader-elect-retry-period: is below 1ms, got 0\.5ms \(use 1ms to 240h0m0s/,
  ],
  [
    "a renew deadline not below the lease duration",
    ["--leader-elect-lease-duration=10s", "--leader-elect-renew-deadline=12s"],
    ENV,
    /^--leader-elect-lease-duration: must exceed --leader-elect-renew-deadline \(12s\), got 10s$/,
  ],
  [
    "a renew deadline within 1.2 retry periods",
    ["--leader-elect-renew-deadline=2s"],
    ENV,
    /^--leader-elect-renew-deadline: must exceed 1\.2 × --leader-elect-retry-period \(2s\), got 2s$/,
  ],
  [
    "a Lease namespace the apiserver refuses",
    ["--leader-elect-resource-namespace=Kube_System"],
    ENV,
    /^--leader-elect-resource-namespace: invalid namespace "Kube_System" \(use at most 63 lowercase/,
  ],
  [
    "a Lease name the apiserver refuses",
    ["--leader-elect-resource-name=ccm lease"],
    ENV,
    /^--leader-elect-resource-name: invalid name "ccm lease" \(use at most 253 lowercase/,
  ],
  [
    "a VPC label no VPC can have",
    ["--vpc-names=prod vpc"],
    ENV,
    /^--vpc-names: invalid label "prod vpc" \(Linode labels are 1 to 64 ASCII letters, digits and -\)$/,
  ],
  [
    "a subnet label no subnet can have",
    ["--vpc-names=prod", "--subnet-names=default,pods_1"],
    ENV,
    /^--subnet-names: invalid label "pods_1"/,
  ],
  [
    "a region that is not a region ID",
    [],
    { ...ENV, LINODE_REGION: "US East" },
    /^LINODE_REGION: invalid region "US East" \(use a Linode region ID such as us-east/,
  ],
  [
    "a request timeout longer than a timer can wait",
    [],
    { ...ENV, LINODE_REQUEST_TIMEOUT_SECONDS: "99999999999" },
    /^LINODE_REQUEST_TIMEOUT_SECONDS: invalid value "99999999999" \(use a whole number of seconds from 1 to 864000\)$/,
  ],
  [
    "an in-cluster port that is not a port",
    [],
    {
      LINODE_API_TOKEN: "t",
      LINODE_REGION: "us-east",
      KUBERNETES_SERVICE_HOST: "10.0.0.1",
      KUBERNETES_SERVICE_PORT: "https",
    },
    /^KUBERNETES_SERVICE_PORT: invalid port "https" \(use 1 to 65535\)$/,
  ],
  [
    "an in-cluster host that is not a host",
    [],
    {
      LINODE_API_TOKEN: "t",
      LINODE_REGION: "us-east",
      KUBERNETES_SERVICE_HOST: "api/v1",
      KUBERNETES_SERVICE_PORT: "443",
    },
    /^KUBERNETES_SERVICE_HOST: invalid host "api\/v1" \(use an IP address or a DNS name\)$/,
  ],
  [
    "a --master that is not an http(s) URL",
    ["--master=ftp://10.0.0.1"],
    ENV,
    /^--master: unusable URL "ftp:\/\/10\.0\.0\.1" \(use https:\/\/HOST\[:PORT\]/,
  ],
  [
    "a --master that is not a URL",
    ["--master=10.0.0.1:6443"],
    ENV,
    /^--master: (invalid|unusable) URL/,
  ],
];

for (const [name, args, env, want] of REJECTED) {
  Deno.test(`parseConfig() rejects ${name}`, () => {
    const got = problems(args, env);
    assert.equal(got.length, 1, got.join("\n"));
    assert.match(got[0] ?? "", want);
  });
}

Deno.test("parseConfig() accepts the edge values it promises", () => {
  const c = accepted(
    [
      "--leader-elect-lease-duration=240h",
      "--leader-elect-renew-deadline=239h",
      "--leader-elect-retry-period=1h",
      "--node-monitor-period=1ms",
      "--leader-elect-resource-name=ccm.linode.com",
      "--vpc-names=Prod-VPC-1",
    ],
    { ...ENV, LINODE_REGION: "in-bom-2", LINODE_REQUEST_TIMEOUT_SECONDS: "864000" },
  );
  assert.equal(c.leaderElection.leaseDurationMs, MAX_TIMER_MS);
  assert.equal(c.nodes.monitorPeriodMs, 1);
  assert.equal(c.linode.requestTimeoutMs, MAX_TIMER_MS);
  const inCluster = { LINODE_API_TOKEN: "t", LINODE_REGION: "us-east", KUBERNETES_SERVICE_PORT: "443" };
  for (const host of ["10.96.0.1", "fd00::1", "kubernetes.default.svc"]) {
    assert.equal(accepted([], { ...inCluster, KUBERNETES_SERVICE_HOST: host }).kube.kind, "in-cluster", host);
  }
});

const SUBNETS = [
  "172.24.0.0/16",
  "0.0.0.0/0",
  "10.1.2.3/32",
  "10.0.0.0/33",
  "10.0.0.0/08",
  "172.24.0.0/016",
  "010.0.0.0/8",
  "10.0.0/8",
  "fd00::/64",
  "::/0",
  "172.24.0.0",
];

Deno.test("parseConfig() accepts exactly the LINODE_EXTERNAL_SUBNET values the node controllers can parse", () => {
  for (const subnet of SUBNETS) {
    const usable = parseCidr4(subnet) !== undefined;
    const ok = problems([], { ...ENV, LINODE_EXTERNAL_SUBNET: subnet }).length === 0;
    assert.equal(ok, usable, `${subnet}: config ${ok ? "accepts" : "rejects"}, addresses.ts ${usable}`);
  }
});

const TIMINGS: string[][] = [
  [],
  [
    "--leader-elect-lease-duration=2s",
    "--leader-elect-renew-deadline=1500ms",
    "--leader-elect-retry-period=1s",
  ],
  [
    "--leader-elect-lease-duration=240h",
    "--leader-elect-renew-deadline=2h",
    "--leader-elect-retry-period=1ms",
  ],
  [
    "--leader-elect-lease-duration=1s",
    "--leader-elect-renew-deadline=999ms",
    "--leader-elect-retry-period=832ms",
  ],
  [
    "--leader-elect-lease-duration=1s",
    "--leader-elect-renew-deadline=999ms",
    "--leader-elect-retry-period=833ms",
  ],
  [
    "--leader-elect-lease-duration=3ms",
    "--leader-elect-renew-deadline=2ms",
    "--leader-elect-retry-period=1ms",
  ],
];

Deno.test("parseConfig() accepts exactly the leader-election timings the elector can run", () => {
  for (const args of TIMINGS) {
    const ok = problems(args).length === 0;
    let usable = true;
    const le = ok ? accepted(args).leaderElection : undefined;
    try {
      new LeaderElector({
        api: { get: () => Promise.reject(), create: () => Promise.reject(), replace: () => Promise.reject() },
        clock: systemClock,
        log: componentLogger("lease"),
        metrics: new Registry(),
        identity: "a_1",
        namespace: "kube-system",
        name: "x",
        fence: new SwitchFence(),
        leaseDurationMs: le?.leaseDurationMs ?? durationOf(args, "lease-duration"),
        renewDeadlineMs: le?.renewDeadlineMs ?? durationOf(args, "renew-deadline"),
        retryPeriodMs: le?.retryPeriodMs ?? durationOf(args, "retry-period"),
      });
    } catch {
      usable = false;
    }
    assert.equal(ok, usable, `${args.join(" ")}: config ${ok ? "accepts" : "rejects"}, elector ${usable}`);
  }
});

/** The milliseconds of a `--leader-elect-<name>=<n>ms|s|h` argument in `args`. */
function durationOf(args: readonly string[], name: string): number {
  const arg = args.find((a) => a.startsWith(`--leader-elect-${name}=`)) ?? "";
  const m = /=(\d+)(ms|s|h)$/.exec(arg);
  if (!m) throw new Error(`no --leader-elect-${name} in ${args.join(" ")}`);
  return Number(m[1]) * { ms: 1, s: 1000, h: 3_600_000 }[m[2] as "ms" | "s" | "h"];
}
