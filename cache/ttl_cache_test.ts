import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { Registry } from "../common/metrics.ts";
import { sameEntries, sameJson, TtlCell } from "./ttl_cache.ts";

interface Harness {
  cell: TtlCell<number[]>;
  clock: FakeClock;
  metrics: Registry;
  loads: () => number;
  next: { value: number[] | Error };
  gate: { wait?: Promise<void> };
}

function harness(ttlMs = 1000, same?: (a: number[], b: number[]) => boolean): Harness {
  const clock = new FakeClock();
  const metrics = new Registry();
  let loads = 0;
  const next: Harness["next"] = { value: [1, 2] };
  const gate: Harness["gate"] = {};
  const cell = new TtlCell<number[]>({
    name: "t",
    ttlMs,
    clock,
    metrics,
    retry: { baseMs: 500, maxMs: 4000, jitter: 0 },
    isEmpty: (d) => d.length === 0,
    same,
    load: async () => {
      loads++;
      await gate.wait;
      if (next.value instanceof Error) throw next.value;
      return [...next.value];
    },
  });
  return { cell, clock, metrics, loads: () => loads, next, gate };
}

function count(h: Harness, name: string, labels: Record<string, string>): number {
  return h.metrics.counter(name, "", Object.keys(labels)).get(labels);
}

Deno.test("TtlCell.get() loads once per TTL and serves hits in between", async () => {
  const h = harness();
  assert.deepEqual((await h.cell.get()).data, [1, 2]);
  await h.clock.advance(999);
  h.next.value = [3];
  assert.deepEqual((await h.cell.get()).data, [1, 2]);
  assert.equal(h.loads(), 1);
  await h.clock.advance(2);
  const snap = await h.cell.get();
  assert.deepEqual(snap.data, [3]);
  assert.equal(snap.ageMs, 0);
  assert.equal(h.loads(), 2);
  assert.equal(count(h, "ccm_cache_hits_total", { cache: "t" }), 1);
  assert.equal(count(h, "ccm_cache_misses_total", { cache: "t" }), 2);
  assert.equal(count(h, "ccm_cache_refreshes_total", { cache: "t", result: "success" }), 2);
});

Deno.test("TtlCell.get() shares one in-flight refresh between concurrent readers", async () => {
  const h = harness();
  let release = () => {};
  h.gate.wait = new Promise((r) => release = r);
  const readers = Array.from({ length: 50 }, () => h.cell.get());
  release();
  const snaps = await Promise.all(readers);
  assert.equal(h.loads(), 1);
  assert.ok(snaps.every((s) => s.data.length === 2));
});

Deno.test("TtlCell.get() keeps the last good data on failure, marks it stale and backs off", async () => {
  const h = harness();
  await h.cell.get();
  await h.clock.advance(1500);
  h.next.value = new Error("HTTP 503");
  const failed = await h.cell.get();
  assert.deepEqual(failed.data, [1, 2]);
  assert.equal(failed.stale, true);
  assert.equal(failed.ageMs, 1500);
  assert.equal(h.cell.isFreshEnough(60_000), false);
  await h.clock.advance(400);
  await h.cell.get();
  assert.equal(h.loads(), 2, "no retry inside the backoff window");
  await h.clock.advance(200);
  h.next.value = [9];
  const healed = await h.cell.get();
  assert.deepEqual(healed.data, [9]);
  assert.equal(healed.stale, false);
  assert.equal(h.loads(), 3);
  assert.equal(count(h, "ccm_cache_refreshes_total", { cache: "t", result: "error" }), 1);
});

Deno.test("TtlCell.get() throws while nothing was ever loaded", async () => {
  const h = harness();
  h.next.value = new Error("HTTP 500");
  await assert.rejects(h.cell.get(), /HTTP 500/);
  await assert.rejects(h.cell.get(), /HTTP 500/);
  assert.equal(h.loads(), 1, "second read waits for the backoff");
  assert.equal(h.cell.peek(), undefined);
});

