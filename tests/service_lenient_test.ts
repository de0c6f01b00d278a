/**
 * Values the Go CCM reads leniently, through the whole controller: a Service holding one is served as the Go
 * CCM would serve it, its backends follow node churn, an existing NodeBalancer keeps the field the value
 * governs, and a Warning names the annotation and the value used.
 */
import assert from "node:assert/strict";
import { LENIENT_REASON } from "../controllers/service/ensure.ts";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import type { NodeBalancerSnapshot } from "../sim/mod.ts";
import { type ServiceInput, type ServiceWorld, startServiceWorld, until } from "./service_fixture.ts";

interface LenientScenario {
  name: string;
  annotations: Record<string, string>;
  ports?: ServiceInput["ports"];
  check: (nb: NodeBalancerSnapshot, world: ServiceWorld) => void;
}

/** UDP ports need a premium NodeBalancer, which takes IPv6 (or VPC) backends only. */
const PREMIUM_IPV6 = { "nodebalancer-type": "premium", "enable-ipv6-backends": "true" };

const SCENARIOS: LenientScenario[] = [
  {
    name: "throttle-high",
    annotations: { throttle: "50" },
    check: (nb) => assert.equal(nb.client_conn_throttle, 20),
  },
  {
    name: "throttle-word",
    annotations: { throttle: "fast" },
    check: (nb) => assert.equal(nb.client_conn_throttle, 0),
  },
  {
    name: "type-unknown",
    annotations: { "nodebalancer-type": "huge" },
    check: (nb) => assert.equal(nb.type, "common"),
  },
  { name: "preserve-yes", annotations: { preserve: "yes" }, check: () => {} },
  { name: "id-zero", annotations: { "nodebalancer-id": "0" }, check: () => {} },
  { name: "id-garbage", annotations: { "nodebalancer-id": "nb-1" }, check: () => {} },
  {
    name: "tags-short",
    annotations: { tags: "team-a,ab" },
    check: (nb) => assert.ok(nb.tags.includes("team-a") && !nb.tags.includes("ab"), nb.tags.join()),
  },
  {
    name: "check-path",
    annotations: { "default-protocol": "http", "check-type": "http", "check-path": "healthz" },
    check: (nb) => assert.equal(nb.configs[0]?.check_path, "/"),
  },
  {
    name: "hostname-yes",
    annotations: { "hostname-only-ingress": "yes" },
    check: (_, w) => assert.ok(w.service("hostname-yes")?.status?.loadBalancer?.ingress?.[0]?.ip),
  },
  {
    name: "protocol-family",
    annotations: { ...PREMIUM_IPV6, "default-protocol": "http" },
    ports: [{ port: 80 }, { port: 53, protocol: "UDP" }],
    check: (nb) => assert.deepEqual(nb.configs.map((c) => [c.port, c.protocol]), [[80, "http"], [53, "udp"]]),
  },
];

function prefixed(annotations: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).map(([k, v]) => [annotationKey(k), v]));
}

function backends(nb: NodeBalancerSnapshot | undefined): number {
  return Math.min(...(nb?.configs ?? []).map((c) => c.nodes.length));
}

async function world(): Promise<ServiceWorld> {
  const w = await startServiceWorld({ flags: ["--concurrent-service-syncs=4"] });
  w.addNode("node-1", "192.168.0.11");
  w.addNode("node-2", "192.168.0.12");
  await w.start();
  return w;
}

Deno.test("service serves Services with values the Go CCM reads leniently, warns, and follows node churn", async () => {
  await using w = await world();
  for (const s of SCENARIOS) w.addService(s.name, { annotations: prefixed(s.annotations), ports: s.ports });
  for (const s of SCENARIOS) {
    await until(w, () => backends(w.nodeBalancerOf(s.name)) === 2, `${s.name}: a NodeBalancer on both Nodes`);
    const nb = w.nodeBalancerOf(s.name);
    assert.ok(nb);
    s.check(nb, w);
    const [key, value] = Object.entries(s.annotations).at(-1) ?? [];
    const said = w.events(LENIENT_REASON, s.name).map((e) => e.message ?? "").join();
    assert.ok(said.includes(`${annotationKey(key ?? "")}=${JSON.stringify(value)}`), `${s.name}: ${said}`);
    assert.match(said, /used /, `${s.name} names the value used`);
  }
  assert.deepEqual(w.events("SyncLoadBalancerFailed"), []);
  w.addNode("node-3", "192.168.0.13");
  for (const s of SCENARIOS) {
    await until(w, () => backends(w.nodeBalancerOf(s.name)) === 3, `${s.name}: node-3 added`);
  }
  assert.equal(w.nodeBalancers().length, SCENARIOS.length);
});

Deno.test("service keeps an existing NodeBalancer's throttle, type and check path when their values turn lenient", async () => {
  await using w = await world();
  const valid = { throttle: "5", "default-protocol": "http", "check-type": "http", "check-path": "/up" };
  w.addService("web", {
    annotations: prefixed({ ...valid, "nodebalancer-type": "premium", "enable-ipv6-backends": "true" }),
  });
  await until(w, () => backends(w.nodeBalancerOf("web")) === 2, "web on both Nodes");
  const lenient = { throttle: "99", "nodebalancer-type": "premium_80gb", "check-path": "up" };
  w.kube.store.patch("services", "web", { metadata: { annotations: prefixed(lenient) } }, {
    type: "merge",
    namespace: "default",
  });
  await until(w, () => w.events(LENIENT_REASON, "web").length > 0, "a Warning");
  w.addNode("node-3", "192.168.0.13");
  await until(w, () => backends(w.nodeBalancerOf("web")) === 3, "node-3 added");
  const nb = w.nodeBalancerOf("web");
  assert.deepEqual([nb?.client_conn_throttle, nb?.type, nb?.configs[0]?.check_path], [5, "premium", "/up"]);
  assert.deepEqual(w.events("LoadBalancerFieldImmutable", "web"), []);
  assert.equal(w.linode.calls.count("POST /v4/nodebalancers"), 1);
});

Deno.test("service deletes nothing while preserve cannot be read, and goes once it is fixed", async () => {
  await using w = await world();
  w.addService("web", { annotations: prefixed({ preserve: "yes" }) });
  await until(w, () => backends(w.nodeBalancerOf("web")) === 2, "served");
  w.kube.store.delete("services", "web", "default");
  await until(
    w,
    () => w.events("DeleteLoadBalancerFailed", "web").length > 0,
    "a Warning instead of a guess",
  );
  assert.match(w.events("DeleteLoadBalancerFailed", "web")[0]?.message ?? "", /preserve="yes"/);
  assert.equal(w.nodeBalancers().length, 1, "the NodeBalancer the Go CCM would have deleted is kept");
  assert.ok(w.service("web")?.metadata?.deletionTimestamp, "the finalizer holds the Service");
  w.kube.store.patch("services", "web", { metadata: { annotations: prefixed({ preserve: "false" }) } }, {
    type: "merge",
    namespace: "default",
  });
  await until(w, () => w.service("web") === undefined, "deleted once fixed");
  assert.deepEqual(w.nodeBalancers(), []);
});
