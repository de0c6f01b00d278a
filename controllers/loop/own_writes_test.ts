import assert from "node:assert/strict";
import { OwnWrites } from "./own_writes.ts";

const at = (rv: string, label = "") => ({ metadata: { resourceVersion: rv }, label });

Deno.test("OwnWrites.latest() gives the write's answer while the informer shows a version from before it", () => {
  const writes = new OwnWrites<ReturnType<typeof at>>();
  // The informer had 14; the status write answered 22, the metadata write 28.
  writes.record("n", at("28", "written"), ["14", "22"]);
  assert.equal(writes.latest("n", at("14"))?.label, "written");
  assert.equal(writes.latest("n", at("22"))?.label, "written");
  assert.equal(writes.size, 1);
});

Deno.test("OwnWrites.latest() gives the informer's copy once it shows the write or anything unknown", () => {
  for (const cached of [at("28", "informer"), at("31", "informer"), undefined]) {
    const writes = new OwnWrites<ReturnType<typeof at>>();
    writes.record("n", at("28", "written"), ["14", "22"]);
    assert.equal(writes.latest("n", cached), cached);
    assert.equal(writes.size, 0, "forgotten");
    // Even an older version afterwards is the informer's to give: the record is gone.
    assert.equal(writes.latest("n", at("14", "informer"))?.label, "informer");
  }
});

Deno.test("OwnWrites.latest() never treats the write's own version as older", () => {
  const writes = new OwnWrites<ReturnType<typeof at>>();
  writes.record("n", at("28", "written"), ["14", "28", undefined]);
  assert.equal(writes.latest("n", at("28", "informer"))?.label, "informer");
});

Deno.test("OwnWrites.forget() drops a key; other keys are unaffected", () => {
  const writes = new OwnWrites<ReturnType<typeof at>>();
  writes.record("a", at("5", "a"), ["4"]);
  writes.record("b", at("7", "b"), ["6"]);
  writes.forget("a");
  assert.equal(writes.latest("a", at("4"))?.label, "");
  assert.equal(writes.latest("b", at("6"))?.label, "b");
});

Deno.test("OwnWrites.record() of a write after a recorded one keeps the versions before both", () => {
  const writes = new OwnWrites<ReturnType<typeof at>>();
  writes.record("n", at("28", "first"), ["14", "22"]);
  // The next reconcile worked from the first write's answer (the informer still showed 22) and wrote again.
  writes.record("n", at("35", "second"), ["28"]);
  for (const rv of ["14", "22", "28"]) assert.equal(writes.latest("n", at(rv))?.label, "second");
  // Unrelated to the recorded write: a fresh record, not a chain.
  writes.record("n", at("50", "third"), ["44"]);
  assert.equal(writes.latest("n", at("22"))?.label, "");
});