Deno.test("TtlCell.get() flags an empty list after a non-empty one and accepts it only when confirmed", async () => {
  const h = harness();
  await h.cell.get();
  h.next.value = [];
  await h.clock.advance(1001);
  const first = await h.cell.get();
  assert.deepEqual(first.data, [1, 2]);
  assert.equal(first.suspicious, true);
  assert.equal(first.stale, true);
  await h.clock.advance(600);
  const second = await h.cell.get();
  assert.deepEqual(second.data, []);
  assert.equal(second.suspicious, false);
  assert.equal(count(h, "ccm_cache_refreshes_total", { cache: "t", result: "suspicious" }), 1);
});

Deno.test("TtlCell.write() applies at once and survives a refresh already in flight", async () => {
  const h = harness();
  await h.cell.get();
  let release = () => {};
  h.gate.wait = new Promise((r) => release = r);
  const refreshing = h.cell.refresh();
  h.cell.write((d) => [...d, 7]);
  assert.deepEqual(h.cell.peek()?.data, [1, 2, 7]);
  release();
  await refreshing;
  assert.deepEqual(h.cell.peek()?.data, [1, 2, 7]);
});

Deno.test("TtlCell.onChange() reports previous and next data", async () => {
  const h = harness();
  const seen: [number[] | undefined, number[]][] = [];
  const off = h.cell.onChange((a, b) => seen.push([a, b]));
  await h.cell.get();
  h.cell.write((d) => [...d, 3]);
  off();
  h.cell.write((d) => [...d, 4]);
  assert.deepEqual(seen, [[undefined, [1, 2]], [[1, 2], [1, 2, 3]]]);
});

Deno.test("TtlCell.get() honours a tighter maxAgeMs", async () => {
  const h = harness(10_000);
  await h.cell.get();
  await h.clock.advance(3000);
  await h.cell.get({ maxAgeMs: 2000 });
  assert.equal(h.loads(), 2);
  assert.equal(h.cell.isFreshEnough(100), true);
});

Deno.test("TtlCell.get() dates data from when its request was sent, not from when the answer came", async () => {
  const h = harness();
  let release = () => {};
  h.gate.wait = new Promise((r) => release = r);
  const reading = h.cell.get();
  await h.clock.advance(300);
  release();
  // A Linode created while the listing was on its way may be missing: the data is already 300 ms old.
  assert.equal((await reading).ageMs, 300);
});

Deno.test("TtlCell with same(): a load that finds what is held keeps it, its generation and its listeners quiet", async () => {
  const h = harness(1000, sameJson);
  const seen: number[][] = [];
  h.cell.onChange((_, next) => seen.push(next));
  const first = await h.cell.get();
  await h.clock.advance(1500);
  const again = await h.cell.get();
  assert.equal(h.loads(), 2, "loaded again: the TTL passed");
  assert.equal(again.data, first.data, "the object held, not the equal one loaded");
  assert.equal(again.generation, first.generation);
  assert.equal(again.ageMs, 0, "dated from the new load");
  assert.equal(count(h, "ccm_cache_refreshes_total", { cache: "t", result: "success" }), 2);
  h.next.value = [1, 2, 3];
  await h.clock.advance(1500);
  const changed = await h.cell.get();
  assert.deepEqual(changed.data, [1, 2, 3]);
  assert.equal(changed.generation, first.generation + 1);
  assert.deepEqual(seen, [[1, 2], [1, 2, 3]]);
  // A write is a change whatever it writes; a load after it compares with the written value.
  h.cell.write((d) => d.filter((x) => x !== 3));
  assert.equal(h.cell.peek()?.generation, first.generation + 2);
  await h.clock.advance(1500);
  assert.equal((await h.cell.get()).generation, first.generation + 3, "the API still has 3");
});

