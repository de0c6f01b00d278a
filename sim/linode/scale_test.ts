import assert from "node:assert/strict";
import { getLinodes, getVPCsIPs } from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { oneSubnetVpc, withSim } from "./testdata/test_client.ts";

Deno.test("getLinodes() lists 5,000 instances in ten pages of 500", async () => {
  await using sim = await startLinodeSim();
  const vpc = oneSubnetVpc(sim, { ipv4: "10.0.0.0/16" });
  sim.world.addInstances(5000, (i) => ({ label: `node-${i}`, privateIp: true, vpc }));
  const ids = new Set<number>();
  for (let page = 1; page <= 10; page++) {
    const got = await withSim(sim, () => getLinodes({ page, page_size: 500 }));
    assert.deepEqual([got.data.length, got.pages, got.results], [500, 10, 5000]);
    for (const l of got.data) ids.add(l.id);
  }
  assert.equal(ids.size, 5000);
  const ips = await withSim(sim, () => getVPCsIPs({ page: 10, page_size: 500 }));
  assert.equal(ips.results, 5000);
  assert.equal(ips.data.at(-1)?.address, "10.0.19.137");
  const filtered = await withSim(sim, () => getLinodes({}, { label: "node-4999" }));
  assert.equal(filtered.data[0]?.ipv4.length, 2);
  assert.equal(sim.calls.count("GET /v4/linode/instances"), 11);
});
