import assert from "node:assert/strict";
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { parseServiceAnnotations } from "../annotations/parse.ts";
import type { DesiredNodeBalancer } from "./desired.ts";
import { type CurrentNodeBalancer, describeAction, diffNodeBalancer, formatChanges } from "./diff.ts";
import { applyActions, asCurrent } from "../testdata/diff_fixtures.ts";
import { defaults, node, port, service } from "../testdata/fixtures.ts";
import { planNodeBalancer } from "./plan.ts";
import type { TlsMaterial } from "../tls/secrets.ts";

const CERT_A = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----";
const CERT_B = "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----";
const KEY = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleQ==\n-----END PRIVATE KEY-----";
const HTTPS = { "port-443": '{"protocol": "https", "tls-secret-name": "web-tls"}' };
const threeNodes = () =>
  ["n1", "n2", "n3"].map((n, i) => node(`node-${n}`, { internalIps: [`192.168.140.${i + 1}`] }));

function desiredFor(
  svc: V1Service,
  nodes: readonly V1Node[] = threeNodes(),
  tls: TlsMaterial = { cert: CERT_A, key: KEY, fingerprint: "AA:AA" },
  d = defaults(),
): DesiredNodeBalancer {
  const parsed = parseServiceAnnotations(svc, d);
  if (!parsed.ok) assert.fail(parsed.errors.map((e) => e.message).join("; "));
  const result = planNodeBalancer(svc, parsed.spec, nodes, {
    defaults: d,
    tls: new Map([["web-tls", tls]]),
    backendSubnetId: 5,
  });
  if (!result.ok) assert.fail(result.errors.map((e) => e.message).join("; "));
  return result.desired;
}

const SHAPES: { name: string; svc: V1Service; d?: ReturnType<typeof defaults> }[] = [
  { name: "one tcp port", svc: service() },
  { name: "tcp and udp on port 53", svc: service({ ports: [port(53, "TCP"), port(53, "UDP")] }) },
  { name: "https with a certificate", svc: service({ ports: [port(80), port(443)], annotations: HTTPS }) },
  {
    name: "http checks, proxy protocol, stickiness",
    svc: service({
      annotations: {
        "default-protocol": "http",
        "check-type": "http_body",
        "check-body": "ok",
        "default-proxy-protocol": "v2",
        "default-stickiness": "http_cookie",
      },
    }),
  },
  { name: "VPC backends", svc: service(), d: defaults({ vpc: { names: ["vpc1"] } }) },
];

for (const c of SHAPES) {
  Deno.test(`diffNodeBalancer() is empty for a NodeBalancer already as planned: ${c.name}`, () => {
    const desired = desiredFor(c.svc, threeNodes(), undefined, c.d);
    assert.deepEqual(diffNodeBalancer(asCurrent(desired), desired), {
      actions: [],
      changes: [],
      immutable: [],
    });
  });
}

/** What the API reports as `ssl_fingerprint` for each test certificate. */
const FINGERPRINTS = new Map([[CERT_A, "AA:AA"], [CERT_B, "BB:BB"]]);

function converge(current: CurrentNodeBalancer, desired: DesiredNodeBalancer, fps = FINGERPRINTS) {
  const diff = diffNodeBalancer(current, desired);
  const after = applyActions(current, diff.actions, fps);
  assert.deepEqual(
    diffNodeBalancer(after, desired).actions,
    [],
    "a second diff after applying must be empty",
  );
  return { diff, after };
}

function nodeIds(current: CurrentNodeBalancer): Record<string, number> {
  return Object.fromEntries([...current.nodes.values()].flat().map((n) => [n.label, n.id]));
}

