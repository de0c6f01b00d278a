/**
 * Every Go CCM annotation through the whole controller: each valid value reaches the NodeBalancer the
 * emulator holds; each invalid value gets a Warning naming it, and nothing is created. (VPC backend and
 * frontend annotations need a VPC-configured CCM and are planned in `plan_test.ts`; the demo runs VPC backends.)
 */
import assert from "node:assert/strict";
import { PUBLIC_IPV6_ANNOTATION } from "../controllers/node/addresses.ts";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import type { NodeBalancerSnapshot } from "../sim/mod.ts";
import { REGION } from "./ccm_fixture.ts";
import { type ServiceInput, type ServiceWorld, startServiceWorld, until } from "./service_fixture.ts";

type Config = NodeBalancerSnapshot["configs"][number];

interface ValidCase {
  name: string;
  annotations: Record<string, string>;
  ports?: ServiceInput["ports"];
  check: (nb: NodeBalancerSnapshot, config: Config) => void;
}

const VALID: ValidCase[] = [
  {
    name: "throttle",
    annotations: { throttle: "7" },
    check: (nb) => assert.equal(nb.client_conn_throttle, 7),
  },
  {
    name: "default-protocol",
    annotations: { "default-protocol": "http" },
    check: (_, c) => assert.equal(c.protocol, "http"),
  },
  {
    name: "default-proxy-protocol",
    annotations: { "default-proxy-protocol": "v2" },
    check: (_, c) => assert.equal(c.proxy_protocol, "v2"),
  },
  {
    name: "proxy-protocol (deprecated)",
    annotations: { "proxy-protocol": "v1" },
    check: (_, c) => assert.equal(c.proxy_protocol, "v1"),
  },
  {
    name: "default-algorithm",
    annotations: { "default-algorithm": "leastconn" },
    check: (_, c) => assert.equal(c.algorithm, "leastconn"),
  },
  {
    name: "default-stickiness",
    annotations: { "default-protocol": "http", "default-stickiness": "http_cookie" },
    check: (_, c) => assert.equal(c.stickiness, "http_cookie"),
  },
  {
    name: "port-80",
    annotations: {
      "port-80": JSON.stringify({ protocol: "http", algorithm: "source", "proxy-protocol": "none" }),
    },
    check: (_, c) => assert.deepEqual([c.protocol, c.algorithm], ["http", "source"]),
  },
  {
    name: "check-type, check-path",
    annotations: { "default-protocol": "http", "check-type": "http", "check-path": "/healthz" },
    check: (_, c) => assert.deepEqual([c.check, c.check_path], ["http", "/healthz"]),
  },
  {
    name: "check-body",
    annotations: { "default-protocol": "http", "check-type": "http_body", "check-body": "ok" },
    check: (_, c) => assert.deepEqual([c.check, c.check_body], ["http_body", "ok"]),
  },
  {
    name: "check-interval, check-timeout, check-attempts, check-passive",
    annotations: {
      "check-interval": "10",
      "check-timeout": "4",
      "check-attempts": "5",
      "check-passive": "true",
    },
    check: (_, c) =>
      assert.deepEqual([c.check_interval, c.check_timeout, c.check_attempts, c.check_passive], [
        10,
        4,
        5,
        true,
      ]),
  },
  {
    name: "enable-ipv6-backends",
    annotations: { "enable-ipv6-backends": "true" },
    check: (_, c) =>
      assert.ok(c.nodes.every((n) => n.address.startsWith("[2600:3c03::")), c.nodes[0]?.address ?? ""),
  },
  {
    // Premium NodeBalancers take VPC or public IPv6 backends only.
    name: "nodebalancer-type",
    annotations: { "nodebalancer-type": "premium", "enable-ipv6-backends": "true" },
    check: (nb) => assert.equal(nb.type, "premium"),
  },
  {
    name: "nodebalancer-type premium_40gb",
    annotations: { "nodebalancer-type": "premium_40gb", "enable-ipv6-backends": "true" },
    check: (nb) => assert.equal(nb.type, "premium_40gb"),
  },
  {
    name: "udp-check-port (a UDP port, on premium)",
    annotations: { "nodebalancer-type": "premium", "enable-ipv6-backends": "true", "udp-check-port": "8080" },
    ports: [{ port: 53, protocol: "UDP" }],
    check: (_, c) => assert.deepEqual([c.protocol, c.udp_check_port], ["udp", 8080]),
  },
  {
    name: "tags",
    annotations: { tags: "team-a,prod" },
    check: (nb) => assert.ok(["team-a", "prod"].every((t) => nb.tags.includes(t)), nb.tags.join()),
  },
];

