import assert from "node:assert/strict";
import type { RangeWrite } from "./plan.ts";
import { MAX_INTERVAL_MS, MIN_INTERVAL_MS, passIntervalMs, rangeAction } from "./controller.ts";

const TARGET = { vpcId: 1, subnetId: 2, linodeId: 123, interfaceId: 7, configId: 4 };

function write(ranges: string[], added: string[], removed: string[]): RangeWrite {
  return { target: TARGET, ranges, added, removed, phase: removed.length ? 0 : 1 };
}

const CASES: { name: string; write: RangeWrite; action: string; old: string[]; new: string[] }[] = [
  {
    name: "names an addition with the interface's whole list before and after",
    write: write(["10.9.0.0/24", "10.2.0.0/24"], ["10.2.0.0/24"], []),
    action: "add-ranges",
    old: ["10.9.0.0/24"],
    new: ["10.2.0.0/24", "10.9.0.0/24"],
  },
  {
    name: "names a removal",
    write: write([], [], ["10.2.0.0/24"]),
    action: "remove-ranges",
    old: ["10.2.0.0/24"],
    new: [],
  },
  {
    name: "names a pod CIDR that moved as a replacement",
    write: write(["10.3.0.0/24"], ["10.3.0.0/24"], ["10.2.0.0/24"]),
    action: "replace-ranges",
    old: ["10.2.0.0/24"],
    new: ["10.3.0.0/24"],
  },
];

for (const c of CASES) {
  Deno.test(`rangeAction() ${c.name}`, () => {
    const a = rangeAction(c.write);
    assert.equal(a.action, c.action);
    assert.equal(a.object, "linode 123 interface 7");
    assert.deepEqual(a.changes, [{ field: "ip_ranges", old: c.old, new: c.new }]);
  });
}

Deno.test("passIntervalMs() is 250 ms up to 1,250 Nodes, grows 0.2 ms per Node after, and stops at 2 s", () => {
  assert.deepEqual(
    [0, 100, 1250, 2500, 5000, 10_000, 50_000].map(passIntervalMs),
    [MIN_INTERVAL_MS, MIN_INTERVAL_MS, 250, 500, 1000, 2000, MAX_INTERVAL_MS],
  );
});
