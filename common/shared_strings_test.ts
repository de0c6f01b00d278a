import assert from "node:assert/strict";
import { heapAfterGc } from "../tests/chaos/resources.ts";
import { MAX_SHARED, share } from "./shared_strings.ts";

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

Deno.test("share() stops remembering values once the table is full", () => {
  // Fill the table (values of earlier tests count): later values come back unchanged, nothing throws.
  for (let i = 0; i < MAX_SHARED + 10; i++) {
    const value = `value-${i}-of-a-large-vocabulary`;
    assert.equal(share(value), value);
  }
});
