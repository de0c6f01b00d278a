import assert from "node:assert/strict";
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { parseServiceAnnotations } from "../annotations/parse.ts";
import type { ServiceDefaults } from "../annotations/spec.ts";
import { defaults, node, port, service } from "../testdata/fixtures.ts";
import { planNodeBalancer, type PlanOptions, type PlanResult } from "./plan.ts";
import type { DesiredNodeBalancer } from "./desired.ts";

const CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n";
const NODES = [
  node("n2", { internalIps: ["192.168.140.2"] }),
  node("n1", { internalIps: ["192.168.140.1"] }),
];

function plan(
  svc: V1Service,
  nodes: readonly V1Node[] = NODES,
  d: ServiceDefaults = defaults(),
  over: Partial<PlanOptions> = {},
): PlanResult {
  const parsed = parseServiceAnnotations(svc, d);
  if (!parsed.ok) assert.fail(parsed.errors.map((e) => e.message).join("; "));
  return planNodeBalancer(svc, parsed.spec, nodes, { defaults: d, ...over });
}

function desiredOf(result: PlanResult): DesiredNodeBalancer {
  if (!result.ok) assert.fail(result.errors.map((e) => e.message).join("; "));
  return result.desired;
}

function problemsOf(result: PlanResult): string[] {
  if (result.ok) assert.fail("expected errors");
  return result.errors.map((e) => e.problem);
}

Deno.test("planNodeBalancer() plans label, tags, throttle, type and one config per port over eligible Nodes", () => {
  const desired = desiredOf(plan(service({ ports: [port(80, "TCP", 30080)] })));
  assert.deepEqual(desired, {
    label: "ccm-665544332211",
    region: "us-east",
    type: "common",
    tags: ["kubernetes", "ccm-owner:kubernetes/0f1e2d3c4b5a4697"],
    client_conn_throttle: 20,
    ipv4: null,
    backendVpc: null,
    frontendVpc: null,
    firewall: { kind: "none" },
    configs: [{
      port: 80,
      family: "tcp",
      protocol: "tcp",
      proxy_protocol: "none",
      algorithm: "roundrobin",
      stickiness: null,
      check: "connection",
      check_interval: 5,
      check_timeout: 3,
      check_attempts: 2,
      check_passive: false,
      check_path: null,
      check_body: null,
      udp_check_port: null,
      tls: null,
      nodes: [
        { address: "192.168.140.1:30080", label: "node-n1", weight: 100, mode: "accept", nodeName: "n1" },
        { address: "192.168.140.2:30080", label: "node-n2", weight: 100, mode: "accept", nodeName: "n2" },
      ],
    }],
  });
  assert.ok(Object.isFrozen(desired.configs[0]?.nodes[0]));
});

Deno.test("planNodeBalancer() gives udp configs nodes without a mode and the udp check port", () => {
  const desired = desiredOf(plan(service({ ports: [port(53, "UDP", 30053)] })));
  const [config] = desired.configs;
  assert.deepEqual(
    [config?.protocol, config?.stickiness, config?.check, config?.udp_check_port, config?.nodes[0]],
    ["udp", "session", "none", 80, {
      address: "192.168.140.1:30053",
      label: "node-n1",
      weight: 100,
      nodeName: "n1",
    }],
  );
});

const EXCLUDE = "node.kubernetes.io/exclude-from-external-load-balancers";

/** Upstream's `stableNodeSetPredicates` (k8s.io/cloud-provider v0.35.4): readiness is not one of them. */
const ELIGIBILITY: { name: string; node: V1Node; eligible: boolean }[] = [
  { name: "Ready", node: node("a"), eligible: true },
  { name: "NotReady", node: node("a", { ready: "False" }), eligible: true },
  { name: "Ready Unknown", node: node("a", { ready: "Unknown" }), eligible: true },
  { name: "no Ready condition", node: node("a", { ready: null }), eligible: true },
  { name: `labelled ${EXCLUDE}=true`, node: node("a", { labels: { [EXCLUDE]: "true" } }), eligible: false },
  { name: `labelled ${EXCLUDE}="" (empty)`, node: node("a", { labels: { [EXCLUDE]: "" } }), eligible: false },
  {
    name: `labelled ${EXCLUDE}=yes (not a Go bool)`,
    node: node("a", { labels: { [EXCLUDE]: "yes" } }),
    eligible: false,
  },
  { name: `labelled ${EXCLUDE}=false`, node: node("a", { labels: { [EXCLUDE]: "false" } }), eligible: true },
  { name: `labelled ${EXCLUDE}=0`, node: node("a", { labels: { [EXCLUDE]: "0" } }), eligible: true },
  {
    name: "being deleted",
    node: { ...node("a"), metadata: { name: "a", deletionTimestamp: new Date(0) } },
    eligible: false,
  },
  {
    name: "tainted ToBeDeletedByClusterAutoscaler",
    node: node("a", { taints: ["ToBeDeletedByClusterAutoscaler"] }),
    eligible: false,
  },
  { name: "tainted otherwise", node: node("a", { taints: ["dedicated"] }), eligible: true },
];

