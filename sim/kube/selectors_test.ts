import assert from "node:assert/strict";
import type { KubeObject } from "./resources.ts";
import { resourceByKey } from "./resources.ts";
import { compileSelector } from "./selectors.ts";
import { StatusError } from "./status.ts";

const NODES = resourceByKey("nodes")!;
const EVENTS = resourceByKey("events")!;

function obj(labels: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject {
  return { metadata: { name: "n1", namespace: "default", labels }, ...extra };
}

const LABEL_CASES: { selector: string; labels: Record<string, string>; want: boolean }[] = [
  { selector: "a=1", labels: { a: "1" }, want: true },
  { selector: "a==1", labels: { a: "2" }, want: false },
  { selector: "a!=1", labels: {}, want: true },
  { selector: "a!=1", labels: { a: "1" }, want: false },
  { selector: "a in (1, 2)", labels: { a: "2" }, want: true },
  { selector: "a in (1,2)", labels: {}, want: false },
  { selector: "a notin (1,2)", labels: {}, want: true },
  { selector: "a notin (1,2)", labels: { a: "1" }, want: false },
  {
    selector: "node-role.kubernetes.io/control-plane",
    labels: { "node-role.kubernetes.io/control-plane": "" },
    want: true,
  },
  { selector: "!node.kubernetes.io/exclude-from-external-load-balancers", labels: {}, want: true },
  { selector: "!x", labels: { x: "" }, want: false },
  { selector: "a=1,b in (x,y),!c", labels: { a: "1", b: "y" }, want: true },
  { selector: "a=1,b in (x,y),!c", labels: { a: "1", b: "y", c: "" }, want: false },
  { selector: "", labels: {}, want: true },
];

for (const c of LABEL_CASES) {
  Deno.test(`compileSelector() label "${c.selector}" on ${JSON.stringify(c.labels)} is ${c.want}`, () => {
    assert.equal(compileSelector(NODES, c.selector, undefined).matches(obj(c.labels)), c.want);
  });
}

Deno.test("compileSelector() matches field selectors, including event involvedObject fields", () => {
  assert.equal(compileSelector(NODES, undefined, "metadata.name=n1").matches(obj({})), true);
  assert.equal(compileSelector(NODES, undefined, "metadata.name!=n1").matches(obj({})), false);
  assert.equal(compileSelector(NODES, undefined, "spec.unschedulable=false").matches(obj({})), true);
  const event = obj({}, { involvedObject: { kind: "Node", name: "n7" } });
  assert.equal(
    compileSelector(EVENTS, undefined, "involvedObject.kind=Node,involvedObject.name=n7").matches(event),
    true,
  );
  assert.equal(compileSelector(EVENTS, undefined, "involvedObject.name=n8").matches(event), false);
});

Deno.test("compileSelector() rejects unsupported fields and bad syntax with 400", () => {
  const bad: [string | undefined, string | undefined][] = [
    [undefined, "spec.providerID=x"],
    [undefined, "metadata.namespace=default"],
    ["a in (", undefined],
    ["Bad Key=1", undefined],
  ];
  for (const [labels, fields] of bad) {
    assert.throws(
      () => compileSelector(NODES, labels, fields),
      (e) => e instanceof StatusError && e.code === 400,
    );
  }
});
