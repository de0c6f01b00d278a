import assert from "node:assert/strict";
import { getLinodeConfigs, getLinodeInterfaces, getLinodeIPs } from "@linode/api-v4";
import { clientFor } from "../../linode/test_support.ts";
import { startLinodeSim } from "./server.ts";
import { oneSubnetVpc, withSim } from "./test_client.ts";
import { slaacAddress } from "./vpc_ipv6.ts";

Deno.test("slaacAddress() is the /64 prefix plus the EUI-64 identifier of the interface's MAC", () => {
  // MAC 22:00:00:00:01:02 → flip the universal/local bit, insert ff:fe.
  assert.equal(slaacAddress("2600:3c11:e5b9:1::/64", 0x0102, "f"), "2600:3c11:e5b9:1:2000:ff:fe00:102");
  assert.throws(() => slaacAddress("2600:3c11::/56", 1, "vpc.ipv6.range"), /IPv6 \/64/);
  assert.throws(() => slaacAddress("10.0.0.0/64", 1, "vpc.ipv6.range"), /IPv6 \/64/);
});

Deno.test("GET /vpcs/{id}/ipv6s lists one entry per interface with VPC IPv6, as the API reference shows", async () => {
  await using sim = await startLinodeSim();
  const at = oneSubnetVpc(sim);
  const legacy = sim.world.addInstance({
    label: "a",
    vpc: { ...at, ipv6: { range: "2600:3c11:e5b9:1::/64" } },
  });
  const modern = sim.world.addInstance({
    label: "b",
    interfaceGeneration: "linode",
    vpc: { ...at, ipv6: { range: "2600:3c11:e5b9:2::/64", isPublic: true } },
  });
  sim.world.addInstance({ label: "v4-only", vpc: at });
  const { client } = clientFor(sim);
  const entries = await client.vpcs.listIpv6s(at.vpcId);
  assert.deepEqual(
    entries.map((e) => [e.linode_id, e.address, e.address_range, e.ipv6_range, e.ipv6_is_public]),
    [
      [legacy.id, null, null, "2600:3c11:e5b9:1::/64", false],
      [modern.id, null, null, "2600:3c11:e5b9:2::/64", true],
    ],
  );
  const slaac = entries.map((e) => e.ipv6_addresses[0]?.slaac_address ?? "");
  assert.match(slaac[0] ?? "", /^2600:3c11:e5b9:1:/);
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
      slaac: [{ range: "2600:3c11:e5b9:1::/64", address: slaac[0] }],
    });
    const linodeIfaces = await getLinodeInterfaces(modern.id);
    assert.equal(linodeIfaces.interfaces.find((i) => i.vpc)?.vpc?.ipv6?.slaac[0]?.address, slaac[1]);
    const ips = await getLinodeIPs(legacy.id);
    assert.deepEqual(ips.ipv6?.vpc.map((e) => e.ipv6_addresses[0]?.slaac_address), [slaac[0]]);
  });
  assert.equal(sim.calls.count("GET /v4/vpcs/{id}/ipv6s"), 1);
});

Deno.test("addInstance() refuses a VPC IPv6 range that is not an IPv6 /64 and allocates nothing", async () => {
  await using sim = await startLinodeSim();
  const at = oneSubnetVpc(sim);
  assert.throws(
    () =>
      sim.world.addInstance({ label: "bad", vpc: { ...at, ipv4: "10.0.0.9", ipv6: { range: "2600::/48" } } }),
    /IPv6 \/64/,
  );
  // The address it asked for is still free.
  sim.world.addInstance({ label: "good", vpc: { ...at, ipv4: "10.0.0.9" } });
});
