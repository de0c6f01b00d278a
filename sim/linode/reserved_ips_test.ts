import assert from "node:assert/strict";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./testdata/test_client.ts";

type ReservedIp = {
  address: string;
  region: string;
  tags: string[];
  assigned_entity: unknown;
  [k: string]: unknown;
};

function reserve(sim: LinodeSim, body: unknown) {
  return withSim(sim, () => rawCall("POST", "/networking/reserved/ips", body)) as Promise<ReservedIp>;
}

function get(sim: LinodeSim, address: string) {
  return withSim(sim, () => rawCall("GET", `/networking/reserved/ips/${address}`)) as Promise<ReservedIp>;
}

Deno.test("/networking/reserved/ips reserves, lists, retags and releases addresses in the API's shape", async () => {
  await using sim = await startLinodeSim();
  const ip = await reserve(sim, { region: "us-east", tags: ["lb"] });
  assert.match(ip.address, /^172\.236\.\d+\.\d+$/);
  assert.deepEqual({ ...ip, address: "x", gateway: "y" }, {
    address: "x",
    gateway: "y",
    subnet_mask: "255.255.255.0",
    prefix: 24,
    type: "ipv4",
    public: true,
    rdns: null,
    linode_id: null,
    interface_id: null,
    region: "us-east",
    vpc_nat_1_1: null,
    reserved: true,
    assigned_entity: null,
    tags: ["lb"],
  });
  await reserve(sim, { region: "us-ord" });
  const list = await withSim(sim, () => rawCall("GET", "/networking/reserved/ips")) as {
    data: ReservedIp[];
    results: number;
  };
  assert.equal(list.results, 2);
  assert.deepEqual(await get(sim, ip.address), ip);
  const retagged = await withSim(
    sim,
    () => rawCall("PUT", `/networking/reserved/ips/${ip.address}`, { tags: ["a-b"] }),
  );
  assert.deepEqual((retagged as ReservedIp).tags, ["a-b"]);
  await withSim(sim, () => rawCall("DELETE", `/networking/reserved/ips/${ip.address}`));
  assert.deepEqual(await failure(get(sim, ip.address)), { status: 404, errors: [{ reason: "Not found" }] });
  assert.equal((await failure(get(sim, "999.999.999.999"))).status, 404);
  assert.equal(
    (await failure(withSim(sim, () => rawCall("DELETE", "/networking/reserved/ips/203.0.113.4")))).status,
    404,
  );
  assert.equal(sim.calls.count("GET /v4/networking/reserved/ips/{address}"), 3);
  assert.equal(sim.calls.count("DELETE /v4/networking/reserved/ips/{address}"), 2);
});

Deno.test("/networking/reserved/ips refuses an invalid region and more addresses than the account limit", async () => {
  await using sim = await startLinodeSim();
  for (const region of ["", "us", undefined]) {
    const got = await failure(reserve(sim, region === undefined ? {} : { region }));
    assert.equal(got.errors[0]?.field, "region", String(region));
  }
  assert.deepEqual((await failure(reserve(sim, { region: "mars" }))).errors, [{
    field: "region",
    reason: "region is not valid",
  }]);
  sim.world.reservedIps.limit = 2;
  await reserve(sim, { region: "us-east" });
  await reserve(sim, { region: "us-east" });
  const over = await failure(reserve(sim, { region: "us-east" }));
  assert.equal(over.status, 400);
  assert.match(over.errors[0]?.reason ?? "", /require technical justification/);
});

Deno.test("createNodeBalancer() with ipv4 takes an unassigned reserved address of its region and frees it on delete", async () => {
  await using sim = await startLinodeSim();
  const ip = await reserve(sim, { region: "us-east" });
  const west = await reserve(sim, { region: "us-west" });
  const create = (body: Record<string, unknown>) =>
    withSim(sim, () => rawCall("POST", "/nodebalancers", { region: "us-east", ...body })) as Promise<
      { id: number; ipv4: string; hostname: string }
    >;
  const nb = await create({ label: "svc-r", ipv4: ip.address });
  assert.equal(nb.ipv4, ip.address);
  assert.equal(nb.hostname, `nb-${ip.address.replaceAll(".", "-")}.newark.nodebalancer.linode.com`);
  assert.deepEqual((await get(sim, ip.address)).assigned_entity, {
    id: nb.id,
    label: "svc-r",
    type: "nodebalancer",
    url: `/v4/nodebalancers/${nb.id}`,
  });
  // The two without a field as the Go CCM's end-to-end tests saw the API answer them.
  const cases: [unknown, { field?: string; reason: string }][] = [
    [ip.address, { field: "ipv4", reason: "Address must be currently unassigned." }],
    ["203.0.113.9", { reason: "IPv4 address is not reserved" }],
    ["", { reason: "Invalid IPv4 address" }],
    ["999.1.1.1", { reason: "Invalid IPv4 address" }],
    [[ip.address], { reason: "Invalid IPv4 address" }],
    [west.address, { field: "ipv4", reason: "Reserved IP must be in the same region as the resource" }],
  ];
  for (const [ipv4, error] of cases) {
    const got = await failure(create({ label: "svc-x", ipv4 }));
    assert.deepEqual(got, { status: 400, errors: [error] }, JSON.stringify(ipv4));
  }
  await withSim(sim, () => rawCall("PUT", `/nodebalancers/${nb.id}`, { label: "svc-r2" }));
  assert.deepEqual((await get(sim, ip.address)).assigned_entity, {
    id: nb.id,
    label: "svc-r2",
    type: "nodebalancer",
    url: `/v4/nodebalancers/${nb.id}`,
  });
  await withSim(sim, () => rawCall("DELETE", `/nodebalancers/${nb.id}`));
  const freed = await get(sim, ip.address);
  assert.deepEqual([freed.reserved, freed.assigned_entity], [true, null], "the address stays reserved");
  const again = await create({ label: "svc-r3", ipv4: ip.address });
  assert.equal(again.ipv4, ip.address, "a freed reserved address can front a new NodeBalancer");
});
