import assert from "node:assert/strict";
import { getVPCIPs, getVPCsIPs } from "@linode/api-v4";
import type { Filter } from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { failure, withSim } from "./testdata/test_client.ts";

/**
 * 60 legacy Linodes (one address and one range each, every third offline) and 10 Linodes with Linode
 * interfaces (one address and two ranges each) in one 10.0.0.0/8 subnet; 150 entries. A second VPC in
 * us-ord holds one more Linode.
 */
async function world() {
  const sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "big",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/8" }],
  });
  const at = { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id ?? 0 };
  const legacy = sim.world.addInstances(60, (i) => ({
    label: `old-${i}`,
    status: i % 3 === 0 ? "offline" : "running",
    vpc: { ...at, ipRanges: [`10.192.${i}.0/24`] },
  }));
  const modern = sim.world.addInstances(10, (i) => ({
    label: `new-${i}`,
    interfaceGeneration: "linode",
    vpc: { ...at, ipRanges: [`10.193.${i}.0/24`, `10.194.${i}.0/24`] },
  }));
  const west = sim.world.createVpc({
    label: "west",
    region: "us-ord",
    subnets: [{ label: "w", ipv4: "10.0.0.0/24" }],
  });
  const far = sim.world.addInstance({
    label: "far",
    region: "us-ord",
    vpc: { vpcId: west.id, subnetId: west.subnets[0]?.id ?? 0 },
  });
  return { sim, vpc, west, legacy, modern, far, subnetId: at.subnetId };
}

Deno.test("getVPCIPs() pages at the API's sizes: 100 by default, page_size 25..500, others refused", async () => {
  const { sim, vpc } = await world();
  await using _ = sim;
  const first = await withSim(sim, () => getVPCIPs(vpc.id));
  assert.deepEqual([first.data.length, first.page, first.pages, first.results], [100, 1, 2, 150]);
  const seen = new Set<string>();
  for (let page = 1; page <= 6; page++) {
    const got = await withSim(sim, () => getVPCIPs(vpc.id, { page, page_size: 25 }));
    assert.deepEqual([got.data.length, got.pages], [25, 6]);
    for (const e of got.data) seen.add(e.address ?? e.address_range ?? "");
  }
  assert.equal(seen.size, 150, "pages neither overlap nor skip");
  assert.equal((await withSim(sim, () => getVPCIPs(vpc.id, { page_size: 500 }))).data.length, 150);
  assert.deepEqual((await withSim(sim, () => getVPCIPs(vpc.id, { page: 3 }))).data, []);
  for (const page_size of [24, 501]) {
    assert.deepEqual(await failure(withSim(sim, () => getVPCIPs(vpc.id, { page_size }))), {
      status: 400,
      errors: [{ field: "page_size", reason: "page_size must be between 25 and 500" }],
    });
  }
  assert.equal(
    (await failure(withSim(sim, () => getVPCsIPs({ page_size: 10 })))).errors[0]?.field,
    "page_size",
  );
  assert.equal(sim.calls.count("GET /v4/vpcs/{id}/ips"), 11);
});

Deno.test("getVPCIPs() has one entry per address and per range, for both interface generations", async () => {
  const { sim, vpc, legacy, modern, subnetId } = await world();
  await using _ = sim;
  const all = (await withSim(sim, () => getVPCIPs(vpc.id, { page_size: 500 }))).data;
  const old = all.filter((e) => e.linode_id === legacy[1]?.id);
  assert.deepEqual(old.map((e) => [e.address, e.address_range, e.active]), [["10.0.0.3", null, true], [
    null,
    "10.192.1.0/24",
    true,
  ]]);
  assert.ok(old.every((e) => typeof e.config_id === "number" && e.interface_id === old[0]?.interface_id));
  const fresh = all.filter((e) => e.linode_id === modern[0]?.id);
  assert.deepEqual(fresh.map((e) => [e.address, e.address_range, e.config_id]), [
    ["10.0.0.62", null, null],
    [null, "10.193.0.0/24", null],
    [null, "10.194.0.0/24", null],
  ]);
  const iface = sim.world.linodeInterfaces(modern[0]?.id ?? 0).find((i) => i.vpc);
  assert.ok(
    fresh.every((e) => e.interface_id === iface?.id && e.subnet_id === subnetId && e.vpc_id === vpc.id),
  );
  const keys = Object.keys(all[0] ?? {}).sort();
  for (
    const key of ["active", "address", "address_range", "config_id", "database_id", "gateway", "interface_id"]
  ) {
    assert.ok(keys.includes(key), key);
  }
  for (
    const key of ["linode_id", "nat_1_1", "nodebalancer_id", "prefix", "region", "subnet_id", "subnet_mask"]
  ) {
    assert.ok(keys.includes(key), key);
  }
});

