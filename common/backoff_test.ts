import assert from "node:assert/strict";
import { Backoff, backoffDelayMs } from "./backoff.ts";

const CASES = [
  { name: "starts at base", attempt: 0, want: 1000 },
  { name: "doubles", attempt: 3, want: 8000 },
  { name: "caps at max", attempt: 20, want: 300_000 },
];
for (const c of CASES) {
  Deno.test(`backoffDelayMs() ${c.name}`, () => {
    assert.equal(backoffDelayMs(c.attempt, { baseMs: 1000, maxMs: 300_000 }, () => 0.5), c.want);
  });
}

Deno.test("backoffDelayMs() jitter stays within ±jitter/2 and under max", () => {
  for (const r of [0, 0.25, 0.999]) {
    const d = backoffDelayMs(2, { baseMs: 1000, maxMs: 300_000, jitter: 0.2 }, () => r);
    assert.ok(d >= 3600 && d <= 4400, `delay ${d}`);
  }
  assert.ok(backoffDelayMs(30, { baseMs: 1000, maxMs: 5000, jitter: 0.5 }, () => 0.999) <= 5000);
});

Deno.test("Backoff.next() grows until reset()", () => {
  const b = new Backoff({ baseMs: 10, maxMs: 1000, jitter: 0 });
  assert.deepEqual([b.next(), b.next(), b.next()], [10, 20, 40]);
  assert.equal(b.failures, 3);
  b.reset();
  assert.equal(b.next(), 10);
});