Deno.test("diffNodeBalancer() adds a joining Node with one call and keeps every other node id", () => {
  const before = asCurrent(desiredFor(service()));
  const nodes = [...threeNodes(), node("node-n4", { internalIps: ["192.168.140.4"] })];
  const { diff, after } = converge(before, desiredFor(service(), nodes));
  assert.deepEqual(diff.actions.map((a) => a.kind), ["createNode"]);
  assert.deepEqual(diff.changes, [{
    field: "configs[80/tcp].nodes[node-n4]",
    old: null,
    new: "192.168.140.4:30080",
  }]);
  const ids = nodeIds(after);
  assert.deepEqual({ ...ids, "node-n4": 0 }, { ...nodeIds(before), "node-n4": 0 });
});

Deno.test("diffNodeBalancer() removes a leaving Node by its id and touches nothing else", () => {
  const before = asCurrent(desiredFor(service()));
  const { diff } = converge(before, desiredFor(service(), threeNodes().slice(0, 2)));
  assert.deepEqual(diff.actions, [{
    kind: "deleteNode",
    nodeBalancerId: 7,
    port: 80,
    family: "tcp",
    configId: 10,
    nodeId: 102,
  }]);
});

Deno.test("diffNodeBalancer() updates a Node whose address changed in place, keeping its node id", () => {
  const before = asCurrent(desiredFor(service()));
  const moved = [...threeNodes().slice(0, 2), node("node-n3", { internalIps: ["192.168.140.33"] })];
  const { diff, after } = converge(before, desiredFor(service(), moved));
  assert.deepEqual(diff.actions.map((a) => a.kind), ["updateNode"]);
  assert.deepEqual(nodeIds(after), nodeIds(before));
  assert.deepEqual(diff.changes, [{
    field: "configs[80/tcp].nodes[node-n3].address",
    old: "192.168.140.3:30080",
    new: "192.168.140.33:30080",
  }]);
});

Deno.test("diffNodeBalancer() adopts a Go-CCM-made NodeBalancer by changing only what differs", () => {
  const desired = desiredFor(service());
  const go = asCurrent(desired);
  const goMade: CurrentNodeBalancer = {
    nodeBalancer: { ...go.nodeBalancer, client_conn_throttle: 0, tags: ["kubernetes"] },
    configs: go.configs.map((c) => ({ ...c, check_passive: true })),
    nodes: go.nodes,
  };
  const { diff, after } = converge(goMade, desired);
  assert.deepEqual(diff.actions.map((a) => a.kind), ["updateNodeBalancer", "updateConfig"]);
  assert.deepEqual(diff.changes, [
    { field: "client_conn_throttle", old: 0, new: 20 },
    { field: "tags", old: ["kubernetes"], new: ["ccm-owner:kubernetes/0f1e2d3c4b5a4697", "kubernetes"] },
    { field: "configs[80/tcp].check_passive", old: true, new: false },
  ]);
  assert.deepEqual(nodeIds(after), nodeIds(goMade));
  assert.equal(after.nodeBalancer.id, goMade.nodeBalancer.id);
});

Deno.test("diffNodeBalancer() creates a new port's config with its nodes and deletes a removed port's last", () => {
  const before = asCurrent(desiredFor(service({ ports: [port(80), port(8080)] })));
  const { diff } = converge(
    before,
    desiredFor(service({ ports: [port(80), port(443)], annotations: HTTPS })),
  );
  assert.deepEqual(diff.actions.map(describeAction), [
    "create config for port 443/tcp on nodebalancer 7 with 3 nodes",
    "delete config 11 (port 8080/tcp) of nodebalancer 7",
  ]);
  assert.deepEqual(diff.changes, [
    { field: "configs[443/tcp]", old: null, new: "https" },
    { field: "configs[8080/tcp]", old: "tcp", new: null },
  ]);
});

Deno.test("diffNodeBalancer() replaces a config whose protocol family changes (tcp 53 to udp 53)", () => {
  const before = asCurrent(desiredFor(service({ ports: [port(53, "TCP")] })));
  const { diff } = converge(before, desiredFor(service({ ports: [port(53, "UDP")] })));
  assert.deepEqual(diff.actions.map((a) => a.kind), ["createConfig", "deleteConfig"]);
});

