import assert from "node:assert/strict";
import type { VpcIp } from "../../cache/types.ts";
import { canonicalCidr4, cidrFamily } from "../../common/net.ts";
import { CidrMemo, clusterCidrs4, isClusterRange } from "./plan.ts";
import { type PlanInput, planRoutes, type RouteNode } from "./plan.ts";

const CLUSTER = clusterCidrs4(["10.192.0.0/10"]);
/** VPC 1 (subnet 11 selected, 12 not) and VPC 2 (subnet 21). */
const SCOPE = {
  clusterCidrs: CLUSTER,
  subnets: new Map([[1, new Set([11])], [2, new Set([21])]]),
};

interface IfaceSpec {
  linode: number;
  iface: number;
  vpc?: number;
  subnet?: number;
  config?: number | null;
  active?: boolean;
  ranges?: string[];
}

/** The listing entries of one interface: its address, then its ranges. */
function iface(s: IfaceSpec): VpcIp[] {
  const vpc = s.vpc ?? 1;
  const base = {
    linode_id: s.linode,
    vpc_id: vpc,
    subnet_id: s.subnet ?? (vpc === 1 ? 11 : 21),
    config_id: s.config === undefined ? 100 + s.linode : s.config,
    interface_id: s.iface,
    active: s.active ?? true,
  };
  const address = { ...base, address: `10.0.0.${s.iface}`, address_range: null, nat_1_1: null };
  return [
    address,
    ...(s.ranges ?? []).map((r) => ({ ...base, address: null, address_range: r, nat_1_1: null })),
  ];
}

function node(name: string, linodeId: number, ...podCidrs: string[]): RouteNode {
  return { name, linodeId, podCidrs };
}

function input(nodes: RouteNode[], ips: VpcIp[][], released: number[] = []): PlanInput {
  return { nodes, released: new Set(released), ips: ips.flat(), scope: SCOPE };
}

/** A write as `linode/iface: ranges (-removed +added)`. */
function writes(i: PlanInput): string[] {
  return planRoutes(i).writes.map((w) =>
    `${w.target.linodeId}/${w.target.interfaceId}: ${w.ranges.join(",")} (-${w.removed.join(",")} +${
      w.added.join(",")
    })`
  );
}

