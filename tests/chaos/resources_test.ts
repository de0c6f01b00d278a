import assert from "node:assert/strict";
import { medianSlope, slope } from "./resources.ts";

Deno.test("medianSlope() shrugs off one odd sample that tilts a least-squares slope, and still sees growth", () => {
  const oneOdd = [43, 54, 59, 55, 54, 55];
  assert.ok(slope(oneOdd) > 1.2);
  assert.equal(medianSlope(oneOdd), 0.5);
  assert.equal(medianSlope([50, 52, 54, 56, 58, 60]), 2);
  assert.equal(medianSlope([55, 55, 55, 59, 59, 59]), 1, "one step: within the short form's bound");
  assert.equal(medianSlope([7]), 0);
});
