import assert from "node:assert/strict";
import type { V1ServicePort } from "@kubernetes/client-node";
import { annotationKey, ANNOTATIONS } from "./table.ts";
import { INVALID } from "../testdata/annotation_invalid_cases.ts";
import { VALID } from "../testdata/annotation_valid_cases.ts";
import { LENIENT } from "../testdata/annotation_lenient_cases.ts";
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

for (const c of LENIENT) {
  const key = annotationKey(c.covers);
  const value = JSON.stringify(c.ann[c.covers]).slice(0, 40);
  const on = c.ingress ? " on a Service with a status" : c.current ? " on an existing NodeBalancer" : "";
  Deno.test(`parseServiceAnnotations() reads ${c.covers}=${value} leniently${on} and goes on`, () => {
    const svc = service({ annotations: c.ann, ports: c.ports });
    if (c.ingress) svc.status = { loadBalancer: { ingress: c.ingress } };
    const spec = specOf(parseServiceAnnotations(svc, c.defaults ?? defaults(), c.current));
    assert.deepEqual(c.get(spec), c.want);
    const mine = spec.lenient.find((l) => l.key === key);
    assert.ok(mine, `not reported: ${JSON.stringify(spec.lenient)}`);
    assert.equal(mine.value, c.ann[c.covers]);
    assert.ok(mine.used.includes(c.used), `used text "${mine.used}" lacks "${c.used}"`);
    assert.ok(mine.message.startsWith(`${key}=${JSON.stringify(mine.value)}: expected `), mine.message);
  });
}

Deno.test("parseServiceAnnotations() tests cover a valid and an invalid or lenient value of every annotation in the table", () => {
  for (const { name } of ANNOTATIONS) {
    assert.ok(VALID.some((c) => c.covers === name), `no valid case for ${name}`);
    const bad = [...INVALID, ...LENIENT].some((c) => c.covers === name);
    assert.ok(bad, `no invalid or lenient case for ${name}`);
  }
});

Deno.test("parseServiceAnnotations() keeps lenient values beside errors, for lint", () => {
  const result = parse({ throttle: "99", "check-interval": "abc" });
  if (result.ok) assert.fail("expected errors");
  assert.deepEqual(result.errors.map((e) => e.key), [annotationKey("check-interval")]);
  assert.deepEqual(result.lenient.map((l) => l.key), [annotationKey("throttle")]);
});

Deno.test("parseServiceAnnotations() leaves a check-path unused without an http check, as the Go CCM ignores it", () => {
  const spec = specOf(parse({ "check-path": "healthz", "check-type": "connection" }));
  assert.deepEqual([spec.ports[0]?.check.path, spec.ports[0]?.keep, spec.lenient], [null, [], []]);
  assert.deepEqual(spec.warnings.map((w) => w.key), [annotationKey("check-path")]);
});
