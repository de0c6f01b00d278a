import assert from "node:assert/strict";
import {
  getConfigInterfaces,
  getLinode,
  getLinodeConfigs,
  getLinodeInterface,
  getLinodeInterfaces,
  getLinodeInterfacesSettings,
  getLinodeIPs,
  getSubnet,
  getVPCIPs,
  updateLinodeInterface,
} from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./testdata/test_client.ts";

/** The CAPL layout: one subnet 10.0.0.0/8 (plus `spare` in 172.16.0.0/24); a and b use Linode interfaces. */
async function world() {
  const sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "capl",
    region: "us-east",
    subnets: [{ label: "nodes", ipv4: "10.0.0.0/8" }, { label: "spare", ipv4: "172.16.0.0/24" }],
  });
  const [nodes, spare] = vpc.subnets;
  assert.ok(nodes && spare);
  const at = { vpcId: vpc.id, subnetId: nodes.id };
  const a = sim.world.addInstance({ label: "a", interfaceGeneration: "linode", vpc: at });
  const b = sim.world.addInstance({
    label: "b",
    interfaceGeneration: "linode",
    vpc: { ...at, nat1to1: true },
  });
  const vpcIface = (linodeId: number) => sim.world.linodeInterfaces(linodeId).find((i) => i.vpc)?.id ?? 0;
  return { sim, vpc, nodes, spare, a, b, vpcIface };
}

function put(sim: LinodeSim, linodeId: number, ifaceId: number, body: unknown) {
  return withSim(sim, () => rawCall("PUT", `/linode/instances/${linodeId}/interfaces/${ifaceId}`, body));
}

Deno.test("a Linode with interface_generation linode has public and VPC Linode interfaces in the API's shape", async () => {
  const { sim, vpc, nodes, a, b, vpcIface } = await world();
  await using _ = sim;
  assert.equal((await withSim(sim, () => getLinode(a.id))).interface_generation, "linode");
  const { interfaces } = await withSim(sim, () => getLinodeInterfaces(a.id));
  const [pub, inVpc] = interfaces;
  assert.ok(pub && inVpc && interfaces.length === 2);
  assert.deepEqual(pub.default_route, { ipv4: true, ipv6: true });
  assert.deepEqual(pub.public?.ipv4.addresses, [{ address: a.ipv4[0], primary: true }]);
  assert.deepEqual([pub.vpc, pub.vlan, inVpc.public, inVpc.vlan], [null, null, null, null]);
  assert.deepEqual(inVpc.default_route, {});
  assert.deepEqual(inVpc.vpc, {
    vpc_id: vpc.id,
    subnet_id: nodes.id,
    ipv4: { addresses: [{ address: "10.0.0.2", primary: true, nat_1_1_address: null }], ranges: [] },
  });
  assert.match(inVpc.mac_address, /^22:00(:[0-9A-F]{2}){4}$/);
  assert.equal(inVpc.version, 1);
  assert.deepEqual(await withSim(sim, () => getLinodeInterface(a.id, inVpc.id)), inVpc);
  const natB = sim.world.linodeInterfaces(b.id).find((i) => i.vpc)?.vpc?.ipv4.addresses[0]?.nat_1_1_address;
  assert.equal(natB, b.ipv4[0]);
  const entries = (await withSim(sim, () => getVPCIPs(vpc.id, {}, { linode_id: a.id }))).data;
  assert.deepEqual(entries.map((e) => [e.address, e.config_id, e.interface_id]), [[
    "10.0.0.2",
    null,
    inVpc.id,
  ]]);
  const subnet = await withSim(sim, () => getSubnet(vpc.id, nodes.id));
  assert.deepEqual(subnet.linodes[0], {
    id: a.id,
    interfaces: [{ id: vpcIface(a.id), active: true, config_id: null }],
  });
  const ips = await withSim(sim, () => getLinodeIPs(a.id));
  assert.equal(ips.ipv4.public[0]?.interface_id, pub.id);
  assert.equal(ips.ipv4.vpc[0]?.config_id, null);
  assert.deepEqual((await withSim(sim, () => getLinodeConfigs(a.id))).data[0]?.interfaces, []);
  const settings = await withSim(sim, () => getLinodeInterfacesSettings(a.id));
  assert.deepEqual(settings.default_route, {
    ipv4_interface_id: pub.id,
    ipv4_eligible_interface_ids: [pub.id, inVpc.id],
    ipv6_interface_id: pub.id,
    ipv6_eligible_interface_ids: [pub.id],
  });
});

