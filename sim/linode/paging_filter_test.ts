import assert from "node:assert/strict";
import { getLinodes } from "@linode/api-v4";
import type { Filter } from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, withSim } from "./testdata/test_client.ts";

async function fleet(count: number): Promise<LinodeSim> {
  const sim = await startLinodeSim();
  sim.world.addInstances(count, (i) => ({
    label: `node-${String(i).padStart(3, "0")}`,
    region: i % 2 === 0 ? "us-east" : "us-ord",
    status: i % 3 === 0 ? "offline" : "running",
    type: i % 5 === 0 ? "g6-standard-4" : "g6-standard-2",
    tags: i % 4 === 0 ? ["blue"] : ["green"],
  }));
  return sim;
}

Deno.test("getLinodes() pages exactly like the API", async () => {
  await using sim = await fleet(130);
  const first = await withSim(sim, () => getLinodes());
  assert.deepEqual([first.data.length, first.page, first.pages, first.results], [100, 1, 2, 130]);
  const p6 = await withSim(sim, () => getLinodes({ page: 6, page_size: 25 }));
  assert.deepEqual([p6.data.length, p6.page, p6.pages, p6.results], [5, 6, 6, 130]);
  assert.equal(p6.data[0]?.label, "node-125");
  const beyond = await withSim(sim, () => getLinodes({ page: 7, page_size: 25 }));
  assert.deepEqual([beyond.data.length, beyond.page, beyond.pages], [0, 7, 6]);
  assert.equal((await withSim(sim, () => getLinodes({ page_size: 500 }))).data.length, 130);
  const ids = new Set<number>();
  for (let page = 1; page <= 6; page++) {
    for (const l of (await withSim(sim, () => getLinodes({ page, page_size: 25 }))).data) ids.add(l.id);
  }
  assert.equal(ids.size, 130, "pages neither overlap nor skip");
});

Deno.test("getLinodes() on an empty account reports one page", async () => {
  await using sim = await startLinodeSim();
  assert.deepEqual(await withSim(sim, () => getLinodes()), { data: [], page: 1, pages: 1, results: 0 });
});

Deno.test("getLinodes() rejects page_size outside 25..500 and page below 1 with a field error", async () => {
  await using sim = await fleet(3);
  for (const page_size of [24, 501, 0]) {
    const bad = await failure(withSim(sim, () => getLinodes({ page_size })));
    assert.deepEqual(bad, {
      status: 400,
      errors: [{ field: "page_size", reason: "page_size must be between 25 and 500" }],
    });
  }
  assert.equal((await failure(withSim(sim, () => getLinodes({ page: 0 })))).errors[0]?.field, "page");
  const text = await fetch(`${sim.url}/linode/instances?page=abc`, {
    headers: { authorization: `Bearer ${sim.token}` },
  });
  assert.equal(text.status, 400);
  assert.deepEqual(await text.json(), { errors: [{ field: "page", reason: "page must be an integer" }] });
});

const labels = async (sim: LinodeSim, filter: Filter) =>
  (await withSim(sim, () => getLinodes({ page_size: 500 }, filter))).data.map((l) => l.label);

Deno.test("getLinodes() X-Filter supports equality on id, label, region, status, type, tags and ipv4", async () => {
  await using sim = await fleet(20);
  const all = sim.world.listInstances();
  const five = all[5];
  assert.ok(five);
  assert.deepEqual(await labels(sim, { id: five.id }), ["node-005"]);
  assert.deepEqual(await labels(sim, { label: "node-007" }), ["node-007"]);
  assert.equal((await labels(sim, { region: "us-ord" })).length, 10);
  assert.equal((await labels(sim, { status: "offline" })).length, 7);
  assert.deepEqual(await labels(sim, { type: "g6-standard-4" }), [
    "node-000",
    "node-005",
    "node-010",
    "node-015",
  ]);
  assert.deepEqual(await labels(sim, { tags: "blue" }), [
    "node-000",
    "node-004",
    "node-008",
    "node-012",
    "node-016",
  ]);
  assert.deepEqual(await labels(sim, { ipv4: five.ipv4[0] ?? "" }), ["node-005"]);
  assert.deepEqual(await labels(sim, { region: "us-east", tags: "blue", status: "offline" }), [
    "node-000",
    "node-012",
  ]);
  assert.deepEqual(await labels(sim, { "specs.vcpus": 4, region: "us-ord" }), ["node-005", "node-015"]);
});

