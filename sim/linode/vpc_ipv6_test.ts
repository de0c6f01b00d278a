import assert from "node:assert/strict";
import { getLinodeConfigs, getLinodeInterfaces, getLinodeIPs, getVPC, type VPC } from "@linode/api-v4";
import { clientFor } from "../../linode/testdata/test_support.ts";
import { parseCidr6 } from "../../common/net.ts";
import { startLinodeSim } from "./server.ts";
import { failure, oneSubnetVpc, rawCall, withSim } from "./testdata/test_client.ts";
import { macOf } from "./iface_members.ts";
import { parseSlaacRequest, slaacAddress } from "./vpc_ipv6.ts";

const BASE = { label: "v6", region: "us-east" };

Deno.test("POST /vpcs gives a dual-stack VPC a /52 and its subnets ranges inside it", async () => {
  await using sim = await startLinodeSim();
  const vpc = await withSim(sim, () =>
    rawCall("POST", "/vpcs", {
      ...BASE,
      ipv6: [{ range: "/52" }],
      subnets: [
        { label: "a", ipv4: "10.0.0.0/24", ipv6: [{ range: "auto" }] },
        { label: "b", ipv4: "10.0.1.0/24", ipv6: [{ range: "/60" }] },
        { label: "c", ipv4: "10.0.2.0/24" },
      ],
    })) as VPC;
  assert.deepEqual(vpc.ipv6, [{ range: "2600:3c05:0:1000::/52" }]);
  assert.deepEqual(vpc.subnets.map((s) => s.ipv6), [
    [{ range: "2600:3c05:0:1000::/56" }],
    [{ range: "2600:3c05:0:1100::/60" }],
    undefined,
  ]);
  const again = await withSim(sim, () => getVPC(vpc.id));
  assert.deepEqual(again.ipv6, vpc.ipv6);
  const second = await withSim(
    sim,
    () => rawCall("POST", "/vpcs", { ...BASE, label: "v6b", ipv6: [{}] }),
  ) as VPC;
  assert.deepEqual(second.ipv6, [{ range: "2600:3c05:0:2000::/52" }], "the default size, not overlapping");
});

const REFUSED: { name: string; body: Record<string, unknown>; field: string; reason: RegExp }[] = [
  {
    name: "a VPC prefix length other than 44, 48, 52",
    body: { ipv6: [{ range: "/56" }] },
    field: "ipv6[0].range",
    reason: /prefix length 52, 48, or 44/,
  },
  {
    name: "a VPC prefix the account does not own",
    body: { ipv6: [{ range: "2001:db8::/48" }] },
    field: "ipv6[0].range",
    reason: /owned by this account/,
  },
  { name: "two VPC prefixes", body: { ipv6: [{}, {}] }, field: "ipv6", reason: /at most one/ },
  {
    name: "a subnet range in a VPC without IPv6",
    body: { subnets: [{ label: "a", ipv4: "10.0.0.0/24", ipv6: [{ range: "auto" }] }] },
    field: "subnets[0].ipv6",
    reason: /has no IPv6 range/,
  },
  {
    name: "a subnet prefix outside /52–/62",
    body: { ipv6: [{}], subnets: [{ label: "a", ipv4: "10.0.0.0/24", ipv6: [{ range: "/64" }] }] },
    field: "subnets[0].ipv6[0].range",
    reason: /\(52-62\)/,
  },
  {
    name: "a subnet range outside the VPC's",
    body: { ipv6: [{}], subnets: [{ label: "a", ipv4: "10.0.0.0/24", ipv6: [{ range: "2001:db8::/56" }] }] },
    field: "subnets[0].ipv6[0].range",
    reason: /within the VPC's IPv6 range/,
  },
  {
    name: "a subnet without its range",
    body: { ipv6: [{}], subnets: [{ label: "a", ipv4: "10.0.0.0/24", ipv6: [{}] }] },
    field: "subnets[0].ipv6[0].range",
    reason: /required/,
  },
];

for (const c of REFUSED) {
  Deno.test(`POST /vpcs refuses ${c.name}`, async () => {
    await using sim = await startLinodeSim();
    const f = await failure(withSim(sim, () => rawCall("POST", "/vpcs", { ...BASE, ...c.body })));
    assert.equal(f.status, 400);
    assert.equal(f.errors[0]?.field, c.field);
    assert.match(f.errors[0]?.reason ?? "", c.reason);
    assert.equal(sim.world.vpcs.list().length, 0, "nothing created");
  });
}