Deno.test("updateLinodeInterface() replaces vpc.ipv4.ranges on a running Linode and the listing shows them at once", async () => {
  const { sim, vpc, nodes, a, b, vpcIface } = await world();
  await using _ = sim;
  const ranges = (r: string[]) => ({
    subnet_id: nodes.id,
    ipv4: { ranges: r.map((range) => ({ range })) },
  });
  const got = await withSim(
    sim,
    () => updateLinodeInterface(a.id, vpcIface(a.id), { vpc: ranges(["10.192.0.0/24"]), vlan: null }),
  );
  assert.deepEqual(got.vpc?.ipv4?.ranges, [{ range: "10.192.0.0/24" }]);
  assert.equal(got.version, 2);
  const listed = async () =>
    (await withSim(sim, () => getVPCIPs(vpc.id))).data.filter((e) => e.address_range).map((e) => [
      e.linode_id,
      e.address_range,
      e.config_id,
    ]);
  assert.deepEqual(await listed(), [[a.id, "10.192.0.0/24", null]]);
  await put(sim, b.id, vpcIface(b.id), { vpc: ranges(["10.192.1.0/24", "/28"]) });
  assert.deepEqual(
    sim.world.ipRanges(b.id),
    ["10.192.1.0/24", "10.0.0.16/28"],
    "a size takes the first free block",
  );
  await put(sim, a.id, vpcIface(a.id), { vpc: { subnet_id: nodes.id, ipv4: { ranges: null } } });
  await put(sim, a.id, vpcIface(a.id), { vpc: { subnet_id: nodes.id }, default_route: { ipv4: true } });
  assert.deepEqual(sim.world.ipRanges(a.id), ["10.192.0.0/24"], "null and omitted ranges are kept");
  assert.deepEqual(sim.world.linodeInterfaces(a.id).map((i) => i.default_route), [{ ipv6: true }, {
    ipv4: true,
  }]);
  await put(sim, a.id, vpcIface(a.id), { vpc: ranges([]) });
  assert.deepEqual(await listed(), [[b.id, "10.192.1.0/24", null], [b.id, "10.0.0.16/28", null]]);
  assert.equal(sim.calls.count("PUT /v4/linode/instances/{id}/interfaces/{id}"), 5);
});

const REFUSED: [name: string, vpc: unknown, field: string, reason: RegExp][] = [
  ["no subnet_id", { ipv4: { ranges: [] } }, "vpc.subnet_id", /required/],
  [
    "outside the subnet",
    { ipv4: { ranges: [{ range: "192.168.0.0/24" }] } },
    "vpc.ipv4.ranges[0].range",
    /not within/,
  ],
  [
    "another subnet",
    { ipv4: { ranges: [{ range: "172.16.0.16/28" }] } },
    "vpc.ipv4.ranges[0].range",
    /not within/,
  ],
  ["the gateway", { ipv4: { ranges: [{ range: "10.0.0.0/30" }] } }, "vpc.ipv4.ranges[0].range", /first two/],
  [
    "its own address",
    { ipv4: { ranges: [{ range: "10.0.0.2/32" }] } },
    "vpc.ipv4.ranges[0].range",
    /includes 10\.0\.0\.2/,
  ],
  [
    "b's range",
    { ipv4: { ranges: [{ range: "10.193.0.0/16" }] } },
    "vpc.ipv4.ranges[0].range",
    /already routed/,
  ],
  ["IPv6", { ipv4: { ranges: [{ range: "fd00::/64" }] } }, "vpc.ipv4.ranges[0].range", /IPv6/],
  ["a bad size", { ipv4: { ranges: [{ range: "/7" }] } }, "vpc.ipv4.ranges[0].range", /No free \/7/],
  ["not objects", { ipv4: { ranges: ["10.192.9.0/24"] } }, "vpc.ipv4.ranges[0]", /object/],
  ["not an array", { ipv4: { ranges: "10.192.9.0/24" } }, "vpc.ipv4.ranges", /array/],
  [
    "a new address while running",
    { ipv4: { addresses: [{ address: "10.0.0.9" }] } },
    "vpc.ipv4.addresses",
    /Shut/,
  ],
];

Deno.test("updateLinodeInterface() refuses what the API refuses with 400 and the field, changing nothing", async () => {
  const { sim, vpc, nodes, a, b, vpcIface } = await world();
  await using _ = sim;
  sim.world.setIpRanges(a.id, ["10.192.0.0/24"]);
  sim.world.setIpRanges(b.id, ["10.193.0.0/24"]);
  const before = await withSim(sim, () => getVPCIPs(vpc.id));
  const iface = vpcIface(a.id);
  for (const [name, body, field, reason] of REFUSED) {
    const withSubnet = name === "no subnet_id" ? body : { subnet_id: nodes.id, ...(body as object) };
    const got = await failure(put(sim, a.id, iface, { vpc: withSubnet }));
    assert.deepEqual([got.status, got.errors.length, got.errors[0]?.field], [400, 1, field], name);
    assert.match(got.errors[0]?.reason ?? "", reason, `${name}: ${got.errors[0]?.reason}`);
  }
  const typeChange = await failure(put(sim, a.id, iface, { public: { ipv4: { addresses: [] } } }));
  assert.equal(typeChange.errors[0]?.field, "public");
  const v6Route = await failure(put(sim, a.id, iface, { default_route: { ipv6: true } }));
  assert.equal(v6Route.errors[0]?.field, "default_route.ipv6");
  assert.deepEqual(await withSim(sim, () => getVPCIPs(vpc.id)), before);
  assert.equal(sim.world.linodeInterfaces(a.id).find((i) => i.vpc)?.version, 2, "only setIpRanges counted");
});