for (const c of ELIGIBILITY) {
  Deno.test(`planNodeBalancer() Node ${c.name}: ${c.eligible ? "a backend" : "left out"}`, () => {
    const result = plan(service(), [node("base", { internalIps: ["192.168.149.9"] }), c.node]);
    const names = desiredOf(result).configs[0]?.nodes.map((n) => n.nodeName);
    assert.deepEqual(names, c.eligible ? ["a", "base"] : ["base"]);
  });
}

const VPC_D = defaults({ vpc: { names: ["vpc1"] } });
const ADDRESSES: {
  name: string;
  node: V1Node;
  d?: ServiceDefaults;
  ann?: Record<string, string>;
  want: string | { skipped: string };
}[] = [
  {
    name: "first InternalIP",
    node: node("a", { internalIps: ["192.168.141.5", "10.0.0.5"] }),
    want: "192.168.141.5:30080",
  },
  {
    name: "private-ip annotation over InternalIP without VPC",
    node: node("a", {
      internalIps: ["10.0.0.5"],
      annotations: { "node.k8s.linode.com/private-ip": "192.168.141.5" },
    }),
    want: "192.168.141.5:30080",
  },
  {
    name: "first InternalIP (the VPC address) with VPC backends, annotation ignored",
    node: node("a", {
      internalIps: ["10.0.0.5", "192.168.141.5"],
      annotations: { "node.k8s.linode.com/private-ip": "192.168.141.5" },
    }),
    d: VPC_D,
    want: "10.0.0.5:30080",
  },
  {
    name: "public IPv6 annotation with IPv6 backends",
    node: node("a", {
      annotations: { "node.k8s.linode.com/public-ipv6": "2600:3c03::f03c:91ff:fe24:3a2f/128" },
    }),
    ann: { "enable-ipv6-backends": "true" },
    want: "[2600:3c03::f03c:91ff:fe24:3a2f]:30080",
  },
  {
    name: "IPv6 backends without the annotation",
    node: node("a"),
    ann: { "enable-ipv6-backends": "true" },
    want: { skipped: "no public IPv6 (node.k8s.linode.com/public-ipv6)" },
  },
  { name: "no InternalIP", node: node("a", { internalIps: [] }), want: { skipped: "no InternalIP" } },
  {
    name: "a public InternalIP",
    node: node("a", { internalIps: ["45.79.1.2"] }),
    want: { skipped: "45.79.1.2 is not on Linode's private network 192.168.128.0/17" },
  },
  {
    name: "an RFC 1918 InternalIP off Linode's private network, without VPC backends",
    node: node("a", { internalIps: ["10.0.0.5"] }),
    want: { skipped: "10.0.0.5 is not on Linode's private network 192.168.128.0/17" },
  },
  {
    name: "a public InternalIP with VPC backends",
    node: node("a", { internalIps: ["45.79.1.2"] }),
    d: VPC_D,
    want: { skipped: "InternalIP 45.79.1.2 is not a private IPv4 address" },
  },
];

