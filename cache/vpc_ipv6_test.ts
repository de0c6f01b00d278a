import assert from "node:assert/strict";
import { clientFor } from "../linode/testdata/test_support.ts";
import { Registry } from "../common/metrics.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { ipv6RangeOf, VpcIpv6Cache } from "./vpc_ipv6.ts";

const RANGE_CASES: { name: string; part: Parameters<typeof ipv6RangeOf>[0]; want: string | undefined }[] = [
  { name: "no IPv6", part: null, want: undefined },
  { name: "empty lists", part: { slaac: [], ranges: [] }, want: undefined },
  {
    name: "the SLAAC range first",
    part: { slaac: [{ range: "2600::/64" }], ranges: [{ range: "2601::/64" }] },
    want: "2600::/64",
  },
  {
    name: "else the first range",
    part: { slaac: [{}], ranges: [{ range: "2601::/64" }] },
    want: "2601::/64",
  },
];

for (const c of RANGE_CASES) {
  Deno.test(`ipv6RangeOf() ${c.name}`, () => assert.equal(ipv6RangeOf(c.part), c.want));
}

Deno.test("VpcIpv6Cache reads each Linode's interfaces once, and again while it has no range", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "cluster",
    region: "us-east",
    ipv6: [{ range: "/52" }],
    subnets: [{ label: "default", ipv4: "10.0.0.0/24", ipv6: [{ range: "auto" }] }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const a = sim.world.addInstance({ label: "a", vpc: { vpcId: vpc.id, subnetId, ipv6: true } }).id;
  const b = sim.world.addInstance({
    label: "b",
    interfaceGeneration: "linode",
    vpc: { vpcId: vpc.id, subnetId, ipv6: true },
  }).id;
  const bare = sim.world.addInstance({ label: "bare", vpc: { vpcId: vpc.id, subnetId } }).id;
  const { client } = clientFor(sim);
  const cache = new VpcIpv6Cache({
    listConfigs: (id) => client.instances.listConfigs(id),
    listInterfaces: (id) => client.interfaces.list(id),
  }, { metrics: new Registry() });
  for (let i = 0; i < 3; i++) {
    assert.equal(await cache.rangeOf(a, "legacy_config"), "2600:3c05:0:1000::/64");
    assert.equal(await cache.rangeOf(b, "linode"), "2600:3c05:0:1001::/64");
    assert.equal(await cache.rangeOf(bare, "legacy_config"), undefined);
  }
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}/configs"), 1 + 3);
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}/interfaces"), 1);
});
