import assert from "node:assert/strict";
import { applyJsonPatch, applyMergePatch } from "./patch.ts";
import { StatusError } from "./status.ts";
import { applyStrategicPatch } from "./strategic.ts";

const TAINTS = {
  spec: {
    taints: [
      { key: "a", value: "1", effect: "NoSchedule" },
      { key: "b", value: "2", effect: "NoExecute" },
    ],
  },
};

const STRATEGIC_CASES: { name: string; kind: string; original: unknown; patch: unknown; want: unknown }[] = [
  {
    name: "merges node taints by key",
    kind: "Node",
    original: TAINTS,
    patch: { spec: { taints: [{ key: "b", value: "3" }, { key: "c", effect: "NoSchedule" }] } },
    want: {
      spec: {
        taints: [
          { key: "a", value: "1", effect: "NoSchedule" },
          { key: "b", value: "3", effect: "NoExecute" },
          { key: "c", effect: "NoSchedule" },
        ],
      },
    },
  },
  {
    name: "deletes a taint with $patch: delete",
    kind: "Node",
    original: TAINTS,
    patch: { spec: { taints: [{ key: "a", $patch: "delete" }] } },
    want: { spec: { taints: [{ key: "b", value: "2", effect: "NoExecute" }] } },
  },
  {
    name: "replaces a list with a $patch: replace element",
    kind: "Node",
    original: TAINTS,
    patch: { spec: { taints: [{ $patch: "replace" }, { key: "z", effect: "NoSchedule" }] } },
    want: { spec: { taints: [{ key: "z", effect: "NoSchedule" }] } },
  },
  {
    name: "merges status conditions by type",
    kind: "Node",
    original: {
      status: { conditions: [{ type: "Ready", status: "False" }, { type: "DiskPressure", status: "False" }] },
    },
    patch: { status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady" }] } },
    want: {
      status: {
        conditions: [{ type: "Ready", status: "True", reason: "KubeletReady" }, {
          type: "DiskPressure",
          status: "False",
        }],
      },
    },
  },
  {
    name: "merges addresses by type, losing a second address of the same type like upstream",
    kind: "Node",
    original: { status: { addresses: [{ type: "Hostname", address: "h" }] } },
    patch: {
      status: {
        addresses: [{ type: "InternalIP", address: "10.0.0.1" }, { type: "InternalIP", address: "10.0.0.2" }],
      },
    },
    want: {
      status: {
        addresses: [{ type: "Hostname", address: "h" }, { type: "InternalIP", address: "10.0.0.2" }],
      },
    },
  },
  {
    name: "treats finalizers as a set and honours $deleteFromPrimitiveList",
    kind: "Service",
    original: { metadata: { finalizers: ["a", "b"] } },
    patch: { metadata: { finalizers: ["b", "c"], "$deleteFromPrimitiveList/finalizers": ["a"] } },
    want: { metadata: { finalizers: ["b", "c"] } },
  },
  {
    name: "replaces lists without a strategy and deletes keys set to null",
    kind: "Service",
    original: {
      status: { loadBalancer: { ingress: [{ ip: "1.1.1.1" }, { ip: "2.2.2.2" }] } },
      spec: { x: 1 },
    },
    patch: { status: { loadBalancer: { ingress: [{ ip: "3.3.3.3" }] } }, spec: { x: null } },
    want: { status: { loadBalancer: { ingress: [{ ip: "3.3.3.3" }] } }, spec: {} },
  },
  {
    name: "replaces a map with $patch: replace",
    kind: "Node",
    original: { metadata: { labels: { a: "1", b: "2" } } },
    patch: { metadata: { labels: { $patch: "replace", c: "3" } } },
    want: { metadata: { labels: { c: "3" } } },
  },
  {
    name: "keeps only $retainKeys",
    kind: "Pod",
    original: { spec: { strategy: { type: "A", rollingUpdate: { x: 1 } } } },
    patch: { spec: { strategy: { $retainKeys: ["type"], type: "Recreate" } } },
    want: { spec: { strategy: { type: "Recreate" } } },
  },
  {
    name: "orders a merged list by $setElementOrder",
    kind: "Service",
    original: { spec: { ports: [{ port: 80 }, { port: 443 }] } },
    patch: {
      spec: {
        "$setElementOrder/ports": [{ port: 443 }, { port: 80 }],
        ports: [{ port: 443, name: "https" }],
      },
    },
    want: { spec: { ports: [{ port: 443, name: "https" }, { port: 80 }] } },
  },
];

for (const c of STRATEGIC_CASES) {
  Deno.test(`applyStrategicPatch() ${c.name}`, () => {
    assert.deepEqual(applyStrategicPatch(c.kind, c.original, c.patch), c.want);
  });
}

Deno.test("applyStrategicPatch() rejects a merge-list element without its merge key", () => {
  assert.throws(
    () => applyStrategicPatch("Node", TAINTS, { spec: { taints: [{ value: "x" }] } }),
    (e) => e instanceof StatusError && e.code === 400 && /merge key: key/.test(e.message),
  );
});

const MERGE_CASES: { name: string; original: unknown; patch: unknown; want: unknown }[] = [
  {
    name: "merges nested objects",
    original: { a: { b: 1, c: 2 } },
    patch: { a: { c: 3 } },
    want: { a: { b: 1, c: 3 } },
  },
  { name: "deletes keys set to null", original: { a: 1, b: 2 }, patch: { a: null }, want: { b: 2 } },
  { name: "replaces arrays whole", original: { a: [1, 2, 3] }, patch: { a: [4] }, want: { a: [4] } },
  {
    name: "replaces a non-object target",
    original: { a: "x" },
    patch: { a: { b: 1 } },
    want: { a: { b: 1 } },
  },
];

for (const c of MERGE_CASES) {
  Deno.test(`applyMergePatch() ${c.name}`, () =>
    assert.deepEqual(applyMergePatch(c.original, c.patch), c.want));
}

const DOC = { metadata: { labels: { "a/b": "1" } }, list: [1, 2, 3] };

const JSON_CASES: { name: string; patch: unknown; want: unknown }[] = [
  {
    name: "adds with escaped pointers",
    patch: [{ op: "add", path: "/metadata/labels/c~1d", value: "2" }],
    want: {
      metadata: { labels: { "a/b": "1", "c/d": "2" } },
      list: [1, 2, 3],
    },
  },
  {
    name: "appends with -",
    patch: [{ op: "add", path: "/list/-", value: 4 }],
    want: { ...DOC, list: [1, 2, 3, 4] },
  },
  {
    name: "inserts into an array",
    patch: [{ op: "add", path: "/list/1", value: 9 }],
    want: { ...DOC, list: [1, 9, 2, 3] },
  },
  { name: "removes", patch: [{ op: "remove", path: "/list/0" }], want: { ...DOC, list: [2, 3] } },
  {
    name: "replaces in place",
    patch: [{ op: "replace", path: "/list/1", value: 7 }],
    want: { ...DOC, list: [1, 7, 3] },
  },
  {
    name: "moves and copies",
    patch: [{ op: "copy", from: "/list/0", path: "/first" }, { op: "move", from: "/list/2", path: "/last" }],
    want: { ...DOC, list: [1, 2], first: 1, last: 3 },
  },
  {
    name: "passes a matching test",
    patch: [{ op: "test", path: "/metadata/labels/a~1b", value: "1" }],
    want: DOC,
  },
];

for (const c of JSON_CASES) {
  Deno.test(`applyJsonPatch() ${c.name}`, () => assert.deepEqual(applyJsonPatch(DOC, c.patch), c.want));
}

Deno.test("applyJsonPatch() fails a mismatched test or a missing path with 422 and leaves the input alone", () => {
  const failures = [
    [{ op: "test", path: "/list/0", value: 5 }],
    [{ op: "replace", path: "/nope", value: 1 }],
    [{ op: "remove", path: "/list/9" }],
  ];
  for (const patch of failures) {
    assert.throws(() => applyJsonPatch(DOC, patch), (e) => e instanceof StatusError && e.code === 422);
  }
  assert.deepEqual(DOC.list, [1, 2, 3]);
  assert.throws(() => applyJsonPatch(DOC, { op: "add" }), (e) => e instanceof StatusError && e.code === 400);
});
