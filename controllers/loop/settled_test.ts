import assert from "node:assert/strict";
import { SettledInputs } from "./settled.ts";

Deno.test("SettledInputs: a pass is settled only over the same fingerprints and generations", () => {
  const inputs = new SettledInputs();
  inputs.see("a", "Ready");
  const v = inputs.version;
  inputs.settle(inputs.key(v, 7));
  assert.ok(inputs.isSettled(inputs.key(inputs.version, 7)));
  assert.ok(!inputs.isSettled(inputs.key(inputs.version, 8)), "another generation");
  assert.ok(!inputs.isSettled(inputs.key(inputs.version)), "no generation read is another input");
  inputs.see("a", "Ready");
  assert.ok(inputs.isSettled(inputs.key(inputs.version, 7)), "the same fingerprint changes nothing");
  inputs.see("a", "NotReady");
  assert.ok(!inputs.isSettled(inputs.key(inputs.version, 7)));
  inputs.settle(inputs.key(inputs.version, 7));
  inputs.see("a", undefined);
  assert.ok(!inputs.isSettled(inputs.key(inputs.version, 7)), "a deletion is a change");
  inputs.settle(undefined);
  assert.ok(!inputs.isSettled(inputs.key(inputs.version, 7)));
});
