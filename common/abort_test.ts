import assert from "node:assert/strict";
import { linkSignals } from "./abort.ts";

Deno.test("linkSignals() aborts with the first source's reason", () => {
  const a = new AbortController();
  const b = new AbortController();
  using linked = linkSignals(a.signal, undefined, b.signal);
  assert.equal(linked.signal.aborted, false);
  b.abort("b first");
  assert.equal(linked.signal.aborted, true);
  assert.equal(linked.signal.reason, "b first");
});

Deno.test("linkSignals() of an aborted source is aborted at once", () => {
  const a = new AbortController();
  a.abort("done");
  using linked = linkSignals(a.signal);
  assert.equal(linked.signal.reason, "done");
});

Deno.test("linkSignals() disposed no longer follows its sources", () => {
  const a = new AbortController();
  const linked = linkSignals(a.signal);
  linked[Symbol.dispose]();
  a.abort();
  assert.equal(linked.signal.aborted, false);
});
