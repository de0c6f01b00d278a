import assert from "node:assert/strict";
import { ConfigError, type Env, parseConfig } from "./config.ts";

const ENV: Env = {
  LINODE_API_TOKEN: "tok",
  LINODE_REGION: "us-east",
  KUBECONFIG: "/etc/kubernetes/ccm.conf",
};
const IPAM = ["--allocate-node-cidrs", "--cluster-cidr=10.192.0.0/10"];
const ROUTES = ["--enable-route-controller", "--vpc-names=v", "--cluster-cidr=10.192.0.0/10"];

function chosen(
  args: string[],
): { controllers: string[]; metadata: boolean } | { problems: readonly string[] } {
  try {
    const r = parseConfig(args, ENV);
    if (r.kind !== "run") throw new TypeError(r.kind);
    return { controllers: [...r.config.controllers], metadata: r.config.nodes.metadataUpdates };
  } catch (e) {
    if (e instanceof ConfigError) return { problems: e.problems };
    throw e;
  }
}

/**
 * [name, args, controllers to run]. As the Go CCM: upstream's `IsControllerEnabled` (first entry naming a
 * controller wins, else `*`), node IPAM from `--allocate-node-cidrs` (its cloud's Initialize), node metadata
 * always.
 */
const CHOICES: [string, string[], string[]][] = [
  ["an explicit list without * keeps node IPAM", [...IPAM, "--controllers=cloud-node"], [
    "cloud-node",
    "nodeipam",
  ]],
  ["-cloud-node keeps node IPAM", [...IPAM, "--controllers=*,-cloud-node"], [
    "cloud-node-lifecycle",
    "service",
    "nodeipam",
  ]],
  ["the first entry naming a controller wins", ["--controllers=cloud-node,-cloud-node"], ["cloud-node"]],
  ["a disabling entry before * wins", ["--controllers=-service,*"], ["cloud-node", "cloud-node-lifecycle"]],
  ["a later enabling entry does not undo an earlier -name", ["--controllers=*,-service,service"], [
    "cloud-node",
    "cloud-node-lifecycle",
  ]],
  ["upstream's canonical names", [
    "--controllers=node-route-controller,cloud-node-lifecycle-controller",
    ...ROUTES,
  ], [
    "cloud-node-lifecycle",
    "route",
  ]],
  ["repeated flags append", ["--controllers=cloud-node", "--controllers=service"], ["cloud-node", "service"]],
  ["no upstream controller, node IPAM alone", [...IPAM, "--controllers="], ["nodeipam"]],
];
for (const [name, args, want] of CHOICES) {
  Deno.test(`parseConfig() --controllers: ${name}`, () => {
    assert.deepEqual(chosen(args), { controllers: want, metadata: true });
  });
}

/** [name, args, the problem]: upstream's Validate refuses names it does not know, `-` stripped. */
const REFUSED: [string, string[], RegExp][] = [
  [
    "nodeipam",
    ["--controllers=*,nodeipam"],
    /^--controllers: unknown controller "nodeipam" .*--allocate-node-cidrs/,
  ],
  [
    "kube-controller-manager's node IPAM name",
    ["--controllers=-node-ipam-controller"],
    /"-node-ipam-controller"/,
  ],
  ["an empty item", ["--controllers=*,"], /^--controllers: unknown controller ""/],
  ["a -* entry", ["--controllers=-*"], /^--controllers: unknown controller "-\*"/],
];
for (const [name, args, want] of REFUSED) {
  Deno.test(`parseConfig() --controllers refuses ${name}, as upstream`, () => {
    const got = chosen(args);
    assert.ok("problems" in got, JSON.stringify(got));
    assert.equal(got.problems.length, 1, got.problems.join("\n"));
    assert.match(got.problems[0] ?? "", want);
  });
}