for (const c of ADDRESSES) {
  Deno.test(`planNodeBalancer() backend address: ${c.name}`, () => {
    const svc = service({ ports: [port(80, "TCP", 30080)], annotations: c.ann });
    const base = node("base", {
      internalIps: ["192.168.149.9"],
      annotations: { "node.k8s.linode.com/public-ipv6": "2600::9" },
    });
    const result = plan(svc, [base, c.node], c.d, { backendSubnetId: 77 });
    if (!result.ok) assert.fail(result.errors.map((e) => e.message).join("; "));
    const a = result.desired.configs[0]?.nodes.find((n) => n.nodeName === "a");
    if (typeof c.want === "string") assert.equal(a?.address, c.want);
    else assert.deepEqual(result.skippedNodes, [{ nodeName: "a", reason: c.want.skipped }]);
  });
}

Deno.test("planNodeBalancer() VPC backends carry the resolved subnet ID, and the VPC goes on create", () => {
  const desired = desiredOf(plan(service(), NODES, VPC_D, { backendSubnetId: 77 }));
  assert.deepEqual(desired.configs[0]?.nodes.map((n) => n.subnet_id), [77, 77]);
  assert.deepEqual(desired.backendVpc, {
    subnet_id: 77,
    ipv4_range: null,
    ipv6_range: null,
    ipv4_range_auto_assign: false,
  });
});

function bornAt(n: V1Node, at: string): V1Node {
  return { ...n, metadata: { ...n.metadata, creationTimestamp: new Date(at) } };
}

const SHARED_ADDRESS: { name: string; nodes: V1Node[]; want: string[] }[] = [
  {
    name: "the newer Node (a replaced Node's address reused)",
    nodes: [
      bornAt(node("b-new", { internalIps: ["192.168.140.2"] }), "2026-01-01T00:20:00Z"),
      bornAt(node("a-old", { internalIps: ["192.168.140.2"] }), "2026-01-01T00:00:00Z"),
      node("c", { internalIps: ["192.168.140.3"] }),
    ],
    want: ["b-new 192.168.140.2", "c 192.168.140.3"],
  },
  {
    name: "the newer Node, whatever the order and names",
    nodes: [
      bornAt(node("z-old", { internalIps: ["192.168.140.2"] }), "2026-01-01T00:00:00Z"),
      bornAt(node("a-new", { internalIps: ["192.168.140.2"] }), "2026-01-01T00:00:01Z"),
    ],
    want: ["a-new 192.168.140.2"],
  },
  {
    name: "the later name when born in the same second",
    nodes: [
      bornAt(node("n2", { internalIps: ["192.168.140.2"] }), "2026-01-01T00:00:00Z"),
      bornAt(node("n1", { internalIps: ["192.168.140.2"] }), "2026-01-01T00:00:00Z"),
    ],
    want: ["n2 192.168.140.2"],
  },
];

for (const c of SHARED_ADDRESS) {
  Deno.test(`planNodeBalancer() backs an address claimed by two Nodes once: ${c.name}`, () => {
    const result = plan(service(), c.nodes);
    const nodes = desiredOf(result).configs[0]?.nodes.map((n) => `${n.nodeName} ${n.address.split(":")[0]}`);
    assert.deepEqual(nodes, c.want);
    assert.deepEqual(result.ok && result.skippedNodes, [], "the other Node is not reported as left out");
  });
}

Deno.test("planNodeBalancer() backend labels are 3 to 32 characters, as the Go CCM trims them", () => {
  const long = "node-with-a-very-long-name-0123456789abcdef";
  const nodes = [
    node("ab", { internalIps: ["192.168.140.1"] }),
    node(long, { internalIps: ["192.168.140.2"] }),
  ];
  const labels = desiredOf(plan(service(), nodes)).configs[0]?.nodes.map((n) => n.label);
  assert.deepEqual(labels, ["node-ab", long.slice(0, 32)]);
});

Deno.test("planNodeBalancer() merges cluster, flag, annotation and ownership tags without duplicates", () => {
  const d = defaults({ clusterName: "prod", services: { nodeBalancerTags: ["team-a", "shared"] } });
  const tags = desiredOf(plan(service({ annotations: { tags: "shared,web-tier" } }), NODES, d)).tags;
  assert.deepEqual(tags, ["prod", "team-a", "shared", "web-tier", "ccm-owner:prod/0f1e2d3c4b5a4697"]);
});

