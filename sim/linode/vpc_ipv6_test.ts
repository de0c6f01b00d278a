import assert from "node:assert/strict";
import { getLinodeConfigs, getLinodeInterfaces, getVPC, type VPC } from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./testdata/test_client.ts";

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