Deno.test("diffNodeBalancer() switches tcp to http in place with the fields http adds", () => {
  const before = asCurrent(desiredFor(service()));
  const { diff } = converge(before, desiredFor(service({ annotations: { "default-protocol": "http" } })));
  assert.deepEqual(diff.actions.map((a) => a.kind), ["updateConfig"]);
  const [update] = diff.actions;
  assert.deepEqual(update?.kind === "updateConfig" && update.body, { protocol: "http", stickiness: "table" });
});

Deno.test("diffNodeBalancer() sends a rotated certificate and key, naming only fingerprints", () => {
  const svc = service({ ports: [port(443)], annotations: HTTPS });
  const before = asCurrent(desiredFor(svc));
  const rotated = desiredFor(svc, threeNodes(), { cert: CERT_B, key: KEY, fingerprint: "BB:BB" });
  const { diff } = converge(before, rotated);
  assert.deepEqual(diff.changes, [{ field: "configs[443/tcp].ssl_fingerprint", old: "AA:AA", new: "BB:BB" }]);
  const [update] = diff.actions;
  assert.ok(update?.kind === "updateConfig" && update.body.ssl_cert === CERT_B);
  assert.ok(update.body.ssl_key?.reveal() === KEY);
  for (const text of [JSON.stringify(diff), Deno.inspect(diff, { depth: 10 }), formatChanges(diff.changes)]) {
    assert.ok(!text.includes("c2VjcmV0"), "the key leaked");
  }
});

Deno.test("diffNodeBalancer() compares fingerprints in any case and spacing, and leaves an unknown one alone", () => {
  const svc = service({ ports: [port(443)], annotations: HTTPS });
  const before = asCurrent(desiredFor(svc));
  const same = desiredFor(svc, threeNodes(), { cert: CERT_A, key: KEY, fingerprint: "aaaa" });
  assert.deepEqual(diffNodeBalancer(before, same).actions, []);
  const unknown = desiredFor(svc, threeNodes(), { cert: CERT_B, key: KEY, fingerprint: null });
  assert.deepEqual(diffNodeBalancer(before, unknown).actions, []);
});

Deno.test("diffNodeBalancer() reports type and reserved IPv4 changes as immutable, with no action", () => {
  const desired = desiredFor(
    service({ annotations: { "nodebalancer-type": "premium", "reserved-ipv4": "203.0.113.5" } }),
  );
  const current = asCurrent(desired);
  const old = {
    ...current,
    nodeBalancer: { ...current.nodeBalancer, type: "common" as const, ipv4: "45.79.0.1" },
  };
  const diff = diffNodeBalancer(old, desired);
  assert.deepEqual(diff.actions, []);
  assert.deepEqual(diff.immutable, [
    { field: "type", old: "common", new: "premium" },
    { field: "ipv4", old: "45.79.0.1", new: "203.0.113.5" },
  ]);
});

Deno.test("diffNodeBalancer() deletes a duplicate config of the same port and family", () => {
  const desired = desiredFor(service());
  const current = asCurrent(desired);
  const dup = { ...current, configs: [...current.configs, { ...current.configs[0]!, id: 99 }] };
  const { diff } = converge(dup, desired);
  assert.deepEqual(diff.actions.map(describeAction), ["delete config 99 (port 80/tcp) of nodebalancer 7"]);
});

Deno.test("formatChanges() prints each field with old and new value", () => {
  assert.equal(
    formatChanges([
      { field: "client_conn_throttle", old: 0, new: 20 },
      { field: "tags", old: ["a"], new: ["a", "b"] },
      { field: "configs[443/tcp]", old: null, new: "https" },
    ]),
    "client_conn_throttle: 0 → 20; tags: [a] → [a, b]; configs[443/tcp]: (none) → https",
  );
});

