import assert from "node:assert/strict";
import { objectKey, splitKey } from "./keys.ts";

const CASES = [
  {
    name: "cluster-scoped",
    obj: { metadata: { name: "n1" } },
    key: "n1",
    split: { namespace: "", name: "n1" },
  },
  {
    name: "namespaced",
    obj: { metadata: { name: "web", namespace: "prod" } },
    key: "prod/web",
    split: { namespace: "prod", name: "web" },
  },
  {
    name: "empty namespace",
    obj: { metadata: { name: "n2", namespace: "" } },
    key: "n2",
    split: { namespace: "", name: "n2" },
  },
];

for (const c of CASES) {
  Deno.test(`objectKey() ${c.name}`, () => assert.equal(objectKey(c.obj), c.key));
  Deno.test(`splitKey() ${c.name} round-trips`, () => assert.deepEqual(splitKey(c.key), c.split));
}

Deno.test("splitKey() rejects keys with more than one slash or empty parts", () => {
  for (const bad of ["a/b/c", "/b", "a/"]) assert.throws(() => splitKey(bad), RangeError);
});
