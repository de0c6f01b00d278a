import assert from "node:assert/strict";
import type { NodeBalancerConfigState } from "../../cache/types.ts";
import { node } from "./testdata/fixtures.ts";
import {
  ClusterIdentity,
  ClusterIdentityUnknownError,
  clusterTag,
  contestedTags,
  foreignBackendsOf,
  isAdoptable,
  isOwnedBy,
  isOwnedByCluster,
  nodeAddressesOf,
  nodeBalancerLabel,
  nodeBalancerTags,
  type Ownership,
  type OwnershipContext,
  ownershipOf,
  ownershipTag,
  parseOwnershipTag,
  uidPrefixOf,
  whyInUse,
  whyNotAdoptable,
} from "./ownership.ts";

const UID = "0F1E2D3C-4B5A-4697-8877-665544332211";

const TAGS: { cluster: string; want: string }[] = [
  { cluster: "kubernetes", want: "ccm-owner:kubernetes/0f1e2d3c4b5a4697" },
  { cluster: "", want: "ccm-owner:/0f1e2d3c4b5a4697" },
  { cluster: "a".repeat(23), want: `ccm-owner:${"a".repeat(23)}/0f1e2d3c4b5a4697` },
  { cluster: "production-cluster-eu-west-1", want: "ccm-owner:production-clu~f1dece4c/0f1e2d3c4b5a4697" },
];

for (const c of TAGS) {
  Deno.test(`ownershipTag() for cluster ${JSON.stringify(c.cluster)} fits Linode's 50-character tags`, () => {
    const tag = ownershipTag(c.cluster, UID);
    assert.equal(tag, c.want);
    assert.ok(tag.length <= 50);
  });
}

Deno.test("ownershipTag() tells long cluster names with a shared start apart", () => {
  const a = ownershipTag("production-cluster-eu-west-1", UID);
  const b = ownershipTag("production-cluster-eu-west-2", UID);
  assert.notEqual(a, b);
});

Deno.test("ownershipTag() refuses a UID without 16 hex digits", () => {
  assert.throws(() => ownershipTag("k", "not-a-uid"), RangeError);
});

Deno.test("parseOwnershipTag() reads back the cluster part and UID digits, and ignores other tags", () => {
  assert.deepEqual(parseOwnershipTag(ownershipTag("kubernetes", UID)), {
    cluster: "kubernetes",
    uidPrefix: "0f1e2d3c4b5a4697",
  });
  for (const tag of ["kubernetes", "ccm-owner:", "ccm-owner:x/123", "owner:x/0f1e2d3c4b5a4697"]) {
    assert.equal(parseOwnershipTag(tag), undefined, tag);
  }
});

Deno.test("isOwnedBy() and isOwnedByCluster() match the Service's and the cluster's tags only", () => {
  const tags = ["kubernetes", ownershipTag("kubernetes", UID)];
  assert.ok(isOwnedBy(tags, "kubernetes", UID));
  assert.ok(!isOwnedBy(tags, "kubernetes", "11111111-2222-3333-4444-555555555555"));
  assert.ok(!isOwnedBy(tags, "other", UID));
  assert.ok(isOwnedByCluster(tags, "kubernetes"));
  assert.ok(!isOwnedByCluster(["kubernetes"], "kubernetes"));
});

Deno.test("nodeBalancerLabel() is the prefix and 12 hex digits of the UID, at most 32 characters", () => {
  assert.equal(nodeBalancerLabel("ccm", UID), "ccm-665544332211");
  const label = nodeBalancerLabel("p".repeat(19), UID);
  assert.equal(label.length, 32);
  assert.match(label, /^[a-zA-Z0-9_-]{3,32}$/);
});

Deno.test("nodeBalancerTags() keeps the Go CCM's order and drops an empty cluster name", () => {
  assert.deepEqual(nodeBalancerTags("", ["a-tag"], ["a-tag", "b-tag"], UID), [
    "a-tag",
    "b-tag",
    "ccm-owner:/0f1e2d3c4b5a4697",
  ]);
});

const ID_OURS = "ccm-cluster:" + "a".repeat(32);
const ID_THEIRS = "ccm-cluster:" + "b".repeat(32);
const OTHER_UID = "11111111-2222-4333-8444-555555555555";
const GONE = "99999999-2222-4333-8444-555555555555";

