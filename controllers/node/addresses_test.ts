import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { InstanceIndex, NO_VPC_ADDRESSES, type VpcIpv6Address } from "../../cache/instance_index.ts";
import type { LinodeInstance } from "../../cache/types.ts";
import { parseCidr4 } from "../../common/net.ts";
import {
  addressesChangeDetected,
  findInstance,
  needsAddressWrite,
  type NodeAddress,
  nodeReportedIps,
  planAddresses,
  planAnnotations,
  planLabels,
  planNodeUpdate,
  preferNodeIps,
  withoutTaint,
  withTaint,
} from "./addresses.ts";

function linode(over: Partial<LinodeInstance> = {}): LinodeInstance {
  return {
    id: 1,
    label: "n1",
    region: "us-east",
    type: "g6-standard-2",
    status: "running",
    ipv4: ["45.79.1.2"],
    ipv6: null,
    tags: [],
    ...over,
  };
}

const h = (address: string): NodeAddress => ({ type: "Hostname", address });
const int = (address: string): NodeAddress => ({ type: "InternalIP", address });
const ext = (address: string): NodeAddress => ({ type: "ExternalIP", address });

const ADDRESS_CASES: {
  name: string;
  linode: LinodeInstance;
  vpc?: string[];
  vpcIpv6?: VpcIpv6Address[];
  subnet?: string;
  nodeAddresses?: NodeAddress[];
  want: NodeAddress[];
}[] = [
  { name: "public only", linode: linode(), want: [h("n1"), ext("45.79.1.2")] },
  {
    // The Go CCM's own test ("should return data when linode is found (by name)") expects this order.
    name: "public and private in the API's order (public first), as the Go CCM",
    linode: linode({ ipv4: ["45.79.1.2", "192.168.130.5"] }),
    want: [h("n1"), ext("45.79.1.2"), int("192.168.130.5")],
  },
  {
    name: "an API listing the private address first keeps that order",
    linode: linode({ ipv4: ["192.168.130.5", "45.79.1.2"] }),
    want: [h("n1"), int("192.168.130.5"), ext("45.79.1.2")],
  },
  {
    name: "IPv6 without its prefix length, after IPv4",
    linode: linode({ ipv4: ["45.79.1.2", "192.168.1.1"], ipv6: "2600:3c03::f03c:91ff:fe24:3a2f/128" }),
    want: [h("n1"), ext("45.79.1.2"), int("192.168.1.1"), ext("2600:3c03::f03c:91ff:fe24:3a2f")],
  },
  {
    // The Go CCM's "addresses must be in order" test: VPC, public, private, IPv6.
    name: "VPC IPv4 first, then the API's ipv4 order",
    linode: linode({ ipv4: ["45.79.1.2", "192.168.1.1"], ipv6: "2001::8a2e:370:7348/128" }),
    vpc: ["10.0.0.2"],
    want: [h("n1"), int("10.0.0.2"), ext("45.79.1.2"), int("192.168.1.1"), ext("2001::8a2e:370:7348")],
  },
  {
    name: "private addresses inside LINODE_EXTERNAL_SUBNET are external",
    linode: linode({ ipv4: ["172.16.0.9", "192.168.1.1"] }),
    subnet: "172.16.0.0/24",
    want: [h("n1"), ext("172.16.0.9"), int("192.168.1.1")],
  },
  {
    // The Go CCM's "one private address, one existing internal IP set on the node" case.
    name: "the Node's own InternalIPs not listed yet are kept at the end; its other addresses are not",
    linode: linode({ ipv4: ["45.79.1.2", "192.168.1.1"] }),
    nodeAddresses: [int("10.9.9.9"), h("kubelet-name"), ext("8.8.8.8"), int("192.168.1.1"), int("10.9.9.9")],
    want: [h("n1"), ext("45.79.1.2"), int("192.168.1.1"), int("10.9.9.9")],
  },
  {
    name: "duplicates collapse to the first entry",
    linode: linode({ ipv4: ["45.79.1.2", "45.79.1.2"] }),
    vpc: ["10.0.0.4", "10.0.0.4"],
    want: [h("n1"), int("10.0.0.4"), ext("45.79.1.2")],
  },
  {
    name: "VPC IPv6 (SLAAC) after the IPv4 addresses: InternalIP, or ExternalIP when public (as the Go CCM)",
    linode: linode({ ipv4: ["45.79.1.2", "192.168.1.1"], ipv6: "2600:3c03::f03c:91ff:fe24:3a2f/128" }),
    vpc: ["10.0.0.4"],
    vpcIpv6: [{ address: "2600:3c11:e5b9:1::2", isPublic: false }, {
      address: "2600:3c11:aa::9",
      isPublic: true,
    }],
    want: [
      h("n1"),
      int("10.0.0.4"),
      ext("45.79.1.2"),
      int("192.168.1.1"),
      int("2600:3c11:e5b9:1::2"),
      ext("2600:3c11:aa::9"),
      ext("2600:3c03::f03c:91ff:fe24:3a2f"),
    ],
  },
  {
    name: "100.64/10 and 172.32/16 are not RFC 1918",
    linode: linode({ ipv4: ["100.64.0.1", "172.32.0.1", "172.31.255.255"] }),
    want: [h("n1"), ext("100.64.0.1"), ext("172.32.0.1"), int("172.31.255.255")],
  },
];

