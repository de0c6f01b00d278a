import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { clientFor } from "../linode/testdata/test_support.ts";
import { Registry } from "../common/metrics.ts";
import { type LinodeSim, startLinodeSim } from "../sim/linode/server.ts";
import { toVpcIp, type VpcIp } from "./types.ts";
import { sameJson } from "./ttl_cache.ts";
import { VpcIpCache, withIpRangesOf } from "./vpc_ips.ts";
import { VpcCache } from "./vpcs.ts";

Deno.test("VpcIpCache reuses the resolved VPC list: one GET /vpcs for any number of address refreshes", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  sim.world.addInstance({ label: "n1", vpc: { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id ?? 0 } });
  const { client } = clientFor(sim);
  const clock = new FakeClock();
  const metrics = new Registry();
  const vpcs = new VpcCache(client.vpcs, { vpcNames: ["cluster"] }, { clock, metrics, ttlMs: 60_000 });
  const ips = new VpcIpCache(client.vpcs, vpcs, { clock, metrics, ttlMs: 60_000 });
  for (let i = 0; i < 5; i++) {
    assert.equal((await ips.get()).data.filter((ip) => ip.address).length, 1);
    clock.advance(61_000);
  }
  assert.equal(sim.calls.count("GET /v4/vpcs/{id}/ips"), 5);
  assert.equal(sim.calls.count("GET /v4/vpcs"), 1);
});

Deno.test("VpcIpCache resolves the VPC names again when a resolved VPC answers 404 (replaced VPC)", async () => {
  await using sim = await startLinodeSim();
  const subnets = [{ label: "default", ipv4: "10.0.0.0/24" }];
  const old = sim.world.createVpc({ label: "cluster", region: "us-east", subnets });
  const { client } = clientFor(sim);
  const clock = new FakeClock();
  const metrics = new Registry();
  const vpcs = new VpcCache(client.vpcs, { vpcNames: ["cluster"] }, { clock, metrics });
  const ips = new VpcIpCache(client.vpcs, vpcs, { clock, metrics });
  assert.deepEqual((await ips.get()).data, []);
  sim.world.deleteVpc(old.id);
  const replaced = sim.world.createVpc({ label: "cluster", region: "us-east", subnets });
  sim.world.addInstance({ label: "n1", vpc: { vpcId: replaced.id, subnetId: replaced.subnets[0]?.id ?? 0 } });
  clock.advance(61_000);
  const after = await ips.get();
  assert.equal(after.stale, false);
  assert.deepEqual(after.data.map((ip) => [ip.vpc_id, ip.address]), [[replaced.id, "10.0.0.2"]]);
  assert.equal(sim.calls.count("GET /v4/vpcs"), 2);
});

/** A VPC IP entry: an address when `address` is given, else a routed range. */
function entry(
  at: { vpc: number; linode: number; iface: number; config: number | null },
  address: string | null,
  range: string | null = null,
): VpcIp {
  return {
    address,
    address_range: range,
    linode_id: at.linode,
    vpc_id: at.vpc,
    subnet_id: 100 + at.vpc,
    config_id: at.config,
    interface_id: at.iface,
    active: true,
    nat_1_1: address ? "192.0.2.1" : null,
  };
}

const LEGACY = { vpc: 5, linode: 1, iface: 8, config: 3 };
const OTHER_VPC = { vpc: 6, linode: 1, iface: 9, config: 3 };
const LINODE_IFACE = { vpc: 5, linode: 2, iface: 20, config: null };

const RANGE_CASES: {
  name: string;
  target: { vpcId: number; linodeId: number; interfaceId: number };
  ranges: string[];
  want: string[];
}[] = [
  {
    name: "replaces the ranges of a config interface and keeps its address and other interfaces",
    target: { vpcId: 5, linodeId: 1, interfaceId: 8 },
    ranges: ["10.192.1.0/24"],
    want: ["1/8 10.0.0.2", "1/8 10.192.1.0/24", "1/9 10.1.0.2", "1/9 10.9.0.0/24", "2/20 10.0.0.3"],
  },
  {
    name: "removes the last range with []",
    target: { vpcId: 5, linodeId: 1, interfaceId: 8 },
    ranges: [],
    want: ["1/8 10.0.0.2", "1/9 10.1.0.2", "1/9 10.9.0.0/24", "2/20 10.0.0.3"],
  },
  {
    name: "adds to a Linode interface, whose entries have no config_id",
    target: { vpcId: 5, linodeId: 2, interfaceId: 20 },
    ranges: ["10.192.2.0/24"],
    want: [
      "1/8 10.0.0.2",
      "1/8 10.192.0.0/24",
      "1/9 10.1.0.2",
      "1/9 10.9.0.0/24",
      "2/20 10.0.0.3",
      "2/20 10.192.2.0/24",
    ],
  },
  {
    name: "records nothing for an interface missing from the listing",
    target: { vpcId: 5, linodeId: 3, interfaceId: 30 },
    ranges: ["10.192.3.0/24"],
    want: ["1/8 10.0.0.2", "1/8 10.192.0.0/24", "1/9 10.1.0.2", "1/9 10.9.0.0/24", "2/20 10.0.0.3"],
  },
];