Deno.test("each interface generation refuses the other's endpoints", async () => {
  const { sim, vpc, nodes, a } = await world();
  await using _ = sim;
  const legacy = sim.world.addInstance({ label: "old", vpc: { vpcId: vpc.id, subnetId: nodes.id } });
  const refused = await failure(withSim(sim, () => getLinodeInterfaces(legacy.id)));
  assert.equal(refused.status, 400);
  assert.match(refused.errors[0]?.reason ?? "", /legacy config interfaces/);
  assert.equal((await failure(put(sim, legacy.id, 1, { vpc: { subnet_id: nodes.id } }))).status, 400);
  const config = (await withSim(sim, () => getLinodeConfigs(a.id))).data[0];
  assert.ok(config);
  assert.deepEqual(await withSim(sim, () => getConfigInterfaces(a.id, config.id)), []);
  const path = `/linode/instances/${a.id}/configs/${config.id}/interfaces/1`;
  const wrong = await failure(withSim(sim, () => rawCall("PUT", path, { ip_ranges: [] })));
  assert.deepEqual(wrong, {
    status: 400,
    errors: [{
      field: "interfaces",
      reason: "Option cannot be set on a Linode that is configured to use Linode Interfaces",
    }],
  });
  assert.equal((await failure(withSim(sim, () => getLinodeInterface(a.id, 1)))).status, 404);
});

Deno.test("createLinodeInterface() and deleteLinodeInterface() need the Linode off, keep the limits, and move subnets", async () => {
  const { sim, vpc, nodes, spare, a, vpcIface } = await world();
  await using _ = sim;
  const base = `/linode/instances/${a.id}/interfaces`;
  const call = (method: "POST" | "DELETE" | "PUT", path: string, body?: unknown) =>
    withSim(sim, () => rawCall(method, path, body));
  const vlan = { vlan: { vlan_label: "backend", ipam_address: "192.168.5.2/24" } };
  assert.match((await failure(call("POST", base, vlan))).errors[0]?.reason ?? "", /powered off/);
  sim.world.setStatus(a.id, "offline");
  await call("DELETE", `${base}/${vpcIface(a.id)}`);
  assert.deepEqual((await withSim(sim, () => getVPCIPs(vpc.id, {}, { linode_id: a.id }))).data, []);
  const created = await call("POST", base, {
    vpc: { subnet_id: nodes.id, ipv4: { addresses: [{ address: "10.0.0.9" }], ranges: [{ range: "/30" }] } },
  });
  assert.deepEqual((created as { vpc: unknown }).vpc, {
    vpc_id: vpc.id,
    subnet_id: nodes.id,
    ipv4: {
      addresses: [{ address: "10.0.0.9", primary: true, nat_1_1_address: null }],
      ranges: [{ range: "10.0.0.4/30" }],
    },
  });
  assert.match(
    (await failure(call("POST", base, { vpc: { subnet_id: nodes.id } }))).errors[0]?.reason ?? "",
    /Only one vpc/,
  );
  assert.match(
    (await failure(call("POST", base, { vlan: vlan.vlan, vpc: null, public: {} }))).errors[0]?.reason ?? "",
    /exactly one/,
  );
  await call("POST", base, vlan);
  assert.match(
    (await failure(call("POST", base, { vlan: { vlan_label: "x" } }))).errors[0]?.reason ?? "",
    /three/,
  );
  await call("PUT", `${base}/${vpcIface(a.id)}`, { vpc: { subnet_id: spare.id } });
  const moved = sim.world.linodeInterfaces(a.id).find((i) => i.vpc)?.vpc;
  assert.deepEqual([moved?.subnet_id, moved?.ipv4.addresses[0]?.address, moved?.ipv4.ranges], [
    spare.id,
    "172.16.0.2",
    [],
  ]);
  const listed = (await withSim(sim, () => getVPCIPs(vpc.id, {}, { linode_id: a.id }))).data;
  assert.deepEqual(listed.map((e) => [e.subnet_id, e.address, e.active]), [[spare.id, "172.16.0.2", false]]);
});
