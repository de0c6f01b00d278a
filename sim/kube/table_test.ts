import assert from "node:assert/strict";
import { negotiate, type Representation } from "./negotiate.ts";
import { type KubeObject, resourceByKey } from "./resources.ts";
import { StatusError } from "./status.ts";
import { parseIncludeObject, toPartialMetadata, toTable, watchRenderer } from "./table.ts";

const NODES = resourceByKey("nodes")!;
const NOW = Date.parse("2026-01-01T00:03:10Z");

function node(name: string, rv: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      resourceVersion: rv,
      uid: `uid-${name}`,
      labels: { a: "1" },
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
    spec: {},
    status: { conditions: [{ type: "Ready", status: "True" }] },
  };
}

function nodeList(items: KubeObject[], metadata: Record<string, unknown> = { resourceVersion: "9" }) {
  return { kind: "NodeList", apiVersion: "v1", metadata, items };
}

function rows(table: Record<string, unknown>): Record<string, unknown>[] {
  assert.ok(Array.isArray(table.rows));
  return table.rows as Record<string, unknown>[];
}

Deno.test("toTable() of a list: columns with all five fields, one row per item, PartialObjectMetadata objects", () => {
  const table = toTable(NODES, nodeList([node("n1", "5"), node("n2", "7")]), {
    version: "v1",
    includeObject: "Metadata",
    nowMs: NOW,
  });
  assert.equal(table.kind, "Table");
  assert.equal(table.apiVersion, "meta.k8s.io/v1");
  assert.deepEqual(table.metadata, { resourceVersion: "9" });
  const columns = table.columnDefinitions as Record<string, unknown>[];
  assert.deepEqual(Object.keys(columns[0]!).sort(), ["description", "format", "name", "priority", "type"]);
  assert.deepEqual(columns.filter((c) => c.priority === 0).map((c) => c.name), [
    "Name",
    "Status",
    "Roles",
    "Age",
    "Version",
  ]);
  assert.equal(columns[0]!.format, "name");
  assert.deepEqual(rows(table).map((r) => (r.cells as unknown[]).slice(0, 4)), [
    ["n1", "Ready", "<none>", "3m10s"],
    ["n2", "Ready", "<none>", "3m10s"],
  ]);
  assert.deepEqual(rows(table)[0]!.object, {
    kind: "PartialObjectMetadata",
    apiVersion: "meta.k8s.io/v1",
    metadata: node("n1", "5").metadata,
  });
});

Deno.test("toTable() includeObject=Object carries the whole object, None a null object", () => {
  const list = nodeList([{ ...node("n1", "5"), apiVersion: undefined, kind: undefined }]);
  const full = toTable(NODES, list, { version: "v1", includeObject: "Object", nowMs: NOW });
  assert.deepEqual(rows(full)[0]!.object, node("n1", "5"));
  const none = toTable(NODES, list, { version: "v1beta1", includeObject: "None", nowMs: NOW });
  assert.equal(none.apiVersion, "meta.k8s.io/v1beta1");
  assert.ok("object" in rows(none)[0]!);
  assert.equal(rows(none)[0]!.object, null);
});

Deno.test("toTable() keeps a page's continue token and remaining count; one object's rv for a single GET", () => {
  const page = nodeList([node("n1", "5")], { resourceVersion: "9", continue: "abc", remainingItemCount: 4 });
  const table = toTable(NODES, page, { version: "v1", includeObject: "Metadata", nowMs: NOW });
  assert.deepEqual(table.metadata, { resourceVersion: "9", continue: "abc", remainingItemCount: 4 });
  const one = toTable(NODES, node("n1", "5"), { version: "v1", includeObject: "Metadata", nowMs: NOW });
  assert.deepEqual(one.metadata, { resourceVersion: "5" });
  assert.equal(rows(one).length, 1);
});

Deno.test("toTable() of an empty list: [] rows for typed printers, null for the generic table", () => {
  const empty = toTable(NODES, nodeList([]), { version: "v1", includeObject: "Metadata", nowMs: NOW });
  assert.deepEqual(empty.rows, []);
  const generic = { ...NODES, key: "example.com/widgets" };
  const none = toTable(generic, nodeList([]), { version: "v1", includeObject: "Metadata", nowMs: NOW });
  assert.equal(none.rows, null);
});