/** Values the Go CCM refuses too (those it reads leniently are in `service_lenient_test.ts`). */
const INVALID: [string, string][] = [
  ["default-protocol", "ftp"],
  ["default-proxy-protocol", "v3"],
  ["default-algorithm", "random"],
  ["check-type", "tcp"],
  ["check-interval", "0"],
  ["check-timeout", "soon"],
  ["check-passive", "maybe"],
  ["port-80", "{not json"],
  ["firewall-acl", "{}"],
  ["firewall-id", "abc"],
  ["reserved-ipv4", "300.1.1.1"],
  ["nodebalancer-id", "-1"],
];

function prefixed(annotations: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).map(([k, v]) => [annotationKey(k), v]));
}

function serviceName(i: number): string {
  return `svc-${i}`;
}

async function world(): Promise<ServiceWorld> {
  const w = await startServiceWorld({ flags: ["--concurrent-service-syncs=4"] });
  // The node controller annotates each Node with its Linode's public IPv6 (for enable-ipv6-backends).
  w.addNode("node-1", "192.168.0.11");
  w.addNode("node-2", "192.168.0.12");
  await w.start();
  for (const name of ["node-1", "node-2"]) {
    assert.ok(w.node(name)?.metadata?.annotations?.[PUBLIC_IPV6_ANNOTATION], `${name}: its public IPv6`);
  }
  return w;
}

Deno.test("service carries every valid annotation to the NodeBalancer", async () => {
  await using w = await world();
  VALID.forEach((c, i) =>
    w.addService(serviceName(i), { annotations: prefixed(c.annotations), ports: c.ports })
  );
  for (const [i, c] of VALID.entries()) {
    const name = serviceName(i);
    await until(w, () => w.nodeBalancerOf(name) !== undefined, `${c.name}: a NodeBalancer`);
    const nb = w.nodeBalancerOf(name);
    assert.ok(nb);
    const config = nb.configs[0];
    assert.ok(config, `${c.name}: a config`);
    c.check(nb, config);
  }
  assert.deepEqual(w.events("SyncLoadBalancerFailed"), []);
});

Deno.test("service names every invalid annotation in a Warning and creates nothing", async () => {
  await using w = await world();
  INVALID.forEach(([key, value], i) =>
    w.addService(serviceName(i), { annotations: prefixed({ [key]: value }) })
  );
  for (const [i, [key, value]] of INVALID.entries()) {
    const name = serviceName(i);
    await until(w, () => w.events("SyncLoadBalancerFailed", name).length > 0, `a Warning for ${key}`);
    const message = w.events("SyncLoadBalancerFailed", name)[0]?.message ?? "";
    assert.ok(message.includes(annotationKey(key)), `${key}: ${message}`);
    assert.ok(message.includes(JSON.stringify(value).slice(1, 20)), `${key} value: ${message}`);
    assert.match(message, /expected/, `${key} says what is accepted: ${message}`);
  }
  assert.deepEqual(w.nodeBalancers(), []);
  assert.equal(w.linode.calls.count("POST /v4/nodebalancers"), 0);
});

Deno.test("service puts a NodeBalancer on its reserved IPv4 and releases it only when asked", async () => {
  await using w = await world();
  const reserve = () =>
    w.userCall<{ address: string }>("POST", "/networking/reserved/ips", { region: REGION });
  const [kept, released] = [await reserve(), await reserve()];
  w.addService("kept", { annotations: prefixed({ "reserved-ipv4": kept.address }) });
  w.addService("released", {
    annotations: prefixed({ "reserved-ipv4": released.address, "retain-reserved-ipv4": "false" }),
  });
  await until(w, () => w.nodeBalancerOf("kept")?.ipv4 === kept.address, "kept on its address");
  await until(
    w,
    () => w.nodeBalancerOf("released")?.ipv4 === released.address,
    "released on its address",
  );
  w.kube.store.delete("services", "kept", "default");
  w.kube.store.delete("services", "released", "default");
  await until(w, () => w.nodeBalancers().length === 0, "both deleted");
  const left = w.linode.world.reservedIps.list().map((r) => r.address);
  assert.deepEqual(left, [kept.address], "retain-reserved-ipv4 false released the other");
});