Deno.test("getVPCIPs() X-Filter takes the documented fields: active, config_id, linode_id, region, vpc_id", async () => {
  const { sim, vpc, west, legacy, modern, subnetId } = await world();
  await using _ = sim;
  const ids = async (filter: Filter, vpcId: number | null = vpc.id) => {
    const page = { page_size: 500 };
    const id = vpcId;
    const list = id === null ? () => getVPCsIPs(page, filter) : () => getVPCIPs(id, page, filter);
    return (await withSim(sim, list)).data.map((e) => e.address ?? e.address_range);
  };
  const [l0, l1] = legacy;
  assert.deepEqual(await ids({ linode_id: l1?.id ?? 0 }), ["10.0.0.3", "10.192.1.0/24"]);
  assert.deepEqual(await ids({ "+or": [{ linode_id: l0?.id ?? 0 }, { linode_id: l1?.id ?? 0 }] }), [
    "10.0.0.2",
    "10.192.0.0/24",
    "10.0.0.3",
    "10.192.1.0/24",
  ]);
  assert.equal((await ids({ active: false })).length, 40, "20 offline legacy Linodes");
  assert.equal((await ids({ config_id: null })).length, 30, "Linode interfaces have no config");
  assert.deepEqual(await ids({ region: "us-ord" }, null), ["10.0.0.2"]);
  assert.equal((await ids({ vpc_id: west.id }, null)).length, 1);
  assert.equal((await ids({ subnet_id: String(subnetId) })).length, 150, "as the Go CCM filters it");
  const ordered = await withSim(
    sim,
    () => getVPCIPs(vpc.id, { page_size: 25 }, { "+order_by": "linode_id", "+order": "desc" }),
  );
  assert.equal(ordered.data[0]?.linode_id, modern.at(-1)?.id);
  for (const field of ["address", "address_range", "interface_id", "nat_1_1", "gateway", "nodebalancer_id"]) {
    assert.deepEqual(await failure(withSim(sim, () => getVPCIPs(vpc.id, {}, { [field]: "x" }))), {
      status: 400,
      errors: [{ reason: `Cannot filter on ${field}`, field: "X-Filter" }],
    }, field);
  }
  const byAddress = await failure(withSim(sim, () => getVPCsIPs({}, { "+order_by": "address" })));
  assert.deepEqual(byAddress.errors, [{ reason: "Cannot order by address", field: "X-Filter" }]);
});

Deno.test("getVPCIPs() lists a NodeBalancer's VPC range, and routed ranges may not overlap it", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "v",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/24" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const a = sim.world.addInstance({ label: "a", vpc: { vpcId: vpc.id, subnetId } });
  const nb = sim.world.createNodeBalancer({
    label: "svc",
    region: "us-east",
    backend_vpcs: [{ subnet_id: subnetId, ipv4_range: "10.0.0.64/30" }],
  });
  const entries = (await withSim(sim, () => getVPCIPs(vpc.id))).data;
  assert.deepEqual(
    entries.map((e) => [e.linode_id, e.nodebalancer_id, e.address, e.address_range, e.config_id]),
    [
      [a.id, null, "10.0.0.2", null, entries[0]?.config_id],
      [null, nb.id, null, "10.0.0.64/30", null],
    ],
  );
  assert.throws(() => sim.world.setIpRanges(a.id, ["10.0.0.64/28"]), /includes 10\.0\.0\.6[4-7]/);
  assert.deepEqual(sim.world.setIpRanges(a.id, ["10.0.0.80/28"]), ["10.0.0.80/28"]);
});
