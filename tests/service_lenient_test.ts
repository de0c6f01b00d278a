/**
 * Values the Go CCM reads leniently, through the whole controller: a Service holding one is served as the Go
 * CCM would serve it, its backends follow node churn, an existing NodeBalancer keeps the field the value
 * governs, and a Warning names the annotation and the value used.
 */
import assert from "node:assert/strict";
import { LENIENT_REASON } from "../controllers/service/apply.ts";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import type { V1Service } from "@kubernetes/client-node";
import type { NodeBalancerSnapshot } from "../sim/mod.ts";
import { type ServiceWorld, startServiceWorld, until } from "./service_fixture.ts";

/**
 * One lenient value, on a NEW NodeBalancer (the Service holds `{...before, ...lenient}` from its creation) and
 * on an EXISTING one (made with `before`, then `lenient` patched in).
 */
interface LenientScenario {
  name: string;
  /** The lenient annotation, named in the Warning. */
  key: string;
  before: Record<string, string>;
  lenient: Record<string, string>;
  /** The Go CCM's reading, on the new NodeBalancer. */
  fresh: (nb: NodeBalancerSnapshot, svc: V1Service) => void;
  /** What the existing NodeBalancer (and Service) kept. */
  kept: (nb: NodeBalancerSnapshot, svc: V1Service) => void;
}

/** A premium NodeBalancer takes IPv6 (or VPC) backends only. */
const PREMIUM_IPV6 = { "nodebalancer-type": "premium", "enable-ipv6-backends": "true" };

const ingressOf = (svc: V1Service) => svc.status?.loadBalancer?.ingress ?? [];
const addressesOf = (nb: NodeBalancerSnapshot) => nb.configs.flatMap((c) => c.nodes.map((n) => n.address));
const protocols = (nb: NodeBalancerSnapshot) => nb.configs.map((c) => c.protocol);
const none = () => {};

