import assert from "node:assert/strict";
import { readManifests } from "./manifests.ts";

const SVC = (name: string) => `{"apiVersion":"v1","kind":"Service","metadata":{"name":"${name}"}}`;

const CASES: { name: string; text: string; want: { names: string[]; where: string[]; skipped: number } }[] = [
  { name: "reads one JSON Service", text: SVC("a"), want: { names: ["a"], where: ["f"], skipped: 0 } },
  {
    name: "numbers documents and skips other kinds",
    text: `${SVC("a")}\n---\nkind: ConfigMap\napiVersion: v1\n---\n${SVC("b")}\n`,
    want: { names: ["a", "b"], where: ["f#1", "f#3"], skipped: 1 },
  },
  {
    name: "unwraps List and ServiceList items, nested",
    text: `{"kind":"ServiceList","items":[${SVC("a")},{"kind":"List","items":[${SVC("b")}]}]}`,
    want: { names: ["a", "b"], where: ["f", "f"], skipped: 0 },
  },
  {
    name: "takes List items without apiVersion, skips other apiVersions",
    text:
      `kind: List\nitems:\n- {kind: Service, metadata: {name: a}}\n- {kind: Service, apiVersion: serving.knative.dev/v1}`,
    want: { names: ["a"], where: ["f"], skipped: 1 },
  },
  {
    name: "takes empty documents as nothing",
    text: "---\n---\n",
    want: { names: [], where: [], skipped: 0 },
  },
];

for (const c of CASES) {
  Deno.test(`readManifests() ${c.name}`, () => {
    const r = readManifests(c.text, "f");
    assert.ok(r.ok);
    assert.deepEqual({
      names: r.services.map((s) => s.service.metadata?.name),
      where: r.services.map((s) => s.where),
      skipped: r.skipped,
    }, c.want);
  });
}

Deno.test("readManifests() names the file and the YAML problem", () => {
  const r = readManifests("a: [1,\n", "svc.yaml");
  assert.ok(!r.ok);
  assert.match(r.problem, /^svc\.yaml: not YAML or JSON: /);
});
