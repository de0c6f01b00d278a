import assert from "node:assert/strict";
import { formatLabels, humanDuration, joinHostPort, since } from "./table_cells.ts";

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

const DURATIONS: [number, string][] = [
  [-3 * S, "<invalid>"],
  [-1.5 * S, "0s"],
  [0, "0s"],
  [52 * S, "52s"],
  [119 * S, "119s"],
  [2 * M, "2m"],
  [3 * M + 10 * S, "3m10s"],
  [9 * M + 59 * S, "9m59s"],
  [10 * M + 30 * S, "10m"],
  [179 * M, "179m"],
  [3 * H, "3h"],
  [7 * H + 59 * M, "7h59m"],
  [8 * H + 30 * M, "8h"],
  [47 * H, "47h"],
  [2 * D, "2d"],
  [5 * D + 3 * H, "5d3h"],
  [8 * D + 3 * H, "8d"],
  [729 * D, "729d"],
  [730 * D, "2y"],
  [3 * 365 * D + 10 * D, "3y10d"],
  [9 * 365 * D, "9y"],
];

for (const [ms, want] of DURATIONS) {
  Deno.test(`humanDuration() of ${ms} ms is ${want}`, () => assert.equal(humanDuration(ms), want));
}

Deno.test("since() is <unknown> for an absent or zero timestamp and ages RFC 3339 and MicroTime values", () => {
  const now = Date.parse("2026-01-01T00:05:00Z");
  assert.equal(since(undefined, now), "<unknown>");
  assert.equal(since(null, now), "<unknown>");
  assert.equal(since("0001-01-01T00:00:00Z", now), "<unknown>");
  assert.equal(since("2026-01-01T00:01:50Z", now), "3m10s");
  assert.equal(since("2026-01-01T00:04:08.123456Z", now), "51s");
});

Deno.test("formatLabels() sorts by key and prints <none> for no labels", () => {
  assert.equal(formatLabels({ tier: "web", app: "shop" }), "app=shop,tier=web");
  assert.equal(formatLabels({}), "<none>");
  assert.equal(formatLabels(undefined), "<none>");
});

Deno.test("joinHostPort() brackets IPv6 hosts", () => {
  assert.equal(joinHostPort("10.0.0.1", 80), "10.0.0.1:80");
  assert.equal(joinHostPort("2600:3c00::1", 443), "[2600:3c00::1]:443");
});