const SCENARIOS: LenientScenario[] = [
  ...[["throttle-high", "50", 20], ["throttle-nan", "fast", 0], ["throttle-spaced", " 7", 0]].map((
    [name, value, fresh],
  ): LenientScenario => ({
    name: String(name),
    key: "throttle",
    before: { throttle: "5" },
    lenient: { throttle: String(value) },
    fresh: (nb) => assert.equal(nb.client_conn_throttle, fresh),
    kept: (nb) => assert.equal(nb.client_conn_throttle, 5),
  })),
  {
    name: "hostname-yes",
    key: "hostname-only-ingress",
    before: { "hostname-only-ingress": "true" },
    lenient: { "hostname-only-ingress": "yes" },
    fresh: (_, svc) => assert.ok(ingressOf(svc)[0]?.ip, JSON.stringify(ingressOf(svc))),
    kept: (nb, svc) => assert.deepEqual(ingressOf(svc), [{ hostname: nb.hostname }]),
  },
  {
    name: "ipv6-ingress-yes",
    key: "enable-ipv6-ingress",
    before: { "enable-ipv6-ingress": "true" },
    lenient: { "enable-ipv6-ingress": "on" },
    fresh: (_, svc) =>
      assert.ok(!ingressOf(svc).some((i) => i.ip?.includes(":")), JSON.stringify(svc.status)),
    kept: (_, svc) => assert.ok(ingressOf(svc).some((i) => i.ip?.includes(":")), JSON.stringify(svc.status)),
  },
  {
    name: "ipv6-backends-yes",
    key: "enable-ipv6-backends",
    before: { "enable-ipv6-backends": "true" },
    lenient: { "enable-ipv6-backends": "yes" },
    fresh: (nb) => assert.ok(!addressesOf(nb).some((a) => a.startsWith("[")), addressesOf(nb).join()),
    kept: (nb) => assert.ok(addressesOf(nb).every((a) => a.startsWith("[")), addressesOf(nb).join()),
  },
  {
    name: "preserve-yes",
    key: "preserve",
    before: { preserve: "false" },
    lenient: { preserve: "yes" },
    fresh: none,
    kept: none,
  },
  ...[["id-zero", "0"], ["id-garbage", "nb-1"]].map(([name, value]): LenientScenario => ({
    name: String(name),
    key: "nodebalancer-id",
    before: {},
    lenient: { "nodebalancer-id": String(value) },
    fresh: none,
    kept: none, // the same NodeBalancer: checked for every Service below
  })),
  {
    name: "type-unknown",
    key: "nodebalancer-type",
    before: { ...PREMIUM_IPV6 },
    lenient: { "nodebalancer-type": "huge" },
    fresh: (nb) => assert.equal(nb.type, "common"),
    kept: (nb) => assert.equal(nb.type, "premium"),
  },
  {
    name: "tags-short",
    key: "tags",
    before: { tags: "team-a,team-b" },
    lenient: { tags: "team-a,ab" },
    fresh: (nb) =>
      assert.deepEqual(["team-a", "team-b", "ab"].map((t) => nb.tags.includes(t)), [true, false, false]),
    kept: (nb) =>
      assert.deepEqual(["team-a", "team-b", "ab"].map((t) => nb.tags.includes(t)), [true, true, false]),
  },
  {
    name: "check-path",
    key: "check-path",
    before: { "default-protocol": "http", "check-type": "http", "check-path": "/up" },
    lenient: { "check-path": "up" },
    fresh: (nb) => assert.deepEqual(nb.configs.map((c) => c.check_path), ["/", "/"]),
    kept: (nb) => assert.deepEqual(nb.configs.map((c) => c.check_path), ["/up", "/up"]),
  },
  {
    name: "default-protocol-family",
    key: "default-protocol",
    before: { "default-protocol": "http" },
    lenient: { "default-protocol": "udp" },
    fresh: (nb) => assert.deepEqual(protocols(nb), ["tcp", "tcp"]),
    kept: (nb) => assert.deepEqual(protocols(nb), ["http", "http"]),
  },
  {
    name: "port-json-family",
    key: "port-80",
    before: { "port-80": '{"protocol": "http"}' },
    lenient: { "port-80": '{"protocol": "udp"}' },
    fresh: (nb) => assert.deepEqual(protocols(nb), ["tcp", "tcp"]),
    kept: (nb) => assert.deepEqual(protocols(nb), ["http", "tcp"]),
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
  w.addNode("node-1", "192.168.140.11");
  w.addNode("node-2", "192.168.140.12");
  await w.start();
  return w;
}

function patchAnnotations(w: ServiceWorld, name: string, annotations: Record<string, string>): void {
  w.kube.store.patch("services", name, { metadata: { annotations: prefixed(annotations) } }, {
    type: "merge",
    namespace: "default",
  });
}

const PORTS = [{ port: 80 }, { port: 8080 }];
const OTHER_PORT = { "port-8080": '{"algorithm": "leastconn"}' };

Deno.test("service serves each lenient value on a new and an existing NodeBalancer: the field as the Go CCM reads it or kept, the rest reconciling", async () => {
  await using w = await world();
  for (const s of SCENARIOS) {
    w.addService(`${s.name}-new`, { annotations: prefixed({ ...s.before, ...s.lenient }), ports: PORTS });
    w.addService(`${s.name}-old`, { annotations: prefixed(s.before), ports: PORTS });
  }
  const names = SCENARIOS.flatMap((s) => [`${s.name}-new`, `${s.name}-old`]);
  for (const name of names) {
    await until(w, () => backends(w.nodeBalancerOf(name)) === 2, `${name}: a NodeBalancer on both Nodes`);
  }
  const ids = new Map(names.map((n) => [n, w.nodeBalancerOf(n)?.id]));
  for (const s of SCENARIOS) patchAnnotations(w, `${s.name}-old`, s.lenient);
  for (const s of SCENARIOS) {
    const [key, value] = [annotationKey(s.key), s.lenient[s.key] ?? ""];
    for (const name of [`${s.name}-new`, `${s.name}-old`]) {
      const said = () => w.events(LENIENT_REASON, name).map((e) => e.message ?? "").join();
      await until(w, () => said().includes(`${key}=${JSON.stringify(value)}`), `${name}: a Warning`);
      assert.match(said(), /used /, `${name} names the value used`);
    }
  }
  // The other port's settings and node churn still reach every NodeBalancer.
  for (const name of names) patchAnnotations(w, name, OTHER_PORT);
  w.addNode("node-3", "192.168.140.13");
  const reconciled = (nb: NodeBalancerSnapshot | undefined) =>
    backends(nb) === 3 && nb?.configs.find((c) => c.port === 8080)?.algorithm === "leastconn";
  for (const name of names) {
    await until(w, () => reconciled(w.nodeBalancerOf(name)), `${name}: node-3 and port 8080's algorithm`);
  }
  for (const s of SCENARIOS) {
    for (const [name, check] of [[`${s.name}-new`, s.fresh], [`${s.name}-old`, s.kept]] as const) {
      const nb = w.nodeBalancerOf(name);
      const svc = w.service(name);
      assert.ok(nb && svc, name);
      assert.equal(nb.id, ids.get(name), `${name} keeps its NodeBalancer`);
      assert.equal(nb.configs.find((c) => c.port === 80)?.algorithm, "roundrobin", name);
      try {
        check(nb, svc);
      } catch (e) {
        throw new Error(`${name}: ${(e as Error).message}`);
      }
    }
  }
  assert.deepEqual(w.events("SyncLoadBalancerFailed"), []);
  assert.equal(w.linode.calls.count("POST /v4/nodebalancers"), names.length);
  assert.equal(w.nodeBalancers().length, names.length);
});

Deno.test("service deletes nothing while preserve cannot be read, and goes once it is fixed", async () => {
  await using w = await world();
  w.addService("web", { annotations: prefixed({ preserve: "yes" }) });
  await until(w, () => backends(w.nodeBalancerOf("web")) === 2, "served");
  w.kube.store.delete("services", "web", "default");
  await until(
    w,
    () => w.events("SyncLoadBalancerFailed", "web").length > 0,
    "a Warning instead of a guess",
  );
  const [failed] = w.events("SyncLoadBalancerFailed", "web");
  assert.match(
    failed?.message ?? "",
    /^Error syncing load balancer: failed to delete load balancer: .*preserve="yes"/,
  );
  assert.equal(w.nodeBalancers().length, 1, "the NodeBalancer the Go CCM would have deleted is kept");
  assert.ok(w.service("web")?.metadata?.deletionTimestamp, "the finalizer holds the Service");
  w.kube.store.patch("services", "web", { metadata: { annotations: prefixed({ preserve: "false" }) } }, {
    type: "merge",
    namespace: "default",
  });
  await until(w, () => w.service("web") === undefined, "deleted once fixed");
  assert.deepEqual(w.nodeBalancers(), []);
});