for (const c of ADDRESS_CASES) {
  Deno.test(`planAddresses() ${c.name}`, () => {
    const externalSubnet = c.subnet ? parseCidr4(c.subnet) : undefined;
    assert.deepEqual(
      planAddresses(c.linode, { ipv4: c.vpc ?? [], ipv6: c.vpcIpv6 ?? [] }, {
        externalSubnet,
        nodeAddresses: c.nodeAddresses,
      }),
      c.want,
    );
  });
}

/** VPC 10.0.0.5, public 45.79.1.2, private 192.168.130.5, public IPv6: the Go CCM's list for the issue's run. */
const GO_LIST = [h("n1"), int("10.0.0.5"), ext("45.79.1.2"), int("192.168.130.5"), ext("2600:3c03::1")];

/** Upstream's `GetNodeAddressesFromNodeIP` cases (node/helpers/address_test.go) and the Linode ones. */
const NODE_IP_CASES: {
  name: string;
  provided: string;
  list?: NodeAddress[];
  want: NodeAddress[] | string;
}[] = [
  {
    name: "--node-ip on the VPC address: the only InternalIP, first",
    provided: "10.0.0.5",
    want: [int("10.0.0.5"), h("n1"), ext("45.79.1.2"), ext("2600:3c03::1")],
  },
  {
    name: "--node-ip on the private address: the VPC InternalIP is dropped",
    provided: "192.168.130.5",
    want: [int("192.168.130.5"), h("n1"), ext("45.79.1.2"), ext("2600:3c03::1")],
  },
  {
    name: "--node-ip on the public address: the only ExternalIP (the IPv6 one dropped)",
    provided: "45.79.1.2",
    want: [ext("45.79.1.2"), h("n1"), int("10.0.0.5"), int("192.168.130.5")],
  },
  {
    name: "a dual-stack pair: each first, in the annotation's order",
    provided: "2600:3c03::1,192.168.130.5",
    want: [ext("2600:3c03::1"), int("192.168.130.5"), h("n1")],
  },
  {
    name: "IPv4 with leading zeros and IPv6 in another spelling match (ParseIPSloppy, net.IP.Equal)",
    provided: "192.168.130.005,2600:3c03:0::0001",
    want: [int("192.168.130.5"), ext("2600:3c03::1"), h("n1")],
  },
  {
    name: "an IP the Linode does not have",
    provided: "10.9.9.9",
    want: "failed to get node address from cloud provider that matches ip: 10.9.9.9",
  },
  {
    name: "an IPv4-mapped IPv6 the Linode does not have is printed as IPv4, as Go's net.IP",
    provided: "::ffff:10.9.9.9",
    want: "failed to get node address from cloud provider that matches ip: 10.9.9.9",
  },
  {
    name: "not an IP",
    provided: "node-a",
    want: 'failed to parse node IP "node-a": could not parse "node-a"',
  },
  { name: "empty", provided: "", want: 'failed to parse node IP "": could not parse ""' },
  {
    name: "spaces are not trimmed (ParseNodeIPAnnotation is strict)",
    provided: "10.0.0.5, 2600:3c03::1",
    want: 'failed to parse node IP "10.0.0.5, 2600:3c03::1": could not parse " 2600:3c03::1"',
  },
  {
    name: "two IPv4",
    provided: "10.0.0.5,192.168.130.5",
    want:
      'failed to parse node IP "10.0.0.5,192.168.130.5": must contain either a single IP or a dual-stack pair of IPs',
  },
  {
    name: "three IPs",
    provided: "10.0.0.5,2600:3c03::1,192.168.130.5",
    want:
      'failed to parse node IP "10.0.0.5,2600:3c03::1,192.168.130.5": must contain either a single IP or a dual-stack pair of IPs',
  },
  {
    name: "an unspecified address in a pair",
    provided: "0.0.0.0,2600:3c03::1",
    want:
      "failed to parse node IP \"0.0.0.0,2600:3c03::1\": dual-stack node IP cannot include '0.0.0.0' or '::'",
  },
];