Deno.test("getLinodes() X-Filter supports +or, +and, +contains, +neq and comparisons", async () => {
  await using sim = await fleet(20);
  const ids = sim.world.listInstances().map((l) => l.id);
  const id = (i: number) => ids[i] ?? 0;
  assert.deepEqual(await labels(sim, { "+or": [{ label: "node-001" }, { label: "node-002" }] }), [
    "node-001",
    "node-002",
  ]);
  assert.deepEqual(await labels(sim, { label: { "+or": ["node-003", "node-004"] } }), [
    "node-003",
    "node-004",
  ]);
  assert.deepEqual(
    await labels(sim, { "+and": [{ tags: "blue" }, { region: "us-east" }, { status: "running" }] }),
    [
      "node-004",
      "node-008",
      "node-016",
    ],
  );
  assert.deepEqual(
    await labels(sim, { label: { "+contains": "-01" } }),
    [10, 11, 12, 13, 14, 15, 16, 17, 18, 19].map((i) => `node-0${i}`),
  );
  assert.equal((await labels(sim, { status: { "+neq": "offline" } })).length, 13);
  assert.deepEqual(await labels(sim, { id: { "+gt": id(17) } }), ["node-018", "node-019"]);
  assert.deepEqual(await labels(sim, { id: { "+gte": id(18) } }), ["node-018", "node-019"]);
  assert.deepEqual(await labels(sim, { id: { "+lt": id(2) } }), ["node-000", "node-001"]);
  assert.deepEqual(await labels(sim, { id: { "+lte": id(1) } }), ["node-000", "node-001"]);
  assert.deepEqual(await labels(sim, { id: { "+gt": id(2), "+lt": id(5) } }), ["node-003", "node-004"]);
});

Deno.test("getLinodes() X-Filter orders with +order_by and +order", async () => {
  await using sim = await fleet(6);
  assert.deepEqual(
    await labels(sim, { "+order_by": "label", "+order": "desc" }),
    [5, 4, 3, 2, 1, 0].map((i) => `node-00${i}`),
  );
  assert.deepEqual(await labels(sim, { "+order_by": "region", region: "us-ord" }), [
    "node-001",
    "node-003",
    "node-005",
  ]);
  const paged = await withSim(
    sim,
    () => getLinodes({ page: 1, page_size: 25 }, { "+order_by": "id", "+order": "desc" }),
  );
  assert.equal(paged.data[0]?.label, "node-005");
});

Deno.test("getLinodes() answers an invalid X-Filter with 400", async () => {
  await using sim = await fleet(2);
  const raw = (filter: string) =>
    fetch(`${sim.url}/linode/instances`, {
      headers: { authorization: `Bearer ${sim.token}`, "x-filter": filter },
    });
  const notJson = await raw("{label:");
  assert.equal(notJson.status, 400);
  assert.deepEqual(await notJson.json(), {
    errors: [{ reason: "The X-Filter header must be valid JSON", field: "X-Filter" }],
  });
  const cases: [Filter, string][] = [
    [{ nonsense: 1 }, "Cannot filter on nonsense"],
    [{ label: { "+like": "x" } }, "Unknown filter operator +like"],
    [{ "+xor": [] }, "Unknown filter operator +xor"],
    [{ "+order_by": "label", "+order": "up" }, "+order must be asc or desc"],
    [{ "+order_by": "nonsense" }, "Cannot order by nonsense"],
    [{ id: { "+gt": true } }, "Operator +gt on id needs a number or a string"],
    [{ "+or": { label: "x" } }, "+or must be an array"],
  ];
  for (const [filter, reason] of cases) {
    assert.deepEqual(await failure(withSim(sim, () => getLinodes({}, filter))), {
      status: 400,
      errors: [{ reason, field: "X-Filter" }],
    });
  }
});