function ctx(live: string[] = []): OwnershipContext {
  return {
    clusterName: "kubernetes",
    clusterIdTag: ID_OURS,
    serviceUid: UID,
    isLiveService: (prefix) => live.some((u) => uidPrefixOf(u) === prefix),
  };
}

const OWNERSHIP: { name: string; tags: string[]; live?: string[]; want: Ownership["kind"] }[] = [
  { name: "no tags at all (the Go CCM's)", tags: ["kubernetes", "prod"], want: "untagged" },
  {
    name: "this Service's tag and our identity",
    tags: [ownershipTag("kubernetes", UID), ID_OURS],
    want: "this-service",
  },
  {
    name: "this Service's tag from before identities",
    tags: [ownershipTag("kubernetes", UID)],
    want: "this-service",
  },
  { name: "another cluster's identity", tags: [ID_THEIRS], want: "foreign-cluster" },
  {
    name: "our Service tag beside another cluster's identity",
    tags: [ownershipTag("kubernetes", UID), ID_THEIRS],
    want: "foreign-cluster",
  },
  {
    name: "another cluster name's ownership tag",
    tags: [ownershipTag("staging", GONE)],
    want: "foreign-cluster",
  },
  {
    name: "another name's tag, but our identity (the cluster was renamed)",
    tags: [ownershipTag("staging", GONE), ID_OURS],
    want: "released",
  },
  {
    name: "a live Service's of this cluster",
    tags: [ownershipTag("kubernetes", OTHER_UID), ID_OURS],
    live: [OTHER_UID],
    want: "other-service",
  },
  {
    name: "a gone Service's with our identity (preserved)",
    tags: [ownershipTag("kubernetes", GONE), ID_OURS],
    want: "released",
  },
  { name: "our identity only (preserve dropped the Service tag)", tags: [ID_OURS], want: "released" },
  {
    name: "same cluster name, no identity, no live owner",
    tags: [ownershipTag("kubernetes", GONE)],
    want: "ambiguous",
  },
  {
    name: "same cluster name, no identity, a live owner",
    tags: [ownershipTag("kubernetes", OTHER_UID)],
    live: [OTHER_UID],
    want: "other-service",
  },
  { name: "two identities, one ours (a forged tag)", tags: [ID_OURS, ID_THEIRS], want: "contested" },
  {
    name: "this Service's tag and another live Service's",
    tags: [ownershipTag("kubernetes", UID), ownershipTag("kubernetes", OTHER_UID), ID_OURS],
    live: [OTHER_UID],
    want: "contested",
  },
  {
    name: "two gone Services' tags with our identity",
    tags: [ownershipTag("kubernetes", GONE), ownershipTag("kubernetes", OTHER_UID), ID_OURS],
    want: "contested",
  },
];

for (const c of OWNERSHIP) {
  Deno.test(`ownershipOf() ${c.name}: ${c.want}`, () => {
    const got = ownershipOf(c.tags, ctx(c.live));
    assert.equal(got.kind, c.want);
    assert.equal(isAdoptable(got), ["this-service", "untagged", "released"].includes(c.want));
    if (!isAdoptable(got)) {
      assert.match(whyNotAdoptable(7, got), /^NodeBalancer 7 .*neither adopted, changed nor deleted/);
    }
  });
}

Deno.test("contestedTags() names two identity tags, else two ownership tags, and nothing for one of each", () => {
  const mine = ownershipTag("kubernetes", UID);
  const other = ownershipTag("kubernetes", OTHER_UID);
  assert.deepEqual(contestedTags([ID_OURS, "kubernetes", ID_THEIRS, mine]), [ID_OURS, ID_THEIRS]);
  assert.deepEqual(contestedTags([mine, ID_OURS, other]), [mine, other]);
  assert.deepEqual(contestedTags(["ccm-owner:garbage", mine]), ["ccm-owner:garbage", mine]);
  assert.equal(contestedTags([mine, ID_OURS, "kubernetes"]), undefined);
  assert.equal(contestedTags([mine, mine, ID_OURS, ID_OURS]), undefined, "a tag twice is one claim");
  assert.match(
    whyNotAdoptable(7, { kind: "contested", tags: [ID_OURS, ID_THEIRS] }),
    new RegExp(`claims two owners \\(tags ${ID_OURS}, ${ID_THEIRS}\\): it belongs to nobody`),
  );
});

