import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { parseCidr4 } from "../../common/net.ts";
import { CidrSet, ipv6PodCidr, NodeAllocator } from "./allocator.ts";

function set(cluster: string, prefix: number): CidrSet {
  const c = parseCidr4(cluster);
  if (!c) throw new TypeError(cluster);
  return new CidrSet(c, prefix);
}

function node(name: string, ...podCIDRs: string[]): V1Node {
  return { metadata: { name }, spec: podCIDRs.length ? { podCIDR: podCIDRs[0], podCIDRs } : {} };
}

Deno.test("CidrSet() refuses a node mask outside the cluster CIDR or more than 16 bits finer", () => {
  assert.throws(() => set("10.192.0.0/16", 15), RangeError);
  assert.throws(() => set("10.0.0.0/8", 25), RangeError);
  assert.equal(set("10.0.0.0/8", 24).size, 65536);
});

Deno.test("CidrSet.allocateNext() goes round the set: a freed block is reused after the others", () => {
  const s = set("10.192.0.0/22", 24);
  assert.deepEqual(["a", "b", "c"].map((n) => s.allocateNext(n)), [
    "10.192.0.0/24",
    "10.192.1.0/24",
    "10.192.2.0/24",
  ]);
  assert.equal(s.release("10.192.0.0/24", "a"), 1);
  assert.equal(s.allocateNext("d"), "10.192.3.0/24");
  assert.equal(s.allocateNext("e"), "10.192.0.0/24");
  assert.equal(s.allocateNext("f"), undefined);
  assert.equal(s.free, 0);
});

const OCCUPY_CASES: { name: string; cidr: string; want: unknown; free: number }[] = [
  { name: "a block of the node size", cidr: "10.192.1.0/24", want: "occupied", free: 3 },
  { name: "host bits set", cidr: "10.192.1.7/24", want: "occupied", free: 3 },
  { name: "a larger range: every block it covers", cidr: "10.192.0.0/23", want: "occupied", free: 2 },
  { name: "a smaller range: its block", cidr: "10.192.2.128/25", want: "occupied", free: 3 },
  { name: "outside the cluster CIDR", cidr: "10.0.0.0/24", want: "outside", free: 4 },
  { name: "not a CIDR", cidr: "10.192.0.0", want: "invalid", free: 4 },
];

for (const c of OCCUPY_CASES) {
  Deno.test(`CidrSet.occupy() ${c.name}`, () => {
    const s = set("10.192.0.0/22", 24);
    assert.deepEqual(s.occupy(c.cidr, "n1"), c.want);
    assert.equal(s.free, c.free);
  });
}

Deno.test("CidrSet.occupy() leaves a block another Node holds with it; release() by the second frees nothing", () => {
  const s = set("10.192.0.0/22", 24);
  s.occupy("10.192.1.0/24", "n1");
  assert.deepEqual(s.occupy("10.192.1.0/24", "n2"), { takenBy: "n1" });
  assert.equal(s.release("10.192.1.0/24", "n2"), 0);
  assert.equal(s.ownerOf("10.192.1.0/24"), "n1");
  assert.equal(s.occupy("10.192.1.0/24", "n1"), "already");
});

Deno.test("NodeAllocator.fromNodes() never hands out a range a listed Node holds", () => {
  const nodes = [node("a", "10.192.0.0/24"), node("b"), node("c", "10.192.2.0/24", "2600::/112")];
  const { allocator, recorded } = NodeAllocator.fromNodes(set("10.192.0.0/22", 24), nodes);
  assert.deepEqual(recorded.map((r) => r.result), ["occupied", "occupied"]);
  const given = [allocator.assign("b"), allocator.assign("d")];
  assert.deepEqual(given, ["10.192.1.0/24", "10.192.3.0/24"]);
  assert.equal(allocator.assign("e"), undefined);
});

Deno.test("NodeAllocator.assign() gives a Node the same range until its write is seen", () => {
  const allocator = new NodeAllocator(set("10.192.0.0/22", 24));
  const first = allocator.assign("a");
  assert.equal(allocator.assign("a"), first);
  allocator.record(node("a", first ?? ""));
  assert.equal(allocator.ownerOf(first ?? ""), "a");
  assert.notEqual(allocator.assign("b"), first);
});

Deno.test("NodeAllocator.record() frees the range handed out when another writer set a different one", () => {
  const allocator = new NodeAllocator(set("10.192.0.0/22", 24));
  const handed = allocator.assign("a") ?? "";
  allocator.record(node("a", "10.192.3.0/24"));
  assert.equal(allocator.ownerOf(handed), undefined);
  assert.equal(allocator.ownerOf("10.192.3.0/24"), "a");
});

Deno.test("NodeAllocator.release() frees a deleted Node's range and the one handed to it", () => {
  const allocator = new NodeAllocator(set("10.192.0.0/23", 24));
  allocator.record(node("a", "10.192.0.0/24"));
  allocator.assign("b");
  assert.equal(allocator.free, 0);
  assert.equal(allocator.release(node("a", "10.192.0.0/24")), 1);
  assert.equal(allocator.release(node("b")), 1);
  assert.equal(allocator.free, 2);
});

const IPV6_CASES: { name: string; range: string; mask: number; want: unknown }[] = [
  {
    name: "the stable :0:c::/112 sub-prefix of a /64",
    range: "2600:3c05:0:1001::/64",
    mask: 112,
    want: { cidr: "2600:3c05:0:1001:0:c::/112" },
  },
  {
    name: "a SLAAC range written with its address",
    range: "2600:3c05:0:1001:abcd::1/64",
    mask: 112,
    want: { cidr: "2600:3c05:0:1001:0:c::/112" },
  },
  {
    name: "another size: the range's address masked",
    range: "2600:3c05:0:1001::/64",
    mask: 96,
    want: { cidr: "2600:3c05:0:1001::/96" },
  },
  {
    name: "a /112 of a range too small for the stable sub-prefix",
    range: "2600:3c05:0:1001:1::/80",
    mask: 112,
    want: {
      error:
        "the stable IPv6 pod CIDR 2600:3c05:0:1001:0:c::/112 is outside the interface's range 2600:3c05:0:1001:1::/80",
    },
  },
  {
    name: "a size larger than the range",
    range: "2600:3c05:0:1001::/64",
    mask: 56,
    want: { error: "a /56 pod CIDR is larger than the interface's IPv6 range 2600:3c05:0:1001::/64" },
  },
  {
    name: "not IPv6",
    range: "10.0.0.0/8",
    mask: 112,
    want: { error: `the interface's IPv6 range "10.0.0.0/8" is not an IPv6 CIDR` },
  },
];

for (const c of IPV6_CASES) {
  Deno.test(`ipv6PodCidr() ${c.name}`, () => assert.deepEqual(ipv6PodCidr(c.range, c.mask), c.want));
}
