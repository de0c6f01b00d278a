import assert from "node:assert/strict";
import { startLinodeSim } from "./server.ts";
import { apiFetch, oneSubnetVpc } from "./testdata/test_client.ts";

Deno.test("the NodeBalancer VPC and reserved IP routes are counted by route template", async () => {
  await using sim = await startLinodeSim();
  const { subnetId } = oneSubnetVpc(sim);
  const ip = (await apiFetch(sim, "POST", "/networking/reserved/ips", JSON.stringify({ region: "us-east" })))
    .body as {
      address: string;
    };
  const nb = sim.world.addNodeBalancer({
    label: "svc-t",
    region: "us-east",
    vpcs: [{ subnet_id: subnetId }],
  });
  const vpcId = nb.vpcs[0]?.id;
  const requests: [string, string, string][] = [
    ["GET", `/nodebalancers/${nb.id}/vpcs`, "GET /v4/nodebalancers/{id}/vpcs"],
    ["GET", `/nodebalancers/${nb.id}/vpcs/${vpcId}`, "GET /v4/nodebalancers/{id}/vpcs/{id}"],
    ["GET", `/nodebalancers/${nb.id}/backend_vpcs`, "GET /v4/nodebalancers/{id}/backend_vpcs"],
    ["GET", `/nodebalancers/${nb.id}/frontend_vpcs`, "GET /v4/nodebalancers/{id}/frontend_vpcs"],
    ["GET", "/networking/reserved/ips", "GET /v4/networking/reserved/ips"],
    ["GET", `/networking/reserved/ips/${ip.address}`, "GET /v4/networking/reserved/ips/{address}"],
    ["PUT", `/networking/reserved/ips/${ip.address}`, "PUT /v4/networking/reserved/ips/{address}"],
    ["GET", "/networking/reserved/ips/2600:3c03::1", "GET /v4/networking/reserved/ips/{address}"],
    ["DELETE", `/networking/reserved/ips/${ip.address}`, "DELETE /v4/networking/reserved/ips/{address}"],
  ];
  for (const [method, path, key] of requests) {
    const before = sim.calls.count(key);
    await apiFetch(sim, method, path, method === "PUT" ? JSON.stringify({ tags: ["abc"] }) : undefined);
    assert.equal(sim.calls.count(key), before + 1, key);
  }
  assert.equal(sim.calls.count("POST /v4/networking/reserved/ips"), 1);
  assert.equal(sim.calls.count("GET /v4/networking/reserved/ips/{address}"), 2);
});

Deno.test("faults match the new routes by template: reserved IPs, NodeBalancer VPCs and configs", async () => {
  await using sim = await startLinodeSim();
  const ip = (await apiFetch(sim, "POST", "/networking/reserved/ips", JSON.stringify({ region: "us-east" })))
    .body as {
      address: string;
    };
  sim.faults.error(503, { method: "GET", route: "/networking/reserved/ips/{address}", count: 1 });
  sim.faults.rateLimit(7, { route: "/v4/nodebalancers/{id}/vpcs", count: 1 });
  const nb = sim.world.addNodeBalancer({ label: "svc-f", region: "us-east" });
  assert.equal((await apiFetch(sim, "GET", `/networking/reserved/ips/${ip.address}`)).status, 503);
  assert.equal((await apiFetch(sim, "GET", `/networking/reserved/ips/${ip.address}`)).status, 200);
  const limited = await apiFetch(sim, "GET", `/nodebalancers/${nb.id}/vpcs`);
  assert.deepEqual([limited.status, limited.headers.get("retry-after")], [429, "7"]);
  assert.equal((await apiFetch(sim, "GET", `/nodebalancers/${nb.id}/vpcs`)).status, 200);
  assert.deepEqual(sim.faults.list(), [], "count-limited rules are gone once used");
});
