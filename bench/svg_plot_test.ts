import assert from "node:assert/strict";
import { renderLogLogSvg } from "./svg_plot.ts";

const PLOT = {
  title: "calls <per> minute",
  xLabel: "Nodes",
  yLabel: "calls/min",
  series: [
    { name: "ours", color: "#111", points: [[10, 1], [100, 0], [1000, 4]] as [number, number][] },
    { name: "Go", color: "#222", dashed: true, points: [[10, 10], [1000, 90]] as [number, number][] },
  ],
};

Deno.test("renderLogLogSvg() draws one polyline per series, leaving out points a log axis cannot show", () => {
  const svg = renderLogLogSvg(PLOT);
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.ok(svg.trimEnd().endsWith("</svg>"));
  const lines = [...svg.matchAll(/<polyline points="([^"]+)"/g)].map((m) => m[1]?.split(" ").length);
  assert.deepEqual(lines, [2, 2]);
  assert.equal(svg.match(/stroke-dasharray/g)?.length, 2, "the dashed series and its legend line");
  assert.ok(svg.includes("calls &lt;per&gt; minute"), "text is escaped");
});

Deno.test("renderLogLogSvg() labels every decade the data spans on both axes", () => {
  const svg = renderLogLogSvg(PLOT);
  for (const tick of ["10", "100", "1,000"]) assert.ok(svg.includes(`>${tick}</text>`), `x tick ${tick}`);
  for (const tick of ["1", "10", "100"]) assert.ok(svg.includes(`>${tick}</text>`), `y tick ${tick}`);
});

Deno.test("renderLogLogSvg() refuses a plot without a positive point", () => {
  assert.throws(
    () => renderLogLogSvg({ ...PLOT, series: [{ name: "z", color: "#000", points: [[0, 0]] }] }),
    RangeError,
  );
});
