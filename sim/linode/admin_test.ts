import assert from "node:assert/strict";
import { getLinode, getLinodes, getVPC } from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { failure, withSim } from "./testdata/test_client.ts";

async function admin(origin: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${origin}/__admin/${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("/__admin/world shapes the world without a token", async () => {
  await using sim = await startLinodeSim();
  const vpc = await admin(sim.origin, "POST", "world/vpcs", {
    label: "adm",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.2.0.0/24" }],
  });
  assert.equal(vpc.status, 200);
  const subnetId = vpc.body.subnets[0].id;
  const one = await admin(sim.origin, "POST", "world/instances", {
    label: "adm-1",
    privateIp: true,
    tags: ["x"],
    vpc: { vpcId: vpc.body.id, subnetId, ipRanges: ["10.200.0.0/24"] },
  });
  assert.equal(one.status, 200);
  assert.equal((await withSim(sim, () => getLinode(one.body.id))).label, "adm-1");
  assert.equal((await withSim(sim, () => getVPC(vpc.body.id))).subnets[0]?.linodes[0]?.id, one.body.id);
  const modern = await admin(sim.origin, "POST", "world/instances", {
    label: "adm-2",
    interfaceGeneration: "linode",
    vpc: { vpcId: vpc.body.id, subnetId, ipRanges: ["10.2.0.128/28"] },
  });
  assert.equal(modern.body.interface_generation, "linode");
  assert.deepEqual(sim.world.ipRanges(modern.body.id), ["10.2.0.128/28"]);
  sim.world.deleteInstance(modern.body.id);
  const bulk = await admin(sim.origin, "POST", "world/instances", {
    count: 30,
    label: "bulk",
    region: "us-ord",
  });
  assert.equal(bulk.body.data.length, 30);
  assert.equal(bulk.body.data[29].label, "bulk-29");
  assert.equal((await withSim(sim, () => getLinodes({}, { region: "us-ord" }))).results, 30);
  const status = await admin(sim.origin, "PUT", `world/instances/${one.body.id}/status`, {
    status: "stopped",
  });
  assert.equal(status.body.status, "stopped");
  assert.equal(sim.world.instance(one.body.id)?.status, "stopped");
  assert.deepEqual((await admin(sim.origin, "GET", `world/instances/${one.body.id}/ip_ranges`)).body, {
    ip_ranges: ["10.200.0.0/24"],
  });
  assert.equal((await admin(sim.origin, "GET", `world/instances/${one.body.id}`)).body.label, "adm-1");
  assert.equal((await admin(sim.origin, "GET", "world/instances")).body.data.length, 31);
  assert.equal((await admin(sim.origin, "DELETE", `world/instances/${one.body.id}`)).status, 200);
  assert.equal((await admin(sim.origin, "GET", `world/instances/${one.body.id}`)).status, 404);
  assert.deepEqual((await admin(sim.origin, "GET", "world/nodebalancers")).body, { data: [] });
  assert.deepEqual((await admin(sim.origin, "GET", "world/firewalls")).body, { data: [] });
  await admin(sim.origin, "POST", "world/reset");
  assert.deepEqual(sim.world.listInstances(), []);
  assert.equal(sim.calls.count("POST /__admin/world/instances"), 0, "admin requests are not counted");
});

Deno.test("/__admin/world rejects bad input with field errors", async () => {
  await using sim = await startLinodeSim();
  const badStatus = await admin(sim.origin, "POST", "world/instances", { status: "melting" });
  assert.equal(badStatus.status, 400);
  assert.equal(badStatus.body.errors[0].field, "status");
  const badVpc = await admin(sim.origin, "POST", "world/instances", { vpc: { vpcId: 1 } });
  assert.deepEqual(badVpc.body.errors, [{ field: "vpc", reason: "vpcId and subnetId are required" }]);
  const wrongSubnet = await admin(sim.origin, "POST", "world/instances", { vpc: { vpcId: 1, subnetId: 2 } });
  assert.equal(wrongSubnet.status, 400);
  const badGeneration = await admin(sim.origin, "POST", "world/instances", { interfaceGeneration: "v2" });
  assert.equal(badGeneration.body.errors[0].field, "interfaceGeneration");
  const vpc = sim.world.createVpc({
    label: "x",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.3.0.0/24" }],
  });
  const outside = await admin(sim.origin, "POST", "world/instances", {
    interfaceGeneration: "linode",
    vpc: { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id, ipRanges: ["10.200.0.0/24"] },
  });
  assert.equal(outside.body.errors[0].field, "vpc.ipRanges[0]");
  assert.deepEqual(sim.world.listInstances(), [], "a refused seed leaves nothing behind");
  const next = sim.world.addInstance({ vpc: { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id ?? 0 } });
  assert.deepEqual(sim.world.vpcs.ips(vpc.id).map((e) => e.address), ["10.3.0.2"], "its address was freed");
  sim.world.deleteInstance(next.id);
  const badCidr = await admin(sim.origin, "POST", "world/vpcs", {
    label: "v",
    region: "r",
    subnets: [{ label: "s", ipv4: "8.8.8.0/24" }],
  });
  assert.equal(badCidr.body.errors[0].field, "subnets[0].ipv4");
  assert.equal((await admin(sim.origin, "GET", "nothing")).status, 404);
  assert.equal((await admin(sim.origin, "PUT", "calls")).status, 405);
  assert.equal((await admin(sim.origin, "POST", "world/instances", "[1]")).status, 400);
  assert.deepEqual(sim.world.listInstances(), []);
});

Deno.test("/__admin/faults programs and clears faults over HTTP", async () => {
  await using sim = await startLinodeSim();
  const added = await admin(sim.origin, "POST", "faults", {
    kind: "rateLimit",
    retryAfterSec: 3,
    route: "/linode/instances",
  });
  assert.match(added.body.id, /^f\d+$/);
  assert.equal((await failure(withSim(sim, () => getLinodes()))).retryAfter, "3");
  const listed = await admin(sim.origin, "GET", "faults");
  assert.equal(listed.body.data[0].hits, 1);
  assert.equal((await admin(sim.origin, "DELETE", `faults/${added.body.id}`)).status, 200);
  assert.equal((await admin(sim.origin, "DELETE", `faults/${added.body.id}`)).status, 404);
  assert.equal((await withSim(sim, () => getLinodes())).results, 0);
  for (const kind of ["latency", "error", "hang", "outage", "truncatePage", "slowPages"]) {
    assert.equal(
      (await admin(sim.origin, "POST", "faults", {
        kind,
        route: "/nowhere",
        ms: 1,
        durationMs: 60_000,
        msPerPage: 1,
      })).status,
      200,
      kind,
    );
  }
  assert.equal((await admin(sim.origin, "GET", "faults")).body.data.length, 6);
  assert.equal((await admin(sim.origin, "DELETE", "faults")).status, 200);
  assert.deepEqual(sim.faults.list(), []);
  const bad = await admin(sim.origin, "POST", "faults", { kind: "error", status: 418 });
  assert.deepEqual(bad, {
    status: 400,
    body: { errors: [{ field: "status", reason: "Must be 500, 502, 503 or 504" }] },
  });
  assert.equal((await admin(sim.origin, "POST", "faults", { kind: "boom" })).body.errors[0].field, "kind");
  assert.equal((await admin(sim.origin, "POST", "faults", { kind: "hang", probability: 3 })).status, 400);
});

Deno.test("calls counts every request by route template, also over /__admin/calls", async () => {
  await using sim = await startLinodeSim();
  const a = sim.world.addInstance();
  await withSim(sim, () => getLinode(a.id));
  await withSim(sim, () => getLinode(a.id));
  await failure(withSim(sim, () => getLinode(12345)));
  await fetch(`${sim.url}/linode/instances/${a.id}/configs/77/interfaces/88`, { method: "PUT", body: "{}" })
    .then((r) => r.body?.cancel());
  await fetch(`${sim.origin}/v4/unknown/7`).then((r) => r.body?.cancel());
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}"), 3);
  assert.equal(sim.calls.count("PUT /v4/linode/instances/{id}/configs/{id}/interfaces/{id}"), 1);
  assert.equal(sim.calls.count("GET /v4/unknown/{id}"), 1);
  assert.equal(sim.calls.total(), 5);
  assert.deepEqual(sim.calls.log.map((c) => c.status), [200, 200, 404, 401, 401]);
  const snap = await admin(sim.origin, "GET", "calls");
  assert.deepEqual(snap.body.counts, sim.calls.snapshot().counts);
  assert.equal(snap.body.total, 5);
  assert.equal(snap.body.log.length, 5);
  await admin(sim.origin, "DELETE", "calls");
  assert.equal(sim.calls.total(), 0);
  assert.deepEqual(sim.calls.snapshot(), { total: 0, counts: {} });
});
