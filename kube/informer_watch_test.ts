import assert from "node:assert/strict";
import { loadYaml } from "@kubernetes/client-node";
import { fromWire, watchTimeoutSeconds } from "./informer_watch.ts";

// kube/informer_watch.ts imports client-node's serializer from its file (not exported by the index): an upgrade that
// changes it must fail here, naming that file, rather than hand the informer objects unlike listed ones.
const UPGRADE = "@kubernetes/client-node changed: kube/informer_watch.ts no longer decodes like loadYaml";

const WIRE = [
  {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: "n1",
      resourceVersion: "7",
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { a: "b" },
    },
    spec: {
      providerID: "linode://1",
      taints: [{ key: "k", effect: "NoSchedule", timeAdded: "2026-01-02T00:00:00Z" }],
    },
    status: {
      addresses: [{ type: "Hostname", address: "n1" }],
      conditions: [{ type: "Ready", status: "True", lastHeartbeatTime: "2026-01-03T00:00:00Z" }],
    },
  },
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default", deletionTimestamp: "2026-01-04T00:00:00Z" },
    spec: { type: "LoadBalancer", ports: [{ port: 80, protocol: "TCP" }] },
    status: { loadBalancer: { ingress: [{ ip: "45.79.0.1" }] } },
  },
  { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: 3 } },
];

for (const wire of WIRE) {
  Deno.test(`fromWire() builds the same ${wire.kind} model as loadYaml of its JSON`, () => {
    const { apiVersion, kind, ...raw } = wire;
    const decoded = fromWire<Record<string, unknown>>(raw, apiVersion, kind);
    assert.deepEqual(decoded, loadYaml(JSON.stringify(wire)), UPGRADE);
  });
}

Deno.test("fromWire() turns wire timestamps into Dates, as listed objects have them", () => {
  const { apiVersion, kind, ...raw } = WIRE[0]!;
  const node = fromWire<{ metadata: { creationTimestamp: unknown } }>(raw, apiVersion, kind);
  assert.ok(node.metadata.creationTimestamp instanceof Date, UPGRADE);
});

Deno.test("watchTimeoutSeconds() ends a watch before the silence watchdog, spread over 60-80 % of it", () => {
  assert.equal(watchTimeoutSeconds(30_000, () => 0), 18);
  assert.equal(watchTimeoutSeconds(30_000, () => 0.999), 23);
  assert.equal(watchTimeoutSeconds(400, () => 0.5), 1, "never 0: that would mean no timeout");
});
