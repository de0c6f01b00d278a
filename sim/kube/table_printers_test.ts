import assert from "node:assert/strict";
import { type KubeObject, resourceByKey } from "./resources.ts";
import { formatEndpoints, nodeRoles, printerFor, serviceExternalIp, servicePorts } from "./table_printers.ts";

const NOW = Date.parse("2026-01-01T01:00:00Z");
const CREATED = "2026-01-01T00:56:50Z"; // 3m10s before NOW

function obj(fields: Record<string, unknown>, metadata: KubeObject["metadata"] = {}): KubeObject {
  return { metadata: { name: "x", creationTimestamp: CREATED, ...metadata }, ...fields };
}

function cells(resource: string, o: KubeObject): unknown[] {
  const def = resourceByKey(resource);
  assert.ok(def);
  return printerFor(def).cells(o, NOW);
}

function nodeWith(status: Record<string, unknown>, spec: Record<string, unknown> = {}): KubeObject {
  return obj({ spec, status }, { name: "n1" });
}

const READY = { conditions: [{ type: "Ready", status: "True" }] };

const NODE_STATUS: { name: string; node: KubeObject; want: string }[] = [
  { name: "Ready", node: nodeWith(READY), want: "Ready" },
  {
    name: "NotReady for False",
    node: nodeWith({ conditions: [{ type: "Ready", status: "False" }] }),
    want: "NotReady",
  },
  {
    name: "NotReady for Unknown",
    node: nodeWith({ conditions: [{ type: "Ready", status: "Unknown" }] }),
    want: "NotReady",
  },
  { name: "Unknown without a Ready condition", node: nodeWith({ conditions: [] }), want: "Unknown" },
  { name: "cordoned", node: nodeWith(READY, { unschedulable: true }), want: "Ready,SchedulingDisabled" },
];

for (const c of NODE_STATUS) {
  Deno.test(`node printer STATUS: ${c.name}`, () => assert.equal(cells("nodes", c.node)[1], c.want));
}

Deno.test("nodeRoles() lists node-role labels and kubernetes.io/role sorted, or <none>", () => {
  assert.equal(nodeRoles(obj({})), "<none>");
  const labels = {
    "node-role.kubernetes.io/worker": "",
    "node-role.kubernetes.io/control-plane": "",
    "node-role.kubernetes.io/": "",
    "kubernetes.io/role": "ingress",
  };
  assert.equal(nodeRoles(obj({}, { labels })), "control-plane,ingress,worker");
});

Deno.test("node printer prints every column, wide ones included, with <none> and <unknown> placeholders", () => {
  const bare = nodeWith({ addresses: [{ type: "Hostname", address: "n1" }] });
  assert.deepEqual(cells("nodes", bare), [
    "n1",
    "Unknown",
    "<none>",
    "3m10s",
    "",
    "<none>",
    "<none>",
    "<unknown>",
    "<unknown>",
    "<unknown>",
  ]);
  const full = nodeWith({
    ...READY,
    addresses: [
      { type: "InternalIP", address: "10.0.0.5" },
      { type: "ExternalIP", address: "45.79.1.1" },
      { type: "ExternalIP", address: "2600:3c00::1" },
    ],
    nodeInfo: {
      kubeletVersion: "v1.32.0",
      osImage: "Debian GNU/Linux 12 (bookworm)",
      kernelVersion: "6.1.0",
      containerRuntimeVersion: "containerd://1.7.24",
    },
  });
  assert.deepEqual(cells("nodes", full).slice(4), [
    "v1.32.0",
    "10.0.0.5",
    "45.79.1.1",
    "Debian GNU/Linux 12 (bookworm)",
    "6.1.0",
    "containerd://1.7.24",
  ]);
});

function svc(spec: Record<string, unknown>, status: Record<string, unknown> = {}): KubeObject {
  return obj({ spec, status }, { name: "web", namespace: "default" });
}