Deno.test("parseIncludeObject() defaults to Metadata and rejects unknown values with a 400", () => {
  assert.equal(parseIncludeObject(new URLSearchParams()), "Metadata");
  assert.equal(parseIncludeObject(new URLSearchParams("includeObject=None")), "None");
  assert.throws(
    () => parseIncludeObject(new URLSearchParams("includeObject=All")),
    (e) =>
      e instanceof StatusError && e.code === 400 && /includeObject: Invalid value: "All"/.test(e.message),
  );
});

Deno.test("toPartialMetadata() gives lists a PartialObjectMetadataList and refuses the wrong shape with a 406", () => {
  const list = toPartialMetadata(NODES, nodeList([node("n1", "5")]), "PartialObjectMetadataList", "v1");
  assert.equal(list.kind, "PartialObjectMetadataList");
  assert.deepEqual((list.items as unknown[])[0], {
    kind: "PartialObjectMetadata",
    apiVersion: "meta.k8s.io/v1",
    metadata: node("n1", "5").metadata,
  });
  assert.throws(
    () => toPartialMetadata(NODES, nodeList([]), "PartialObjectMetadata", "v1"),
    (e) => e instanceof StatusError && e.code === 406,
  );
});

Deno.test("watchRenderer() sends column definitions with the first event only", () => {
  const table: Representation = { as: "Table", version: "v1" };
  const render = watchRenderer(NODES, table, { query: new URLSearchParams(), now: () => NOW });
  assert.ok(render);
  const first = render(node("n1", "5")) as Record<string, unknown>;
  const second = render(node("n1", "6")) as Record<string, unknown>;
  assert.ok(Array.isArray(first.columnDefinitions));
  assert.equal(second.columnDefinitions, null);
  assert.deepEqual(second.metadata, { resourceVersion: "6" });
  assert.equal(
    watchRenderer(NODES, { as: "object" }, { query: new URLSearchParams(), now: () => NOW }),
    undefined,
  );
});

const KUBECTL_ACCEPT =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io," +
  "application/json";

const NEGOTIATIONS: { accept: string | null; want: Representation }[] = [
  { accept: null, want: { as: "object" } },
  { accept: "", want: { as: "object" } },
  { accept: "application/json", want: { as: "object" } },
  { accept: "*/*", want: { as: "object" } },
  { accept: "application/vnd.kubernetes.protobuf, */*", want: { as: "object" } },
  { accept: KUBECTL_ACCEPT, want: { as: "Table", version: "v1" } },
  { accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io", want: { as: "Table", version: "v1beta1" } },
  { accept: "application/json;as=Table;v=v2;g=meta.k8s.io, application/json", want: { as: "object" } },
  { accept: "application/json;as=Table;v=v1;g=example.com, application/json", want: { as: "object" } },
  {
    accept: "application/json;q=0.5, application/json;as=Table;v=v1;g=meta.k8s.io",
    want: { as: "Table", version: "v1" },
  },
  { accept: "*/*;as=Table;v=v1;g=meta.k8s.io", want: { as: "Table", version: "v1" } },
  {
    accept: "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json",
    want: { as: "object" },
  },
  {
    accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    want: { as: "PartialObjectMetadataList", version: "v1" },
  },
];

for (const c of NEGOTIATIONS) {
  Deno.test(`negotiate() ${JSON.stringify(c.accept)}`, () => assert.deepEqual(negotiate(c.accept), c.want));
}

Deno.test("negotiate() answers 406 when no clause can be served", () => {
  for (const accept of ["text/html", "application/json;as=Table;v=v2;g=meta.k8s.io"]) {
    assert.throws(
      () => negotiate(accept),
      (e) =>
        e instanceof StatusError && e.code === 406 && e.reason === "NotAcceptable" &&
        e.message === "only the following media types are accepted: application/json, application/yaml, " +
            "application/vnd.kubernetes.protobuf",
    );
  }
});