Deno.test("diffNodeBalancer() leaves what a lenient value governs as it is and updates everything else", () => {
  const lenient = service({
    annotations: {
      throttle: "50",
      "nodebalancer-type": "huge",
      "check-type": "http",
      "check-path": "healthz",
      tags: "team-a,ab",
    },
  });
  const old = desiredFor(
    service({
      annotations: { throttle: "5", "check-type": "http", "check-path": "/up", tags: "team-a,team-b" },
    }),
  );
  const current = asCurrent(old);
  const before = {
    ...current,
    nodeBalancer: { ...current.nodeBalancer, type: "premium" as const },
    nodes: new Map([...current.nodes].map(([id, nodes]) => [id, nodes.slice(1)])), // a Node joined since
  };
  const diff = diffNodeBalancer(before, desiredFor(lenient));
  assert.deepEqual(diff.immutable, [], "type kept, not reported");
  assert.deepEqual(diff.actions.map((a) => a.kind), ["createNode"]);
  assert.deepEqual(diff.changes.map((c) => c.field), ["configs[80/tcp].nodes[node-n1]"]);
});

Deno.test("diffNodeBalancer() with kept tags keeps the user's, but never an ownership or identity tag not planned", () => {
  const desired = desiredFor(service({ annotations: { tags: "team-a,ab" } }));
  assert.deepEqual(desired.keep, ["tags"]);
  const current = asCurrent(desired);
  const stale = ["ccm-owner:kubernetes/5e1f0000dead4bee", "ccm-cluster:" + "f".repeat(32)];
  const before = {
    ...current,
    nodeBalancer: { ...current.nodeBalancer, tags: [...current.nodeBalancer.tags, "by-hand", ...stale] },
  };
  const diff = diffNodeBalancer(before, desired);
  const tags = diff.changes.find((c) => c.field === "tags");
  assert.deepEqual(
    tags?.new,
    [...desired.tags, "by-hand"].sort(),
    "the user's tag kept, the stale claims dropped",
  );
});

Deno.test("diffNodeBalancer() keeps the protocol of a port whose default-protocol is of the other family", () => {
  const current = asCurrent(desiredFor(service({ annotations: { "default-protocol": "http" } })));
  const desired = desiredFor(service({ annotations: { "default-protocol": "udp" } }));
  assert.equal(desired.configs[0]?.protocol, "tcp", "a new config would be tcp");
  const fields = diffNodeBalancer(current, desired).changes.map((c) => c.field);
  assert.ok(!fields.includes("configs[80/tcp].protocol"), fields.join());
});

Deno.test("diffNodeBalancer() keeps a config the Go CCM made in the other family from a lenient protocol, its nodes following", () => {
  // The Go CCM applied default-protocol udp to TCP port 80 as it is: a udp config on port 80.
  const goMade = desiredFor(service({ ports: [port(80, "UDP")], annotations: {} }), threeNodes().slice(1));
  const current = asCurrent(goMade);
  const desired = desiredFor(service({ annotations: { "default-protocol": "udp" } }));
  assert.deepEqual(desired.configs.map((c) => [c.family, c.keep]), [["tcp", ["protocol"]]]);
  const diff = diffNodeBalancer(current, desired);
  assert.deepEqual(diff.actions.map((a) => a.kind), ["createNode"], "kept, not replaced; node-n1 added");
  const add = diff.actions[0];
  assert.ok(add?.kind === "createNode" && add.body.mode === undefined, "a udp node has no mode");
  // A Service with a UDP port 80 of its own keeps that config for it.
  const both = desiredFor(
    service({ ports: [port(80), port(80, "UDP")], annotations: { "default-protocol": "udp" } }),
  );
  const kinds = diffNodeBalancer(current, both).actions.map((a) => a.kind);
  assert.ok(kinds.includes("createConfig"), kinds.join());
});