/** A listing: a config interface and another VPC's interface of Linode 1, each with a range, and a Linode interface. */
function listing(): VpcIp[] {
  return [
    entry(LEGACY, "10.0.0.2"),
    entry(LEGACY, null, "10.192.0.0/24"),
    entry(OTHER_VPC, "10.1.0.2"),
    entry(OTHER_VPC, null, "10.9.0.0/24"),
    entry(LINODE_IFACE, "10.0.0.3"),
  ];
}

for (const c of RANGE_CASES) {
  Deno.test(`withIpRangesOf() one write ${c.name}`, () => {
    const before = listing();
    const after = withIpRangesOf(before, [{ target: c.target, ranges: c.ranges }]);
    assert.deepEqual(
      after.map((ip) => `${ip.linode_id}/${ip.interface_id} ${ip.address ?? ip.address_range}`),
      c.want,
    );
    for (const ip of after.filter((ip) => ip.address_range)) {
      const template = before.find((b) => b.interface_id === ip.interface_id && b.address);
      assert.equal(ip.config_id, template?.config_id, "a range carries its interface's config_id");
      assert.equal(ip.nat_1_1, null);
    }
  });
}

Deno.test("withIpRangesOf() applies many interfaces' writes in one walk; of two writes to one interface the later wins", () => {
  const before = [...listing(), entry({ vpc: 5, linode: 3, iface: 30, config: 4 }, null, "10.7.0.0/24")];
  const after = withIpRangesOf(before, [
    { target: { vpcId: 5, linodeId: 1, interfaceId: 8 }, ranges: ["10.192.5.0/24"] },
    { target: { vpcId: 5, linodeId: 2, interfaceId: 20 }, ranges: ["10.192.2.0/24"] },
    { target: { vpcId: 5, linodeId: 1, interfaceId: 8 }, ranges: ["10.192.1.0/24", "10.193.1.0/24"] },
    // No address entry in the listing: its range entry stays as it was.
    { target: { vpcId: 5, linodeId: 3, interfaceId: 30 }, ranges: [] },
    // Interface 9's id with another VPC and Linode: not that interface, which keeps its range.
    { target: { vpcId: 5, linodeId: 7, interfaceId: 9 }, ranges: [] },
  ]);
  assert.deepEqual(
    after.map((ip) => `${ip.linode_id}/${ip.interface_id} ${ip.address ?? ip.address_range}`).sort(),
    [
      "1/8 10.0.0.2",
      "1/8 10.192.1.0/24",
      "1/8 10.193.1.0/24",
      "1/9 10.1.0.2",
      "1/9 10.9.0.0/24",
      "2/20 10.0.0.3",
      "2/20 10.192.2.0/24",
      "3/30 10.7.0.0/24",
    ],
  );
  assert.equal(before.length, 6, "the input is not changed");
});

/** The VPC `cluster` (one subnet) in the emulator, with a Linode in it per entry of `ranges` (its routed ranges). */
function clusterVpc(sim: LinodeSim, ranges: readonly string[][]) {
  const vpc = sim.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const linodes = ranges.map((ipRanges, i) =>
    sim.world.addInstance({ label: `n${i + 1}`, vpc: { vpcId: vpc.id, subnetId, ipRanges: [...ipRanges] } })
  );
  return { vpc, subnetId, linodes };
}

/** A VpcIpCache (and its VpcCache) over the emulator's VPC `cluster`, on a fake clock, 60 s TTLs. */
function clusterCaches(sim: LinodeSim) {
  const { client } = clientFor(sim);
  const clock = new FakeClock();
  const metrics = new Registry();
  const vpcs = new VpcCache(client.vpcs, { vpcNames: ["cluster"] }, { clock, metrics, ttlMs: 60_000 });
  return { client, vpcs, ips: new VpcIpCache(client.vpcs, vpcs, { clock, metrics, ttlMs: 60_000 }) };
}

