import assert from "node:assert/strict";
import type { V1ServicePort } from "@kubernetes/client-node";
import { annotationKey, ANNOTATIONS } from "./table.ts";
import { INVALID } from "../testdata/annotation_invalid_cases.ts";
import { VALID } from "../testdata/annotation_valid_cases.ts";
import { type AnnotationResult, parseServiceAnnotations } from "./parse.ts";
import { InvalidAnnotationError } from "../errors.ts";
import { defaults, service } from "../testdata/fixtures.ts";
import type { ServiceSpec } from "./spec.ts";

function parse(
  annotations: Record<string, string>,
  ports?: V1ServicePort[],
  d = defaults(),
): AnnotationResult {
  return parseServiceAnnotations(service({ annotations, ports }), d);
}

function specOf(result: AnnotationResult): ServiceSpec {
  if (!result.ok) assert.fail(`unexpected errors: ${result.errors.map((e) => e.message).join("; ")}`);
  return result.spec;
}

function errorsOf(result: AnnotationResult): InvalidAnnotationError[] {
  if (result.ok) assert.fail("expected errors, got a spec");
  return [...result.errors];
}

for (const c of VALID) {
  Deno.test(`parseServiceAnnotations() accepts ${c.covers}=${JSON.stringify(Object.values(c.ann).at(-1))}`, () => {
    assert.deepEqual(c.get(specOf(parse(c.ann, c.ports, c.defaults))), c.want);
  });
}

for (const c of INVALID) {
  const key = annotationKey(c.key ?? c.covers);
  Deno.test(`parseServiceAnnotations() refuses ${c.covers}=${JSON.stringify(Object.values(c.ann).at(-1)).slice(0, 40)}`, () => {
    const errors = errorsOf(parse(c.ann, c.ports, c.defaults));
    const mine = errors.find((e) => e.key === key);
    assert.ok(mine, `no error for ${key}: ${errors.map((e) => e.message).join("; ")}`);
    assert.ok(mine.accepted.includes(c.accepted), `accepted text "${mine.accepted}" lacks "${c.accepted}"`);
    assert.equal(mine.value, c.ann[c.key ?? c.covers] ?? "");
    assert.ok(mine instanceof InvalidAnnotationError);
  });
}

Deno.test("parseServiceAnnotations() tests cover a valid and an invalid value of every annotation in the table", () => {
  for (const { name } of ANNOTATIONS) {
    assert.ok(VALID.some((c) => c.covers === name), `no valid case for ${name}`);
    assert.ok(INVALID.some((c) => c.covers === name), `no invalid case for ${name}`);
  }
});
