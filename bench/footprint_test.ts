import assert from "node:assert/strict";
import { benchFootprint } from "./footprint.ts";

Deno.test("benchFootprint() measures the bundle's size, its starts and its resident set in both modes", async () => {
  const table = await benchFootprint({ runs: 1, nodes: 2, services: 1, settleMs: 100 });
  assert.deepEqual(table.rows.map((r) => r[0]), [
    "bundle size (deno task bundle)",
    ...["without code cache", "with code cache"].flatMap((mode) => [
      `spawn to /readyz 200, ${mode}`,
      `spawn to 2 Nodes initialised, ${mode}`,
      `RSS 0.1 s later, ${mode}`,
      `peak RSS (VmHWM), ${mode}`,
    ]),
  ]);
  for (const row of table.rows) {
    const value = Number(row[1]);
    assert.ok(Number.isFinite(value) && value > 0, `${row[0]}: ${row[1]}`);
  }
  const [, , , rss, peak] = table.rows.map((r) => Number(r[1]));
  assert.ok(peak! >= rss!, "the peak is at least the current resident set");
});