const CASES: { name: string; input: PlanInput; want: string[] }[] = [
  {
    name: "adds a new Node's pod CIDR",
    input: input([node("n1", 1, "10.192.1.0/24")], [iface({ linode: 1, iface: 5 })]),
    want: ["1/5: 10.192.1.0/24 (- +10.192.1.0/24)"],
  },
  {
    name: "plans nothing when the range is in place (idempotent)",
    input: input([node("n1", 1, "10.192.1.0/24")], [
      iface({ linode: 1, iface: 5, ranges: ["10.192.1.0/24"] }),
    ]),
    want: [],
  },
  {
    name: "plans nothing for a Node without a pod CIDR, and keeps its ranges",
    input: input([node("n1", 1)], [iface({ linode: 1, iface: 5, ranges: ["10.192.9.0/24"] })]),
    want: [],
  },
  {
    name: "replaces a changed pod CIDR and keeps ranges outside the cluster CIDR",
    input: input([node("n1", 1, "10.192.2.0/24")], [
      iface({ linode: 1, iface: 5, ranges: ["172.16.0.0/24", "10.192.1.0/24"] }),
    ]),
    want: ["1/5: 172.16.0.0/24,10.192.2.0/24 (-10.192.1.0/24 +10.192.2.0/24)"],
  },
  {
    name: "never touches a Linode that is no Node's (foreign)",
    input: input([node("n1", 1, "10.192.1.0/24")], [
      iface({ linode: 1, iface: 5, ranges: ["10.192.1.0/24"] }),
      iface({ linode: 9, iface: 6, ranges: ["10.192.7.0/24"] }),
    ]),
    want: [],
  },
  {
    name: "removes the cluster ranges of a released Linode (deleted Node) and keeps the rest",
    input: input([], [iface({ linode: 1, iface: 5, ranges: ["10.192.1.0/24", "192.168.0.0/24"] })], [1]),
    want: ["1/5: 192.168.0.0/24 (-10.192.1.0/24 +)"],
  },
  {
    name: "a released Linode claimed again by a Node gets that Node's ranges",
    input: input([node("n1b", 1, "10.192.3.0/24")], [
      iface({ linode: 1, iface: 5, ranges: ["10.192.1.0/24"] }),
    ], [
      1,
    ]),
    want: ["1/5: 10.192.3.0/24 (-10.192.1.0/24 +10.192.3.0/24)"],
  },
  {
    name: "a released Linode claimed again by a Node without pod CIDR is left alone",
    input: input([node("n1b", 1)], [iface({ linode: 1, iface: 5, ranges: ["10.192.1.0/24"] })], [1]),
    want: [],
  },
  {
    name: "skips IPv6 pod CIDRs and routes the IPv4 one",
    input: input([node("n1", 1, "fd00:10:244::/64", "10.192.1.0/24")], [iface({ linode: 1, iface: 5 })]),
    want: ["1/5: 10.192.1.0/24 (- +10.192.1.0/24)"],
  },
  {
    name: "never adds a pod CIDR outside the cluster CIDR",
    input: input([node("n1", 1, "10.50.0.0/24")], [iface({ linode: 1, iface: 5, ranges: ["10.50.0.0/24"] })]),
    want: [],
  },
  {
    name: "canonicalises a pod CIDR with host bits",
    input: input([node("n1", 1, "10.192.1.7/24")], [
      iface({ linode: 1, iface: 5, ranges: ["10.192.1.0/24"] }),
    ]),
    want: [],
  },
  {
    name: "programs a Node in two VPCs on each VPC's interface",
    input: input([node("n1", 1, "10.192.1.0/24")], [
      iface({ linode: 1, iface: 5, vpc: 1, ranges: ["172.16.1.0/24"] }),
      iface({ linode: 1, iface: 6, vpc: 2, ranges: ["172.17.1.0/24"] }),
    ]),
    want: [
      "1/5: 172.16.1.0/24,10.192.1.0/24 (- +10.192.1.0/24)",
      "1/6: 172.17.1.0/24,10.192.1.0/24 (- +10.192.1.0/24)",
    ],
  },
  {
    name: "ignores interfaces in unselected subnets and unconfigured VPCs",
    input: input([node("n1", 1, "10.192.1.0/24")], [
      iface({ linode: 1, iface: 5, subnet: 12, ranges: ["10.192.8.0/24"] }),
      iface({ linode: 1, iface: 6, vpc: 3, subnet: 31, ranges: ["10.192.9.0/24"] }),
    ]),
    want: [],
  },
  {
    name: "uses the active interface when a Linode has several in one VPC",
    input: input([node("n1", 1, "10.192.1.0/24")], [
      iface({ linode: 1, iface: 5, config: 7, active: false }),
      iface({ linode: 1, iface: 8, config: 9, active: true }),
    ]),
    want: ["1/8: 10.192.1.0/24 (- +10.192.1.0/24)"],
  },
  {
    name: "writes a Linode interface (no config) like a config interface",
    input: input([node("n1", 1, "10.192.1.0/24")], [iface({ linode: 1, iface: 5, config: null })]),
    want: ["1/5: 10.192.1.0/24 (- +10.192.1.0/24)"],
  },
  {
    name: "sends removals first, so a pod CIDR moving to another Linode is free when claimed",
    input: input([node("n2", 2, "10.192.1.0/24")], [
      iface({ linode: 1, iface: 5, ranges: ["10.192.1.0/24"] }),
      iface({ linode: 2, iface: 6 }),
    ], [1]),
    want: ["1/5:  (-10.192.1.0/24 +)", "2/6: 10.192.1.0/24 (- +10.192.1.0/24)"],
  },
  {
    name: "keeps a range that only partly overlaps the cluster CIDR",
    input: input([node("n1", 1, "10.192.1.0/24")], [iface({ linode: 1, iface: 5, ranges: ["10.0.0.0/8"] })]),
    want: ["1/5: 10.0.0.0/8,10.192.1.0/24 (- +10.192.1.0/24)"],
  },
];

