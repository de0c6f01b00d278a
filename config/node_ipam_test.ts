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
  // The Go CCM starts node IPAM from --allocate-node-cidrs in its cloud's Initialize, whatever --controllers says
  // (cloud/linode/cloud.go, nodeipamcontroller.go); upstream's --controllers knows no node IPAM controller.
  { name: "on with an explicit list without *", args: [...IPAM, "--controllers=cloud-node"], nodeipam: true },
  { name: "on with an empty list", args: [...IPAM, "--controllers="], nodeipam: true, warnings: [] },
  {
    name: "on when every upstream controller is off",
    args: [...IPAM, "--controllers=-service"],
    nodeipam: true,
  },
  {
    name: "nodeipam is not a name --controllers takes",
    args: [...IPAM, "--controllers=*,-nodeipam"],
    nodeipam: false,
    problems: /^--controllers: unknown controller "-nodeipam" .*node IPAM runs with --allocate-node-cidrs/,
  },
  {
    name: "node-ipam-controller is not upstream's cloud-controller-manager's either",
    args: ["--controllers=node-ipam-controller"],
    nodeipam: false,
    problems: /^--controllers: unknown controller "node-ipam-controller"/,
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