Deno.test("planNodeBalancer() takes the certificate and key of https ports from their Secrets, never printing the key", () => {
  const svc = service({
    ports: [port(443)],
    annotations: { "port-443": '{"protocol":"https","tls-secret-name":"web-tls"}' },
  });
  const tls = new Map([["web-tls", { cert: CERT, key: KEY, fingerprint: "AA:BB" }]]);
  const desired = desiredOf(plan(svc, NODES, defaults(), { tls }));
  const config = desired.configs[0];
  assert.equal(config?.tls?.ssl_cert, CERT.trim());
  assert.equal(config?.tls?.ssl_key.reveal(), KEY.trim());
  assert.equal(config?.tls?.fingerprint, "AA:BB");
  for (
    const text of [
      JSON.stringify(desired),
      Deno.inspect(desired, { depth: 10 }),
      String(config?.tls?.ssl_key),
    ]
  ) {
    assert.ok(!text.includes("c2VjcmV0"), "the key leaked");
  }
});

Deno.test("planNodeBalancer() sessionAffinity ClientIP plans the same NodeBalancer as None", () => {
  const none = desiredOf(plan(service({ sessionAffinity: "None" })));
  const clientIp = desiredOf(plan(service({ sessionAffinity: "ClientIP" })));
  assert.deepEqual(clientIp, none);
});

Deno.test("planNodeBalancer() plans the ACL firewall's rules and keeps a firewall-id as it is", () => {
  const acl = '{"allowList": {"ipv4": ["203.0.113.0/24"]}}';
  const fw = desiredOf(plan(service({ annotations: { "firewall-acl": acl } }))).firewall;
  assert.equal(fw.kind, "acl");
  if (fw.kind === "acl") assert.deepEqual([fw.label, fw.rules.inbound_policy], ["ccm-665544332211", "DROP"]);
  const byId = desiredOf(plan(service({ annotations: { "firewall-id": "9" } }))).firewall;
  assert.deepEqual(byId, { kind: "id", firewallId: 9 });
});

const ERRORS: {
  name: string;
  svc: V1Service;
  nodes?: V1Node[];
  d?: ServiceDefaults;
  over?: Partial<PlanOptions>;
  want: string[];
}[] = [
  {
    name: "an SCTP port",
    svc: service({ ports: [port(80), port(9, "SCTP")] }),
    want: ["UnsupportedServicePort"],
  },
  {
    name: "a port without nodePort",
    svc: service({ ports: [{ port: 80, protocol: "TCP" }] }),
    want: ["MissingNodePort"],
  },
  {
    name: "no eligible Node",
    svc: service(),
    nodes: [node("a", { labels: { [EXCLUDE]: "true" } })],
    want: ["NoEligibleNodes"],
  },
  { name: "no Node at all", svc: service(), nodes: [], want: ["NoEligibleNodes"] },
  {
    name: "a missing TLS Secret",
    svc: service({
      ports: [port(443)],
      annotations: { "port-443": '{"protocol":"https","tls-secret-name":"gone"}' },
    }),
    want: ["MissingTlsSecret"],
  },
  {
    name: "a Secret without PEM",
    svc: service({
      ports: [port(443)],
      annotations: { "port-443": '{"protocol":"https","tls-secret-name":"bad"}' },
    }),
    over: { tls: new Map([["bad", { cert: "not a cert", key: "secret-key-text" }]]) },
    want: ["InvalidTlsSecret"],
  },
  { name: "an unresolved backend subnet", svc: service(), d: VPC_D, want: ["UnresolvedSubnet"] },
  {
    name: "an unresolved frontend subnet",
    svc: service({ annotations: { "frontend-vpc-name": "f", "frontend-subnet-name": "s" } }),
    want: ["UnresolvedSubnet"],
  },
  {
    name: "several problems at once",
    svc: service({ ports: [{ port: 80, protocol: "TCP" }, port(9, "SCTP")] }),
    nodes: [],
    want: ["UnsupportedServicePort", "MissingNodePort", "NoEligibleNodes"],
  },
];

for (const c of ERRORS) {
  Deno.test(`planNodeBalancer() refuses ${c.name}`, () => {
    const result = plan(c.svc, c.nodes ?? NODES, c.d ?? defaults(), c.over ?? {});
    assert.deepEqual(problemsOf(result).sort(), [...c.want].sort());
    if (!result.ok) { for (const e of result.errors) assert.ok(!e.message.includes("secret-key-text")); }
  });
}