Deno.test("VpcIpCache: range writes recorded between reads are all in the next read, with a new generation", async () => {
  await using sim = await startLinodeSim();
  const { vpc } = clusterVpc(sim, [[], [], []]);
  const { client, ips } = clusterCaches(sim);
  const first = await ips.get();
  const addresses = first.data.filter((ip) => ip.address);
  assert.equal(addresses.length, 3);
  addresses.forEach((ip, i) => {
    const target = { vpcId: ip.vpc_id, linodeId: ip.linode_id ?? 0, interfaceId: ip.interface_id ?? 0 };
    ips.recordIpRanges(target, [`10.192.${i}.0/24`]);
  });
  const unapplied = await ips.addresses();
  assert.equal(unapplied.data.filter((ip) => ip.address_range).length, 0, "addresses() does not apply them");
  const second = await ips.get();
  assert.deepEqual(second.data.filter((ip) => ip.address_range).map((ip) => ip.address_range).sort(), [
    "10.192.0.0/24",
    "10.192.1.0/24",
    "10.192.2.0/24",
  ]);
  assert.deepEqual((await ips.addresses()).data, second.data, "once applied, addresses() holds them too");
  assert.notEqual(second.generation, first.generation);
  assert.equal(sim.calls.count("GET /v4/vpcs/{id}/ips"), 1, "write-through: no re-read");
  // Once the API holds the same ranges, its listing is the cache's entry by entry, in the same order.
  addresses.forEach((ip, i) => sim.world.setIpRanges(ip.linode_id ?? 0, [`10.192.${i}.0/24`]));
  const listed = (await client.vpcs.listIps(vpc.id)).map(toVpcIp);
  assert.ok(sameJson(listed, second.data), "the recorded ranges sit where the API lists them");
});

Deno.test("VpcIpCache.forgetLinode drops that Linode's addresses and ranges, unread range writes included, and no other", async () => {
  await using sim = await startLinodeSim();
  const { vpc, linodes: [gone, kept] } = clusterVpc(sim, [["10.192.1.0/24"], ["10.192.2.0/24"]]);
  if (!gone || !kept) throw new Error("two Linodes");
  const { ips } = clusterCaches(sim);
  const first = await ips.get();
  assert.equal(first.data.filter((ip) => ip.linode_id === gone.id).length, 2, "an address and a range");
  const goneAddress = first.data.find((ip) => ip.linode_id === gone.id && ip.address);
  const target = { vpcId: vpc.id, linodeId: gone.id, interfaceId: goneAddress?.interface_id ?? 0 };
  ips.recordIpRanges(target, ["10.192.1.0/24", "10.192.9.0/24"]);
  const changes: number[] = [];
  ips.onChange((_, next) => changes.push(next.length));
  ips.forgetLinode(gone.id);
  const after = await ips.get();
  assert.deepEqual(
    after.data.filter((ip) => ip.linode_id === gone.id),
    [],
    "nothing of it, not even the write",
  );
  assert.deepEqual(
    after.data.filter((ip) => ip.linode_id === kept.id).map((ip) => ip.address ?? ip.address_range).sort(),
    ["10.0.0.3", "10.192.2.0/24"],
  );
  assert.deepEqual(changes, [2], "address readers are told");
  assert.equal(sim.calls.count("GET /v4/vpcs/{id}/ips"), 1, "write-through: no re-read");
});

Deno.test("VpcCache keeps each selected VPC's id, label, region and subnets, not the Linodes a subnet lists", async () => {
  await using sim = await startLinodeSim();
  const { vpc, subnetId } = clusterVpc(sim, [[]]);
  const { client, vpcs } = clusterCaches(sim);
  const listed = await client.vpcs.list();
  assert.equal(
    (listed[0]?.subnets[0] as { linodes?: unknown[] } | undefined)?.linodes?.length,
    1,
    "the API lists the subnet's Linodes",
  );
  assert.deepEqual((await vpcs.get()).data, [
    {
      id: vpc.id,
      label: "cluster",
      region: "us-east",
      subnets: [{ id: subnetId, label: "default", ipv4: "10.0.0.0/24" }],
    },
  ]);
});