const EXTERNAL_IP: { name: string; svc: KubeObject; want: string }[] = [
  { name: "ClusterIP", svc: svc({ type: "ClusterIP" }), want: "<none>" },
  {
    name: "ClusterIP with externalIPs",
    svc: svc({ type: "ClusterIP", externalIPs: ["1.2.3.4"] }),
    want: "1.2.3.4",
  },
  { name: "NodePort", svc: svc({ type: "NodePort" }), want: "<none>" },
  { name: "LoadBalancer without ingress", svc: svc({ type: "LoadBalancer" }), want: "<pending>" },
  {
    name: "LoadBalancer ingress, sorted and unique",
    svc: svc({ type: "LoadBalancer" }, {
      loadBalancer: {
        ingress: [{ ip: "45.79.9.9" }, { ip: "45.79.1.1" }, { hostname: "lb.example" }, { ip: "45.79.1.1" }],
      },
    }),
    want: "45.79.1.1,45.79.9.9,lb.example",
  },
  {
    name: "LoadBalancer ingress then externalIPs",
    svc: svc({ type: "LoadBalancer", externalIPs: ["1.2.3.4"] }, {
      loadBalancer: { ingress: [{ ip: "45.79.1.1" }] },
    }),
    want: "45.79.1.1,1.2.3.4",
  },
  {
    name: "ExternalName",
    svc: svc({ type: "ExternalName", externalName: "db.example" }),
    want: "db.example",
  },
  { name: "no type", svc: svc({}), want: "<unknown>" },
];

for (const c of EXTERNAL_IP) {
  Deno.test(`serviceExternalIp() ${c.name}`, () => assert.equal(serviceExternalIp(c.svc), c.want));
}

Deno.test("servicePorts() shows node ports and protocols, or <none>", () => {
  const ports = [{ port: 80, nodePort: 31234, protocol: "TCP" }, { port: 53, protocol: "UDP" }];
  assert.equal(servicePorts(svc({ ports })), "80:31234/TCP,53/UDP");
  assert.equal(servicePorts(svc({ type: "ClusterIP", clusterIP: "None" })), "<none>");
});

Deno.test("service printer: NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE SELECTOR", () => {
  const s = svc({
    type: "LoadBalancer",
    clusterIPs: ["10.96.0.10"],
    ports: [{ port: 80, nodePort: 31234, protocol: "TCP" }],
    selector: { app: "web" },
  });
  assert.deepEqual(cells("services", s), [
    "web",
    "LoadBalancer",
    "10.96.0.10",
    "<pending>",
    "80:31234/TCP",
    "3m10s",
    "app=web",
  ]);
  assert.equal(cells("services", svc({ type: "ClusterIP" }))[2], "<none>");
});

Deno.test("formatEndpoints() lists three ip:port pairs, then how many more", () => {
  assert.equal(formatEndpoints(obj({})), "<none>");
  const addresses = ["10.2.0.1", "10.2.0.2", "10.2.0.3"].map((ip) => ({ ip }));
  const two = obj({ subsets: [{ addresses: addresses.slice(0, 2), ports: [{ port: 8080 }] }] });
  assert.equal(formatEndpoints(two), "10.2.0.1:8080,10.2.0.2:8080");
  const many = obj({ subsets: [{ addresses, ports: [{ port: 80 }, { port: 443 }] }] });
  assert.equal(formatEndpoints(many), "10.2.0.1:80,10.2.0.2:80,10.2.0.3:80 + 3 more...");
  const headless = obj({ subsets: [{ addresses: addresses.slice(0, 1) }] });
  assert.equal(formatEndpoints(headless), "10.2.0.1");
});

Deno.test("event printer: LAST SEEN TYPE REASON OBJECT MESSAGE, then the wide columns", () => {
  const ev = obj({
    type: "Warning",
    reason: "SyncLoadBalancerFailed",
    message: "  Error syncing load balancer: HTTP 503\n",
    involvedObject: { kind: "Node", name: "demo-node-5" },
    source: { component: "cloud-controller-manager" },
    firstTimestamp: "2026-01-01T00:50:00Z",
    lastTimestamp: "2026-01-01T00:59:08Z",
    count: 4,
  }, { name: "demo-node-5.1", namespace: "default" });
  assert.deepEqual(cells("events", ev), [
    "52s",
    "Warning",
    "SyncLoadBalancerFailed",
    "node/demo-node-5",
    "",
    "cloud-controller-manager",
    "Error syncing load balancer: HTTP 503",
    "10m",
    4,
    "demo-node-5.1",
  ]);
});