Deno.test("world.addInstance() gives VPC interfaces of either generation a SLAAC /64 of the subnet's range", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    ...BASE,
    ipv6: [{ range: "/52" }],
    subnets: [{ label: "nodes", ipv4: "10.0.0.0/24", ipv6: [{ range: "auto" }] }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const legacy = sim.world.addInstance({ vpc: { vpcId: vpc.id, subnetId, ipv6: true } });
  const modern = sim.world.addInstance({
    interfaceGeneration: "linode",
    vpc: { vpcId: vpc.id, subnetId, ipv6: true },
  });
  const configs = await withSim(sim, () => getLinodeConfigs(legacy.id));
  const iface = configs.data[0]?.interfaces?.find((i) => i.purpose === "vpc");
  assert.equal(iface?.ipv6?.slaac[0]?.range, "2600:3c05:0:1000::/64");
  assert.equal(iface?.ipv6?.is_public, false);
  const linodeIfaces = await withSim(sim, () => getLinodeInterfaces(modern.id));
  const vpcIface = linodeIfaces.interfaces.find((i) => i.vpc);
  assert.equal(vpcIface?.vpc?.ipv6?.slaac[0]?.range, "2600:3c05:0:1001::/64");
  // A routed-range update keeps the interface's IPv6.
  await withSim(sim, () =>
    rawCall("PUT", `/linode/instances/${modern.id}/interfaces/${vpcIface?.id}`, {
      vpc: { subnet_id: subnetId, ipv4: { ranges: [{ range: "10.0.0.64/28" }] } },
    }));
  const after = await withSim(sim, () => getLinodeInterfaces(modern.id));
  assert.equal(after.interfaces.find((i) => i.vpc)?.vpc?.ipv6?.slaac[0]?.range, "2600:3c05:0:1001::/64");
  const plain = sim.world.createVpc({ ...BASE, label: "v4", subnets: [{ label: "s", ipv4: "10.1.0.0/24" }] });
  const v4Subnet = plain.subnets[0]?.id ?? 0;
  assert.throws(
    () => sim.world.addInstance({ vpc: { vpcId: plain.id, subnetId: v4Subnet, ipv6: true } }),
    /has no IPv6 range/,
  );
});

Deno.test("PUT of an interface's ipv6 is refused with a field error: the emulator sets VPC IPv6 up through its world", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({ ...BASE, subnets: [{ label: "s", ipv4: "10.0.0.0/24" }] });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const legacy = sim.world.addInstance({ vpc: { vpcId: vpc.id, subnetId } });
  const modern = sim.world.addInstance({ interfaceGeneration: "linode", vpc: { vpcId: vpc.id, subnetId } });
  const config = sim.world.instances.get(legacy.id)?.config;
  const iface = config?.interfaces.find((i) => i.purpose === "vpc");
  const vpcIface = sim.world.instances.get(modern.id)?.interfaces.find((i) => i.vpc);
  const slaac = { slaac: [{ range: "auto" }] };
  const refused = [
    await failure(
      withSim(
        sim,
        () =>
          rawCall("PUT", `/linode/instances/${legacy.id}/configs/${config?.id}/interfaces/${iface?.id}`, {
            ipv6: slaac,
          }),
      ),
    ),
    await failure(
      withSim(sim, () =>
        rawCall("PUT", `/linode/instances/${modern.id}/interfaces/${vpcIface?.id}`, {
          vpc: { subnet_id: subnetId, ipv6: slaac },
        })),
    ),
  ];
  assert.deepEqual(refused.map((f) => [f.status, f.errors[0]?.field]), [[400, "ipv6"], [400, "vpc.ipv6"]]);
});

Deno.test("slaacAddress() is the /64 prefix plus the EUI-64 identifier of the interface's MAC", () => {
  // MAC 22:00:00:00:01:02 → flip the universal/local bit, insert ff:fe.
  const range = parseCidr6("2600:3c11:e5b9:1::/64");
  assert.ok(range);
  assert.equal(slaacAddress(range, macOf(0x0102)), "2600:3c11:e5b9:1:2000:ff:fe00:102");
});

Deno.test("parseSlaacRequest() takes true, auto or a named IPv6 /64, and refuses anything else", () => {
  assert.deepEqual(parseSlaacRequest(true, "vpc.ipv6"), { isPublic: false });
  assert.deepEqual(parseSlaacRequest({ range: "auto", isPublic: true }, "vpc.ipv6"), { isPublic: true });
  assert.deepEqual(parseSlaacRequest({ range: "2600:3c11:e5b9:1::/64" }, "vpc.ipv6"), {
    cidr: parseCidr6("2600:3c11:e5b9:1::/64"),
    isPublic: false,
  });
  assert.throws(() => parseSlaacRequest({ range: "2600:3c11::/56" }, "vpc.ipv6"), /IPv6 \/64/);
  assert.throws(() => parseSlaacRequest({ range: "10.0.0.0/64" }, "vpc.ipv6"), /IPv6 \/64/);
});