for (const c of NODE_IP_CASES) {
  Deno.test(`preferNodeIps() ${c.name}`, () => {
    const got = preferNodeIps(c.provided, c.list ?? GO_LIST);
    assert.deepEqual(got, typeof c.want === "string" ? { error: c.want } : { addresses: c.want });
  });
}

/** Upstream's `nodeAddressesChangeDetected` cases (controllers/node/node_controller_test.go) and the quirk. */
const CHANGE_CASES: {
  name: string;
  have: NodeAddress[];
  want: NodeAddress[];
  changed: boolean;
  write: boolean;
}[] = [
  { name: "same list", have: GO_LIST, want: GO_LIST, changed: true, write: false },
  {
    name: "order only, one address per type: no change, nothing written",
    have: [ext("45.79.1.2"), h("n1"), int("192.168.130.5")],
    want: [h("n1"), int("192.168.130.5"), ext("45.79.1.2")],
    changed: false,
    write: false,
  },
  {
    name: "order only, two ExternalIPs: upstream finds a change and writes the new order",
    have: [h("n1"), int("192.168.130.5"), ext("45.79.1.2"), ext("2600:3c03::1")],
    want: [h("n1"), ext("45.79.1.2"), int("192.168.130.5"), ext("2600:3c03::1")],
    changed: true,
    write: true,
  },
  {
    name: "one address more",
    have: [h("n1"), ext("45.79.1.2")],
    want: [h("n1"), ext("45.79.1.2"), int("192.168.130.5")],
    changed: true,
    write: true,
  },
  {
    name: "another address of a type",
    have: [h("n1"), ext("45.79.1.2")],
    want: [h("n1"), ext("45.79.1.3")],
    changed: true,
    write: true,
  },
  {
    name: "a single address per type, equal",
    have: [h("n1")],
    want: [h("n1")],
    changed: false,
    write: false,
  },
];

for (const c of CHANGE_CASES) {
  Deno.test(`addressesChangeDetected() and needsAddressWrite(): ${c.name}`, () => {
    assert.equal(addressesChangeDetected(c.have, c.want), c.changed);
    assert.equal(needsAddressWrite(c.have, c.want), c.write);
  });
}

const LABEL_CASES = [
  {
    name: "type, region and host UUID",
    linode: linode({ host_uuid: "abc-123" }),
    want: {
      "node.kubernetes.io/instance-type": "g6-standard-2",
      "beta.kubernetes.io/instance-type": "g6-standard-2",
      "topology.kubernetes.io/region": "us-east",
      "failure-domain.beta.kubernetes.io/region": "us-east",
      "node.k8s.linode.com/host-uuid": "abc-123",
    },
  },
  {
    name: "no type and no host UUID leave those labels out",
    linode: linode({ type: null }),
    want: {
      "topology.kubernetes.io/region": "us-east",
      "failure-domain.beta.kubernetes.io/region": "us-east",
    },
  },
];

for (const c of LABEL_CASES) {
  Deno.test(`planLabels() ${c.name}`, () => assert.deepEqual(planLabels(c.linode), c.want));
}