Deno.test("TtlCell without same(): every load is a change", async () => {
  const h = harness();
  const first = await h.cell.get();
  await h.clock.advance(1500);
  const again = await h.cell.get();
  assert.deepEqual(again.data, first.data);
  assert.equal(again.generation, first.generation + 1);
});

const SAME_JSON_CASES: { name: string; a: unknown; b: unknown; same: boolean }[] = [
  { name: "equal primitives", a: 1, b: 1, same: true },
  { name: "number and its string", a: 1, b: "1", same: false },
  { name: "null and an object", a: null, b: {}, same: false },
  { name: "null and undefined", a: null, b: undefined, same: false },
  {
    name: "equal nested entries",
    a: [{ id: 1, r: ["10.0.0.0/24"] }],
    b: [{ id: 1, r: ["10.0.0.0/24"] }],
    same: true,
  },
  {
    name: "one range differs",
    a: [{ id: 1, r: ["10.0.0.0/24"] }],
    b: [{ id: 1, r: ["10.0.1.0/24"] }],
    same: false,
  },
  { name: "a range more", a: [{ r: ["a"] }], b: [{ r: ["a", "b"] }], same: false },
  { name: "entries in another order", a: [{ id: 1 }, { id: 2 }], b: [{ id: 2 }, { id: 1 }], same: false },
  { name: "keys in another order", a: { x: 1, y: 2 }, b: { y: 2, x: 1 }, same: true },
  { name: "a key more", a: { x: 1 }, b: { x: 1, y: undefined }, same: false },
  { name: "a key less", a: { x: 1, y: 2 }, b: { x: 1 }, same: false },
  { name: "an array and an object with index keys", a: ["a"], b: { 0: "a" }, same: false },
  { name: "an object and an array", a: { 0: "a" }, b: ["a"], same: false },
];

for (const c of SAME_JSON_CASES) {
  Deno.test(`sameJson(): ${c.name} -> ${c.same}`, () => {
    assert.equal(sameJson(c.a, c.b), c.same);
    assert.equal(sameJson(c.b, c.a), c.same, "symmetric");
  });
}

const SAME_ENTRIES_CASES: { name: string; a: unknown[]; b: unknown[]; same: boolean }[] = [
  { name: "equal lists", a: [{ id: 1 }, { id: 2 }], b: [{ id: 1 }, { id: 2 }], same: true },
  { name: "entries in another order", a: [{ id: 1 }, { id: 2 }], b: [{ id: 2 }, { id: 1 }], same: true },
  {
    name: "an address and its range listed together, or the range appended",
    a: [{ a: "10.0.0.2" }, { a: "10.0.0.3" }, { r: "10.192.1.0/24", i: 1 }],
    b: [{ a: "10.0.0.2" }, { r: "10.192.1.0/24", i: 1 }, { a: "10.0.0.3" }],
    same: true,
  },
  {
    name: "keys in another order",
    a: [{ x: 1, y: [{ p: 1, q: 2 }] }],
    b: [{ y: [{ q: 2, p: 1 }], x: 1 }],
    same: true,
  },
  { name: "one entry differs", a: [{ id: 1 }, { id: 2 }], b: [{ id: 2 }, { id: 3 }], same: false },
  { name: "an entry more", a: [{ id: 1 }], b: [{ id: 1 }, { id: 1 }], same: false },
  {
    name: "a duplicate in place of another entry",
    a: [{ id: 1 }, { id: 2 }],
    b: [{ id: 1 }, { id: 1 }],
    same: false,
  },
  { name: "null and a missing key", a: [{ x: null }], b: [{}], same: false },
  { name: "a nested array in another order", a: [{ r: ["a", "b"] }], b: [{ r: ["b", "a"] }], same: false },
];

for (const c of SAME_ENTRIES_CASES) {
  Deno.test(`sameEntries(): ${c.name} -> ${c.same}`, () => {
    assert.equal(sameEntries(c.a, c.b), c.same);
    assert.equal(sameEntries(c.b, c.a), c.same, "symmetric");
  });
}
