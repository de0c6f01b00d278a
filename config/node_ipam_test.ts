import assert from "node:assert/strict";
import { ConfigError, type Env, parseConfig } from "./config.ts";

const ENV: Env = {
  LINODE_API_TOKEN: "tok",
  LINODE_REGION: "us-east",
  KUBECONFIG: "/etc/kubernetes/ccm.conf",
};
const IPAM = ["--allocate-node-cidrs", "--cluster-cidr=10.192.0.0/10"];

function parse(args: string[]) {
  try {
    const r = parseConfig(args, ENV);
    if (r.kind !== "run") throw new TypeError(r.kind);
    return { controllers: [...r.config.controllers], warnings: r.config.warnings, problems: [] as string[] };
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return { controllers: [], warnings: [], problems: [...e.problems] };
  }
}

const CASES: { name: string; args: string[]; nodeipam: boolean; warnings?: string[]; problems?: RegExp }[] = [
  { name: "off without --allocate-node-cidrs, silently", args: [], nodeipam: false, warnings: [] },
  { name: "on with --allocate-node-cidrs", args: IPAM, nodeipam: true, warnings: [] },
  { name: "by upstream's long name", args: [...IPAM, "--controllers=node-ipam-controller"], nodeipam: true },
  {
    name: "named without --allocate-node-cidrs: a warning",
    args: ["--controllers=nodeipam"],
    nodeipam: false,
    warnings: ["nodeipam controller not started: --allocate-node-cidrs is false"],
  },
  {
    name: "excluded by --controllers: a warning",
    args: [...IPAM, "--controllers=*,-nodeipam"],
    nodeipam: false,
    warnings: ["node IPAM not started: --controllers excludes nodeipam"],
  },
  {
    name: "a dual-stack --cluster-cidr is refused, as the Go CCM",
    args: ["--allocate-node-cidrs", "--cluster-cidr=10.192.0.0/10,fd00::/48"],
    nodeipam: false,
    problems: /^--cluster-cidr: too many cluster CIDRs for node IPAM/,
  },
  {
    name: "an IPv6 --cluster-cidr is refused",
    args: ["--allocate-node-cidrs", "--cluster-cidr=fd00::/48"],
    nodeipam: false,
    problems: /^--cluster-cidr: fd00::\/48 is not IPv4/,
  },
  {
    name: "a node size larger than the cluster CIDR is refused",
    args: [...IPAM, "--node-cidr-mask-size-ipv4=8"],
    nodeipam: false,
    problems: /^--node-cidr-mask-size-ipv4: \/8 is larger than the cluster CIDR 10\.192\.0\.0\/10/,
  },
  {
    name: "more than 2^16 ranges are refused",
    args: [...IPAM, "--node-cidr-mask-size-ipv4=27"],
    nodeipam: false,
    problems: /use at most \/26/,
  },
];

for (const c of CASES) {
  Deno.test(`parseConfig() node IPAM: ${c.name}`, () => {
    const got = parse(c.args);
    if (c.problems) {
      assert.equal(got.problems.length, 1, got.problems.join("\n"));
      assert.match(got.problems[0] ?? "", c.problems);
      return;
    }
    assert.deepEqual(got.problems, []);
    assert.equal(got.controllers.includes("nodeipam"), c.nodeipam);
    if (c.warnings) assert.deepEqual(got.warnings, c.warnings);
  });
}
