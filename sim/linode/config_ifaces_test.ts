import assert from "node:assert/strict";
import { getConfigInterface, getLinodeConfigs, getVPCIPs, updateConfigInterface } from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./testdata/test_client.ts";

type Ids = readonly [linodeId: number, configId: number, ifaceId: number];

/** Subnets `nodes` 10.0.0.0/24 and `extra` 10.0.1.0/24; a (10.0.0.2) and b (10.0.0.3) in `nodes`. */
async function world() {
  const sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "cluster",
    region: "us-east",
    subnets: [{ label: "nodes", ipv4: "10.0.0.0/24" }, { label: "extra", ipv4: "10.0.1.0/24" }],
  });
  const other = sim.world.createVpc({
    label: "other",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/24" }],
  });
  const at = (v: typeof vpc) => ({ vpcId: v.id, subnetId: v.subnets[0]?.id ?? 0 });
  const a = sim.world.addInstance({ label: "a", vpc: at(vpc) });
  const b = sim.world.addInstance({ label: "b", vpc: at(vpc) });
  const c = sim.world.addInstance({ label: "c", vpc: at(other) });
  const ids = async (linodeId: number, purpose = "vpc"): Promise<Ids> => {
    const config = (await withSim(sim, () => getLinodeConfigs(linodeId))).data[0];
    const iface = config?.interfaces?.find((i) => i.purpose === purpose);
    assert.ok(config && iface);
    return [linodeId, config.id, iface.id];
  };
  return { sim, vpc, other, a: await ids(a.id), b: await ids(b.id), c: await ids(c.id), ids };
}

/** PUT through api-v4's transport without its client-side validation (which allows one range per call). */
function put(sim: LinodeSim, [l, cfg, i]: Ids, body: unknown) {
  return withSim(sim, () => rawCall("PUT", `/linode/instances/${l}/configs/${cfg}/interfaces/${i}`, body));
}

const ranges = async (sim: LinodeSim, vpcId: number) =>
  (await withSim(sim, () => getVPCIPs(vpcId))).data.filter((e) => e.address_range).map((e) => [
    e.linode_id,
    e.address_range,
  ]);

Deno.test("updateConfigInterface() routes ranges inside or outside the subnet; the VPC listing shows them at once", async () => {
  const { sim, vpc, a, b } = await world();
  await using _ = sim;
  const one = await withSim(
    sim,
    () => updateConfigInterface(a[0], a[1], a[2], { ip_ranges: ["10.0.0.128/28"] }),
  );
  assert.deepEqual(one.ip_ranges, ["10.0.0.128/28"], "a range inside the subnet, away from any address");
  assert.deepEqual(await ranges(sim, vpc.id), [[a[0], "10.0.0.128/28"]]);
  await put(sim, a, { ip_ranges: ["10.192.0.0/24", "10.192.1.0/24"] });
  await put(sim, b, { ip_ranges: ["10.0.0.5/32"] });
  assert.deepEqual(await ranges(sim, vpc.id), [
    [a[0], "10.192.0.0/24"],
    [a[0], "10.192.1.0/24"],
    [b[0], "10.0.0.5/32"],
  ]);
  await put(sim, a, { primary: true, ip_ranges: null });
  assert.deepEqual(
    sim.world.ipRanges(a[0]),
    ["10.192.0.0/24", "10.192.1.0/24"],
    "null and omitted keep them",
  );
  assert.deepEqual(
    (await withSim(sim, () => updateConfigInterface(a[0], a[1], a[2], { ip_ranges: [] }))).ip_ranges,
    [],
  );
  assert.deepEqual(await ranges(sim, vpc.id), [[b[0], "10.0.0.5/32"]]);
  assert.equal(sim.calls.count("PUT /v4/linode/instances/{id}/configs/{id}/interfaces/{id}"), 5);
});