const ANNOTATION_CASES = [
  { name: "public only has none", linode: linode(), want: {} },
  {
    name: "private IPv4 and public IPv6 with its /128, as the Go CCM writes it",
    linode: linode({ ipv4: ["45.79.1.2", "192.168.1.1"], ipv6: "2600:3c03::1/128" }),
    want: {
      "node.k8s.linode.com/private-ip": "192.168.1.1",
      "node.k8s.linode.com/public-ipv6": "2600:3c03::1/128",
    },
  },
  {
    name: "a private address in the external subnet is not the private IP",
    linode: linode({ ipv4: ["10.1.0.1"] }),
    subnet: "10.1.0.0/16",
    want: {},
  },
];

for (const c of ANNOTATION_CASES) {
  Deno.test(`planAnnotations() ${c.name}`, () => {
    const externalSubnet = c.subnet ? parseCidr4(c.subnet) : undefined;
    assert.deepEqual(planAnnotations(c.linode, { externalSubnet }), c.want);
  });
}

function node(
  over: { taints?: { key: string; effect: string }[]; annotations?: Record<string, string> },
): V1Node {
  return {
    metadata: { name: "n1", annotations: over.annotations },
    spec: { taints: over.taints },
    status: {
      addresses: [
        { type: "Hostname", address: "n1" },
        { type: "InternalIP", address: "10.0.0.1" },
        { type: "ExternalIP", address: "45.1.1.1" },
      ],
    },
  };
}

Deno.test("withoutTaint() removes only the given key", () => {
  const taints = [{ key: "a", effect: "NoSchedule" }, { key: "b", effect: "NoExecute" }];
  assert.deepEqual(withoutTaint(node({ taints }), "a"), [{ key: "b", effect: "NoExecute" }]);
  assert.deepEqual(withoutTaint(node({}), "a"), []);
});

Deno.test("withTaint() adds once and keeps the others", () => {
  const taints = [{ key: "a", effect: "NoSchedule" }];
  const add = { key: "s", effect: "NoSchedule" };
  assert.deepEqual(withTaint(node({ taints }), add), [...taints, add]);
  assert.deepEqual(withTaint(node({ taints: [add] }), add), [add]);
});

Deno.test("nodeReportedIps() lists kubelet's --node-ip first, then status IPs", () => {
  const n = node({ annotations: { "alpha.kubernetes.io/provided-node-ip": "10.0.0.1,fd00::1" } });
  assert.deepEqual(nodeReportedIps(n), ["10.0.0.1", "fd00::1", "45.1.1.1"]);
});

const INDEX = new InstanceIndex(
  [
    linode({ id: 1, label: "n1", ipv4: ["45.79.1.1", "192.168.0.1"] }),
    linode({ id: 2, label: "other", ipv4: ["45.79.1.2"], ipv6: "2600::2/128" }),
    linode({ id: 3, label: "dup", ipv4: ["45.79.1.3"] }),
    linode({ id: 4, label: "dup", ipv4: ["45.79.1.4"] }),
  ],
  new Map([[2, { ipv4: ["10.0.0.2"], ipv6: [{ address: "2600:3c11::22", isPublic: false }] }]]),
);

function kubeNode(name: string, o: { providerID?: string; ips?: string[]; provided?: string } = {}): V1Node {
  return {
    metadata: {
      name,
      annotations: o.provided ? { "alpha.kubernetes.io/provided-node-ip": o.provided } : undefined,
    },
    spec: { providerID: o.providerID },
    status: { addresses: (o.ips ?? []).map((address) => ({ type: "InternalIP", address })) },
  };
}

