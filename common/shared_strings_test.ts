import assert from "node:assert/strict";
import { heapAfterGc } from "../tests/chaos/resources.ts";
import { share, StringTable } from "./shared_strings.ts";

/** Values as JSON.parse gives them: each object its own copy of a string longer than 10 characters. */
function parsedCopies(value: string, count: number): string[] {
  return (JSON.parse(JSON.stringify(Array.from({ length: count }, () => ({ v: value })))) as { v: string }[])
    .map((o) => o.v);
}

/** Heap bytes that `keep()`'s result holds, measured after full collections. */
async function heldBytes(keep: () => unknown[]): Promise<number> {
  const before = await heapAfterGc();
  const kept = keep();
  const after = await heapAfterGc();
  assert.ok(kept.length > 0);
  return after - before;
}

Deno.test("share() keeps values and passes null and undefined through", () => {
  assert.deepEqual(parsedCopies("g6-standard-2", 3).map(share), [
    "g6-standard-2",
    "g6-standard-2",
    "g6-standard-2",
  ]);
  assert.equal(share(undefined), undefined);
  assert.equal(share(null), null);
});

Deno.test("share() holds one copy of a value, however many objects carry it", async () => {
  const count = 50_000;
  const copies = await heldBytes(() => parsedCopies("node.k8s.linode.com/g6-standard-2", count));
  const shared = await heldBytes(() => parsedCopies("node.k8s.linode.com/g6-standard-2", count).map(share));
  // The array of references is the same in both (8 bytes a slot at most); the copies add ~48 bytes each.
  assert.ok(copies - shared > count * 32, `copies ${copies} B, shared ${shared} B`);
});

Deno.test("StringTable shares at most max values: past them a new value comes back as it is, unremembered", () => {
  const table = new StringTable(3);
  for (const v of ["a", "b", "c", "d", "e"]) assert.equal(table.share(v), v);
  assert.equal(table.size, 3);
  assert.equal(table.share("b"), "b", "a remembered value is still shared");
  assert.equal(table.share("d"), "d");
  assert.equal(table.size, 3, "a value seen past the bound is not remembered");
});