const IN_USE: { name: string; backends: string[]; services: string[]; want: RegExp | undefined }[] = [
  { name: "nothing shows it serves others", backends: [], services: [], want: undefined },
  {
    name: "backends not at this cluster's Nodes",
    backends: ["192.168.200.7:31080", "[2600:3c03::1]:80"],
    services: [],
    want:
      /serves someone else: backends at addresses no Node of this cluster has \(192\.168\.200\.7:31080, \[2600:3c03::1\]:80\)\. /,
  },
  {
    name: "more backends than a Warning names",
    backends: Array.from({ length: 7 }, (_, i) => `192.168.200.${i}:80`),
    services: [],
    want: /192\.168\.200\.4:80 and 2 more\)/,
  },
  {
    name: "another Service points at it",
    backends: [],
    services: ["default/first (its nodebalancer-id)"],
    want: /used by Service default\/first \(its nodebalancer-id\)\. .*--nodebalancer-id-adopts-any/,
  },
];

for (const c of IN_USE) {
  Deno.test(`whyInUse() ${c.name}`, () => {
    const got = whyInUse(7, { foreignBackends: c.backends, otherServices: c.services });
    if (c.want === undefined) assert.equal(got, undefined);
    else assert.match(got ?? "", c.want);
  });
}

Deno.test("nodeBalancerTags() ends with the cluster identity tag when known", () => {
  assert.deepEqual(nodeBalancerTags("kubernetes", [], [], UID, ID_OURS), [
    "kubernetes",
    ownershipTag("kubernetes", UID),
    ID_OURS,
  ]);
});

Deno.test("clusterTag() is the Namespace UID's 32 hex digits, within Linode's 50-character tags", () => {
  const tag = clusterTag("0F1E2D3C-4B5A-4697-8877-665544332211");
  assert.equal(tag, "ccm-cluster:0f1e2d3c4b5a46978877665544332211");
  assert.ok(tag.length <= 50);
  assert.throws(() => clusterTag(""), RangeError);
});

Deno.test("ClusterIdentity.tag() reads once, and retries a failed read without remembering it", async () => {
  let reads = 0;
  let fail = true;
  const identity = new ClusterIdentity({
    namespaceUid: (name) => {
      reads++;
      assert.equal(name, "kube-system");
      if (fail) return Promise.reject(new Error("HTTP 403"));
      return Promise.resolve("0f1e2d3c-4b5a-4697-8877-665544332211");
    },
  });
  await assert.rejects(identity.tag(), ClusterIdentityUnknownError);
  assert.equal(identity.known(), undefined);
  fail = false;
  assert.equal(await identity.tag(), "ccm-cluster:0f1e2d3c4b5a46978877665544332211");
  await identity.tag();
  assert.equal(reads, 2);
});

Deno.test("nodeAddressesOf() holds every status address and the annotated private IPv4 and public IPv6", () => {
  const n1 = node("n1", {
    internalIps: ["10.0.0.2"],
    annotations: {
      "node.k8s.linode.com/private-ip": "192.168.140.11",
      "node.k8s.linode.com/public-ipv6": "2600:3C03::F03C:91FF:FE24:1/128",
    },
  });
  assert.deepEqual(
    [...nodeAddressesOf([n1, node("n2", { internalIps: ["10.0.0.3"] })])].sort(),
    ["10.0.0.2", "10.0.0.3", "192.168.140.11", "2600:3c03::f03c:91ff:fe24:1"],
  );
});

function config(addresses: string[]): NodeBalancerConfigState {
  return { nodes: addresses.map((address) => ({ address })) } as unknown as NodeBalancerConfigState;
}

Deno.test("foreignBackendsOf() lists the backends at an address no Node has, IPv6 in brackets and any case", () => {
  const ours = new Set(["10.0.0.2", "2600:3c03::f03c:91ff:fe24:1"]);
  const configs = [
    config(["10.0.0.2:30080", "10.0.0.9:30080"]),
    config(["[2600:3C03::F03C:91FF:FE24:1]:80", "[2600:3c03::9]:80"]),
    config([]),
  ];
  assert.deepEqual(foreignBackendsOf(configs, ours), ["10.0.0.9:30080", "[2600:3c03::9]:80"]);
});