const LOOKUP_CASES: { name: string; node: V1Node; want?: [number, string] }[] = [
  { name: "by providerID", node: kubeNode("x", { providerID: "linode://2" }), want: [2, "providerID"] },
  {
    name: "providerID wins over a matching label",
    node: kubeNode("n1", { providerID: "linode://2" }),
    want: [2, "providerID"],
  },
  {
    name: "a providerID of a missing Linode finds nothing",
    node: kubeNode("n1", { providerID: "linode://99" }),
  },
  { name: "an invalid providerID finds nothing", node: kubeNode("n1", { providerID: "linode://n1" }) },
  { name: "by label", node: kubeNode("n1"), want: [1, "label"] },
  {
    name: "an ambiguous label falls through to IPs",
    node: kubeNode("dup", { ips: ["45.79.1.4"] }),
    want: [4, "ip"],
  },
  { name: "by status address", node: kubeNode("x", { ips: ["9.9.9.9", "192.168.0.1"] }), want: [1, "ip"] },
  { name: "by kubelet --node-ip", node: kubeNode("x", { provided: "10.0.0.2" }), want: [2, "ip"] },
  { name: "by IPv6", node: kubeNode("x", { ips: ["2600::2"] }), want: [2, "ip"] },
  { name: "by VPC IPv6", node: kubeNode("x", { ips: ["2600:3c11::22"] }), want: [2, "ip"] },
  { name: "nothing matches", node: kubeNode("x", { ips: ["9.9.9.9"] }) },
];

for (const c of LOOKUP_CASES) {
  Deno.test(`findInstance() ${c.name}`, () => {
    const found = findInstance(c.node, INDEX);
    assert.deepEqual(found && [found.instance.id, found.via], c.want);
  });
}

const UNINIT = { key: "node.cloudprovider.kubernetes.io/uninitialized", value: "true", effect: "NoSchedule" };
const OTHER = { key: "dedicated", value: "db", effect: "NoExecute" };

function initNode(): V1Node {
  return {
    metadata: { name: "n1", resourceVersion: "7", labels: { keep: "me" }, annotations: { a: "b" } },
    spec: { taints: [OTHER, UNINIT] },
    status: { addresses: [], conditions: [{ type: "Ready", status: "False" }] },
  };
}

Deno.test("planNodeUpdate() initialises every owned field and keeps other taints", () => {
  const plan = planNodeUpdate(
    initNode(),
    linode({ ipv4: ["45.79.1.2", "192.168.1.1"], host_uuid: "u1" }),
    NO_VPC_ADDRESSES,
  );
  assert.deepEqual(plan.addresses, [h("n1"), ext("45.79.1.2"), int("192.168.1.1")]);
  assert.deepEqual(plan.patch, {
    metadata: {
      resourceVersion: "7",
      labels: {
        "topology.kubernetes.io/region": "us-east",
        "failure-domain.beta.kubernetes.io/region": "us-east",
        "node.kubernetes.io/instance-type": "g6-standard-2",
        "beta.kubernetes.io/instance-type": "g6-standard-2",
        "node.k8s.linode.com/host-uuid": "u1",
      },
      annotations: { "node.k8s.linode.com/private-ip": "192.168.1.1" },
    },
    spec: { providerID: "linode://1", taints: [OTHER] },
  });
});

Deno.test("planNodeUpdate() plans nothing for a Node already in line", () => {
  const instance = linode({ ipv4: ["45.79.1.2", "192.168.1.1"] });
  const first = planNodeUpdate(initNode(), instance, NO_VPC_ADDRESSES);
  const n = initNode();
  n.metadata = {
    ...n.metadata,
    ...first.patch?.metadata,
    labels: { ...n.metadata?.labels, ...first.patch?.metadata?.labels },
  };
  n.metadata.annotations = { a: "b", ...first.patch?.metadata?.annotations };
  n.spec = { providerID: "linode://1", taints: [OTHER] };
  n.status = { addresses: first.addresses };
  assert.deepEqual(planNodeUpdate(n, instance, NO_VPC_ADDRESSES), {});
});

Deno.test("planNodeUpdate() patches only what changed on an initialised Node", () => {
  const instance = linode({ ipv4: ["45.79.1.2"], type: "g6-standard-4" });
  const n: V1Node = {
    metadata: {
      name: "n1",
      resourceVersion: "9",
      labels: {
        "topology.kubernetes.io/region": "us-east",
        "failure-domain.beta.kubernetes.io/region": "us-east",
        "node.kubernetes.io/instance-type": "g6-standard-2",
        "beta.kubernetes.io/instance-type": "g6-standard-2",
      },
    },
    spec: { providerID: "linode://1", taints: [OTHER] },
    status: { addresses: [h("n1"), ext("45.79.1.2")] },
  };
  assert.deepEqual(planNodeUpdate(n, instance, NO_VPC_ADDRESSES), {
    patch: {
      metadata: {
        labels: {
          "node.kubernetes.io/instance-type": "g6-standard-4",
          "beta.kubernetes.io/instance-type": "g6-standard-4",
        },
      },
    },
  });
});