Deno.test("event printer falls back to eventTime, counts singletons once and prefers the series", () => {
  const single = obj({
    eventTime: "2026-01-01T00:59:00.000000Z",
    involvedObject: { kind: "Service" },
    reportingComponent: "ccm",
    reportingInstance: "host-1",
  });
  const c = cells("events", single);
  assert.deepEqual([c[0], c[3], c[5], c[7], c[8]], ["60s", "service", "ccm, host-1", "60s", 1]);
  const series = obj({
    eventTime: "2026-01-01T00:50:00.000000Z",
    series: { count: 7, lastObservedTime: "2026-01-01T00:59:30.000000Z" },
  });
  const s = cells("events", series);
  assert.deepEqual([s[0], s[7], s[8]], ["30s", "10m", 7]);
});

Deno.test("events.k8s.io printer maps regarding, note and the deprecated fields", () => {
  const ev = obj({
    type: "Normal",
    reason: "EnsuredLoadBalancer",
    note: "Ensured load balancer",
    regarding: { kind: "Service", name: "web", fieldPath: "spec" },
    reportingController: "cloud-controller-manager",
    deprecatedFirstTimestamp: "2026-01-01T00:58:00Z",
    deprecatedLastTimestamp: "2026-01-01T00:59:00Z",
    deprecatedCount: 2,
  });
  assert.deepEqual(cells("events.k8s.io/events", ev).slice(0, 9), [
    "60s",
    "Normal",
    "EnsuredLoadBalancer",
    "service/web",
    "spec",
    "cloud-controller-manager",
    "Ensured load balancer",
    "2m",
    2,
  ]);
});

Deno.test("simple printers: namespaces, secrets, configmaps, leases", () => {
  assert.deepEqual(cells("namespaces", obj({ status: { phase: "Active" } })), ["x", "Active", "3m10s"]);
  assert.deepEqual(cells("secrets", obj({ type: "Opaque", data: { a: "", b: "" } })), [
    "x",
    "Opaque",
    2,
    "3m10s",
  ]);
  assert.deepEqual(cells("configmaps", obj({ data: { a: "" }, binaryData: { b: "" } })), ["x", 2, "3m10s"]);
  assert.deepEqual(cells("leases", obj({ spec: { holderIdentity: "ccm-1" } })), ["x", "ccm-1", "3m10s"]);
  assert.deepEqual(cells("leases", obj({ spec: {} })), ["x", "", "3m10s"]);
});

const POD_RUNNING = {
  spec: { containers: [{ name: "a" }, { name: "b" }], nodeName: "n1" },
  status: {
    phase: "Running",
    podIPs: [{ ip: "10.2.0.7" }],
    containerStatuses: [
      { name: "a", ready: true, restartCount: 0, state: { running: {} } },
      {
        name: "b",
        ready: false,
        restartCount: 3,
        state: { waiting: { reason: "CrashLoopBackOff" } },
        lastState: { terminated: { finishedAt: "2026-01-01T00:58:00Z" } },
      },
    ],
  },
};

Deno.test("pod printer: READY, STATUS from container states, RESTARTS with the last one's age", () => {
  assert.deepEqual(cells("pods", obj(POD_RUNNING, { name: "p" })), [
    "p",
    "1/2",
    "CrashLoopBackOff",
    "3 (2m ago)",
    "3m10s",
    "10.2.0.7",
    "n1",
    "<none>",
    "<none>",
  ]);
  const pending = cells("pods", obj({ spec: { containers: [{ name: "a" }] }, status: { phase: "Pending" } }));
  assert.deepEqual(pending.slice(1, 4), ["0/1", "Pending", "0"]);
  const init = obj({
    spec: { initContainers: [{ name: "i" }], containers: [{ name: "a" }] },
    status: { phase: "Pending", initContainerStatuses: [{ name: "i", state: { running: {} } }] },
  });
  assert.equal(cells("pods", init)[2], "Init:0/1");
  const deleting = obj(POD_RUNNING, { name: "p", deletionTimestamp: "2026-01-01T00:59:00Z" });
  assert.equal(cells("pods", deleting)[2], "Terminating");
});

Deno.test("generic printer for other resources: Name and Created At", () => {
  const def = { ...resourceByKey("configmaps")!, key: "example.com/widgets" };
  const printer = printerFor(def);
  assert.deepEqual(printer.columns.map((c) => [c.name, c.type]), [["Name", "string"], [
    "Created At",
    "date",
  ]]);
  assert.deepEqual(printer.cells(obj({}, { creationTimestamp: "2026-01-01T00:56:50.000Z" }), NOW), [
    "x",
    "2026-01-01T00:56:50Z",
  ]);
});