for (const c of CASES) Deno.test(`planRoutes() ${c.name}`, () => assert.deepEqual(writes(c.input), c.want));

Deno.test("planRoutes() reports each Node's targets and the pod CIDRs it cannot route", () => {
  const plan = planRoutes(input([
    node("n1", 1, "10.192.1.0/24", "fd00::/64"),
    node("n2", 2, "10.50.0.0/24"),
    node("n3", 3, "10.192.3.0/24"),
    node("n4", 4),
  ], [iface({ linode: 1, iface: 5, config: null }), iface({ linode: 2, iface: 6 })]));
  assert.deepEqual(
    plan.nodes.map((n) => [n.node, n.wanted, n.outside, n.ipv6, n.targets.map((t) => t.interfaceId)]),
    [
      ["n1", ["10.192.1.0/24"], [], ["fd00::/64"], [5]],
      ["n2", [], ["10.50.0.0/24"], [], [6]],
      ["n3", ["10.192.3.0/24"], [], [], []],
    ],
  );
  assert.equal(plan.nodes[0]?.targets[0]?.configId, null);
});

const FAMILIES: [string, 4 | 6 | undefined][] = [
  ["10.192.1.0/24", 4],
  ["fd00:10:244:1::/64", 6],
  ["10.192.1.0", undefined],
  ["10.192.1.0/33", undefined],
  ["bogus", undefined],
];
for (const [text, family] of FAMILIES) {
  Deno.test(`cidrFamily() ${text} is ${family}`, () => assert.equal(cidrFamily(text), family));
}

Deno.test("isClusterRange() is true only for ranges wholly inside a cluster CIDR", () => {
  assert.equal(isClusterRange("10.192.0.0/10", CLUSTER), true);
  assert.equal(isClusterRange("10.255.255.0/24", CLUSTER), true);
  assert.equal(isClusterRange("10.128.0.0/9", CLUSTER), false);
  assert.equal(isClusterRange("10.0.0.0/24", CLUSTER), false);
  assert.equal(isClusterRange("not a cidr", CLUSTER), false);
  assert.equal(canonicalCidr4("10.192.1.9/24"), "10.192.1.0/24");
});

Deno.test("CidrMemo answers as the parsers do, for valid, host-bit, IPv6 and invalid texts", () => {
  const memo = new CidrMemo();
  for (const text of ["10.192.1.0/24", "10.192.1.7/24", "10.5.0.0/16", "fd00::/64", "10.1.2.3", "x/24"]) {
    for (let round = 0; round < 2; round++) {
      assert.equal(memo.canonical(text), canonicalCidr4(text), text);
      assert.equal(memo.family(text), cidrFamily(text), text);
      assert.equal(memo.inCluster(text, CLUSTER), isClusterRange(text, CLUSTER), text);
    }
  }
});

Deno.test("CidrMemo forgets a text not read in the last two passes (a deleted Node's pod CIDR)", () => {
  const memo = new CidrMemo();
  memo.canonical("10.192.1.0/24");
  memo.canonical("10.192.2.0/24");
  memo.endPass();
  // The Node with 10.192.2.0/24 is gone: only the other is read from now on.
  memo.canonical("10.192.1.0/24");
  assert.equal(memo.size, 2, "kept for one more pass");
  memo.endPass();
  memo.canonical("10.192.1.0/24");
  memo.endPass();
  assert.equal(memo.size, 1);
  assert.equal(memo.canonical("10.192.1.0/24"), "10.192.1.0/24");
});