/** The issue's run: VPC 10.0.0.5, private 192.168.130.5, public IPv4 and IPv6, kubelet `--node-ip=10.0.0.5`. */
function issueRun(provided: string, addresses: NodeAddress[]): V1Node {
  return {
    metadata: {
      name: "n1",
      resourceVersion: "3",
      annotations: { "alpha.kubernetes.io/provided-node-ip": provided },
    },
    spec: { taints: [UNINIT] },
    status: { addresses },
  };
}
const ISSUE_LINODE = linode({ ipv4: ["45.79.1.2", "192.168.130.5"], ipv6: "2600:3c03::1/128" });
const ISSUE_VPC = { ipv4: ["10.0.0.5"], ipv6: [] };

Deno.test("planNodeUpdate() with --node-ip on the VPC address writes upstream's list: that InternalIP alone, first", () => {
  // Kubelet registered the Node with its --node-ip and hostname (external cloud provider).
  const plan = planNodeUpdate(issueRun("10.0.0.5", [int("10.0.0.5"), h("n1")]), ISSUE_LINODE, ISSUE_VPC);
  assert.deepEqual(plan.addresses, [int("10.0.0.5"), h("n1"), ext("45.79.1.2"), ext("2600:3c03::1")]);
  assert.equal(plan.nodeIpError, undefined);
});

Deno.test("planNodeUpdate() keeps a --node-ip the Linode does not report, as kubelet listed it (the Go CCM keeps it)", () => {
  const plan = planNodeUpdate(issueRun("10.9.9.9", [int("10.9.9.9"), h("n1")]), ISSUE_LINODE, ISSUE_VPC);
  assert.deepEqual(plan.addresses, [int("10.9.9.9"), h("n1"), ext("45.79.1.2"), ext("2600:3c03::1")]);
});

Deno.test("planNodeUpdate() with a --node-ip neither the Linode nor the Node has: no address write, upstream's error", () => {
  const node = issueRun("10.9.9.9", [h("n1")]);
  const plan = planNodeUpdate(node, ISSUE_LINODE, ISSUE_VPC);
  assert.equal(plan.addresses, undefined);
  assert.equal(plan.nodeIpError, "failed to get node address from cloud provider that matches ip: 10.9.9.9");
  // An initialised Node's labels and annotations are still kept in line.
  node.spec = { providerID: "linode://1", taints: [] };
  assert.ok(planNodeUpdate(node, ISSUE_LINODE, ISSUE_VPC).patch?.metadata?.labels);
});

Deno.test("planNodeUpdate() writes nothing for a Node the Go CCM addressed, in its order", () => {
  const written = [int("10.0.0.5"), h("n1"), ext("45.79.1.2"), ext("2600:3c03::1")];
  const node = issueRun("10.0.0.5", written);
  node.spec = { providerID: "linode://1", taints: [] };
  assert.equal(planNodeUpdate(node, ISSUE_LINODE, ISSUE_VPC).addresses, undefined);
  const plain: V1Node = {
    metadata: { name: "n1" },
    spec: { providerID: "linode://1" },
    status: { addresses: GO_LIST },
  };
  const go = linode({ ipv4: ["45.79.1.2", "192.168.130.5"], ipv6: "2600:3c03::1/128" });
  assert.equal(planNodeUpdate(plain, go, ISSUE_VPC).addresses, undefined);
});

Deno.test("planNodeUpdate() does not rewrite addresses whose order alone differs, one per type", () => {
  const node: V1Node = {
    metadata: { name: "n1" },
    spec: { providerID: "linode://1" },
    status: { addresses: [int("192.168.1.1"), ext("45.79.1.2"), h("n1")] },
  };
  assert.equal(
    planNodeUpdate(node, linode({ ipv4: ["45.79.1.2", "192.168.1.1"] }), NO_VPC_ADDRESSES).addresses,
    undefined,
  );
});