const REFUSED: [name: string, body: unknown, field: string, reason: RegExp][] = [
  ["a prefix over 32", { ip_ranges: ["10.193.0.0/33"] }, "ip_ranges[0]", /not a valid IPv4 range/],
  ["host bits", { ip_ranges: ["10.193.0.1/24"] }, "ip_ranges[0]", /not a valid IPv4 range/],
  ["a bare address", { ip_ranges: ["10.193.0.1"] }, "ip_ranges[0]", /not a valid IPv4 range/],
  ["a number", { ip_ranges: [42] }, "ip_ranges[0]", /not a valid IPv4 range/],
  ["not an array", { ip_ranges: "10.193.0.0/24" }, "ip_ranges", /must be an array/],
  ["IPv6", { ip_ranges: ["fd00::/64"] }, "ip_ranges[0]", /IPv6/],
  ["a public range", { ip_ranges: ["8.8.8.0/24"] }, "ip_ranges[0]", /RFC 1918/],
  ["the gateway", { ip_ranges: ["10.0.0.0/29"] }, "ip_ranges[0]", /first two or last two/],
  ["the broadcast end", { ip_ranges: ["10.0.0.252/30"] }, "ip_ranges[0]", /first two or last two/],
  ["its own address", { ip_ranges: ["10.0.0.2/32"] }, "ip_ranges[0]", /includes 10\.0\.0\.2/],
  ["b's address", { ip_ranges: ["10.0.0.3/32"] }, "ip_ranges[0]", /includes 10\.0\.0\.3/],
  ["another subnet", { ip_ranges: ["10.0.1.0/25"] }, "ip_ranges[0]", /overlaps subnet extra/],
  [
    "b's range",
    { ip_ranges: ["10.200.0.0/16"] },
    "ip_ranges[0]",
    /overlaps 10\.200\.0\.0\/24, already routed/,
  ],
  [
    "a duplicate",
    { ip_ranges: ["10.194.0.0/24", "10.194.0.0/25"] },
    "ip_ranges[1]",
    /overlaps ip_ranges\[0\]/,
  ],
  ["a foreign nat_1_1", { ipv4: { nat_1_1: "8.8.8.8" } }, "ipv4.nat_1_1", /public IPv4 address assigned/],
  ["a taken address", { ipv4: { vpc: "10.0.0.3" } }, "ipv4.vpc", /not available/],
  ["an address in a range", { ipv4: { vpc: "10.0.0.70" } }, "ipv4.vpc", /not available/],
  ["an address outside the subnet", { ipv4: { vpc: "10.0.1.9" } }, "ipv4.vpc", /not available/],
  ["the gateway address", { ipv4: { vpc: "10.0.0.1" } }, "ipv4.vpc", /not available/],
  ["another subnet_id", { subnet_id: 1 }, "subnet_id", /can't be updated/],
  ["another vpc_id", { vpc_id: 1 }, "vpc_id", /can't be updated/],
  ["another purpose", { purpose: "public" }, "purpose", /can't be updated/],
];

Deno.test("updateConfigInterface() refuses what the API refuses with 400 and the field, changing nothing", async () => {
  const { sim, vpc, a, b } = await world();
  await using _ = sim;
  await put(sim, a, { ip_ranges: ["10.192.0.0/24"] });
  await put(sim, b, { ip_ranges: ["10.200.0.0/24", "10.0.0.64/28"] });
  const before = await withSim(sim, () => getVPCIPs(vpc.id));
  for (const [name, body, field, reason] of REFUSED) {
    const got = await failure(put(sim, a, body));
    assert.equal(got.status, 400, name);
    assert.equal(got.errors.length, 1, name);
    assert.equal(got.errors[0]?.field, field, name);
    assert.match(got.errors[0]?.reason ?? "", reason, name);
  }
  assert.deepEqual(await withSim(sim, () => getVPCIPs(vpc.id)), before);
});

Deno.test("updateConfigInterface() moves the VPC address and sets nat_1_1 as documented", async () => {
  const { sim, vpc, a, b } = await world();
  await using _ = sim;
  const linode = sim.world.instance(a[0]);
  const same = { purpose: "vpc", vpc_id: vpc.id, subnet_id: vpc.subnets[0]?.id };
  const moved = await put(sim, a, { ipv4: { vpc: "10.0.0.10", nat_1_1: "any" }, ...same });
  assert.deepEqual((moved as { ipv4: unknown }).ipv4, { vpc: "10.0.0.10", nat_1_1: linode?.ipv4[0] });
  const addresses = async () =>
    (await withSim(sim, () => getVPCIPs(vpc.id))).data.filter((e) => e.address).map((
      e,
    ) => [e.address, e.nat_1_1]);
  assert.deepEqual(await addresses(), [["10.0.0.10", linode?.ipv4[0]], ["10.0.0.3", null]]);
  await put(sim, b, { ipv4: { vpc: "10.0.0.2" } });
  assert.deepEqual((await addresses())[1], ["10.0.0.2", null], "the old address is free again");
  await put(sim, a, { ipv4: { nat_1_1: null } });
  assert.equal((await addresses())[0]?.[1], linode?.ipv4[0], "null keeps nat_1_1");
  await put(sim, a, { ipv4: { nat_1_1: "" } });
  assert.equal((await addresses())[0]?.[1], null, "an empty string removes it");
  await put(sim, a, { ipv4: { nat_1_1: linode?.ipv4[0] } });
  assert.equal((await addresses())[0]?.[1], linode?.ipv4[0], "one of its own public addresses");
});

Deno.test("updateConfigInterface() on a public interface takes primary only; ranges may repeat across VPCs", async () => {
  const { sim, a, c, ids } = await world();
  await using _ = sim;
  const pub = await ids(a[0], "public");
  const refused = await failure(put(sim, pub, { ip_ranges: ["10.192.0.0/24"] }));
  assert.equal(refused.errors[0]?.field, "ip_ranges");
  await put(sim, a, { primary: true });
  const got = await withSim(sim, () => getConfigInterface(pub[0], pub[1], pub[2]));
  assert.deepEqual([got.primary, got.ipv4, got.ip_ranges, got.ipv6], [false, null, null, null]);
  await put(sim, pub, { primary: true, purpose: "public", vpc_id: null });
  assert.equal((await withSim(sim, () => getConfigInterface(a[0], a[1], a[2]))).primary, false);
  await put(sim, a, { ip_ranges: ["10.192.0.0/24"] });
  await put(sim, c, { ip_ranges: ["10.192.0.0/24"] });
  assert.deepEqual(sim.world.ipRanges(c[0]), ["10.192.0.0/24"], "another VPC may reuse a range");
});