Deno.test("GET /vpcs/{id}/ipv6s lists one entry per interface with VPC IPv6, as the API reference shows", async () => {
  await using sim = await startLinodeSim();
  const at = oneSubnetVpc(sim, { ipv6: true });
  const legacy = sim.world.addInstance({ label: "a", vpc: { ...at, ipv6: true } });
  const modern = sim.world.addInstance({
    label: "b",
    interfaceGeneration: "linode",
    vpc: { ...at, ipv6: { range: "2600:3c05:0:1042::/64", isPublic: true } },
  });
  sim.world.addInstance({ label: "v4-only", vpc: at });
  const { client } = clientFor(sim);
  const entries = await client.vpcs.listIpv6s(at.vpcId);
  assert.deepEqual(
    entries.map((e) => [e.linode_id, e.address, e.address_range, e.ipv6_range, e.ipv6_is_public]),
    [
      [legacy.id, null, null, "2600:3c05:0:1000::/64", false],
      [modern.id, null, null, "2600:3c05:0:1042::/64", true],
    ],
  );
  const slaac = entries.map((e) => e.ipv6_addresses[0]?.slaac_address ?? "");
  assert.match(slaac[0] ?? "", /^2600:3c05:0:1000:2000:ff:fe/);
  assert.match(slaac[1] ?? "", /^2600:3c05:0:1042:2000:ff:fe/);
  // The IPv4 listing keeps its shape: no IPv6 entries mixed in.
  const v4 = await client.vpcs.listIps(at.vpcId);
  assert.ok(v4.every((e) => e.address !== null && e.ipv6_addresses.length === 0));
  // The same addresses on the interfaces and in /ips.
  await withSim(sim, async () => {
    const config = (await getLinodeConfigs(legacy.id)).data[0];
    const iface = config?.interfaces?.find((i) => i.purpose === "vpc");
    assert.deepEqual(iface?.ipv6, {
      is_public: false,
      ranges: [],
      slaac: [{ range: "2600:3c05:0:1000::/64", address: slaac[0] }],
    });
    const linodeIfaces = await getLinodeInterfaces(modern.id);
    const vpcPart = linodeIfaces.interfaces.find((i) => i.vpc)?.vpc;
    assert.equal(vpcPart?.ipv6?.slaac[0]?.address, slaac[1]);
    assert.equal(vpcPart?.ipv6?.is_public, true);
    const ips = await getLinodeIPs(legacy.id);
    assert.deepEqual(ips.ipv6?.vpc.map((e) => e.ipv6_addresses[0]?.slaac_address), [slaac[0]]);
  });
  assert.equal(sim.calls.count("GET /v4/vpcs/{id}/ipv6s"), 1);
});

const REFUSED_SLAAC: { name: string; range: string; reason: RegExp }[] = [
  { name: "not an IPv6 /64", range: "2600:3c05:0:1000::/48", reason: /IPv6 \/64/ },
  { name: "outside the subnet's range", range: "2600:3c05:0:2000::/64", reason: /not available/ },
  { name: "another interface's", range: "2600:3c05:0:1000::/64", reason: /not available/ },
];

for (const c of REFUSED_SLAAC) {
  Deno.test(`addInstance() refuses a VPC IPv6 range ${c.name} and allocates nothing`, async () => {
    await using sim = await startLinodeSim();
    const at = oneSubnetVpc(sim, { ipv6: true });
    sim.world.addInstance({ label: "first", vpc: { ...at, ipv6: true } });
    assert.throws(
      () =>
        sim.world.addInstance({ label: "bad", vpc: { ...at, ipv4: "10.0.0.9", ipv6: { range: c.range } } }),
      c.reason,
    );
    // The address and the next SLAAC range it would have taken are still free.
    const good = sim.world.addInstance({ label: "good", vpc: { ...at, ipv4: "10.0.0.9", ipv6: true } });
    const config = sim.world.instances.get(good.id)?.config;
    const iface = config?.interfaces.find((i) => i.purpose === "vpc");
    assert.equal(iface?.ipv6?.slaac[0]?.range, "2600:3c05:0:1001::/64");
    assert.equal(sim.world.instances.list().length, 2);
  });
}
