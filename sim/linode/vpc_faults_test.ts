import assert from "node:assert/strict";
import { getLinodeInterfaces, getVPCIPs, getVPCsIPs } from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, settled, waitFor, withSim } from "./testdata/test_client.ts";

async function world() {
  const sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "v",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/8" }],
  });
  const at = { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id ?? 0 };
  const fresh = sim.world.addInstance({ label: "fresh", interfaceGeneration: "linode", vpc: at });
  const iface = sim.world.linodeInterfaces(fresh.id).find((i) => i.vpc)?.id ?? 0;
  sim.world.addInstances(30, (i) => ({ label: `old-${i}`, vpc: at }));
  const put = (range: string) =>
    withSim(sim, () =>
      rawCall("PUT", `/linode/instances/${fresh.id}/interfaces/${iface}`, {
        vpc: { subnet_id: at.subnetId, ipv4: { ranges: [{ range }] } },
      }));
  return { sim, vpc, fresh, iface, put };
}

Deno.test("Linode interface routes are fault-injectable by template; a faulted write changes nothing", async () => {
  const { sim, fresh, iface, put } = await world();
  await using _ = sim;
  sim.faults.error(503, { method: "PUT", route: "/linode/instances/{id}/interfaces/{id}", count: 1 });
  assert.equal((await failure(put("10.192.0.0/24"))).status, 503);
  assert.deepEqual(sim.world.ipRanges(fresh.id), []);
  await put("10.192.0.0/24");
  assert.deepEqual(sim.world.ipRanges(fresh.id), ["10.192.0.0/24"]);
  sim.faults.rateLimit(9, { route: "/linode/instances/{id}/interfaces*", count: 1 });
  assert.deepEqual(await failure(withSim(sim, () => getLinodeInterfaces(fresh.id))), {
    status: 429,
    errors: [{ reason: "Too Many Requests" }],
    retryAfter: "9",
  });
  const hang = sim.faults.hang({ method: "PUT", route: "/v4/linode/instances/{id}/interfaces/{id}" });
  const pending = put("10.192.1.0/24");
  const done = settled(pending);
  await waitFor(() => sim.faults.hungCount === 1);
  assert.equal(done(), false);
  sim.faults.remove(hang);
  await pending;
  assert.deepEqual(sim.world.ipRanges(fresh.id), ["10.192.1.0/24"]);
  assert.equal(sim.calls.count("PUT /v4/linode/instances/{id}/interfaces/{id}"), 3);
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}/interfaces"), 1);
  assert.deepEqual(sim.calls.log.filter((c) => c.method === "PUT").map((c) => [c.status, c.fault]), [
    [503, "error"],
    [200, undefined],
    [200, undefined],
  ]);
  await withSim(sim, () => rawCall("GET", `/linode/instances/${fresh.id}/interfaces/${iface}`));
  await withSim(sim, () => rawCall("GET", `/linode/instances/${fresh.id}/interfaces/settings`));
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}/interfaces/{id}"), 1);
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}/interfaces/settings"), 1);
});

Deno.test("VPC IP listings are fault-injectable: errors and truncated pages", async () => {
  const { sim, vpc } = await world();
  await using _ = sim;
  sim.faults.error(502, { route: "/vpcs/{id}/ips", count: 1 });
  assert.equal((await failure(withSim(sim, () => getVPCIPs(vpc.id)))).status, 502);
  assert.equal((await withSim(sim, () => getVPCsIPs())).results, 31, "/vpcs/ips is another template");
  sim.faults.truncatePage({ route: "/vpcs/{id}/ips", count: 1 }, 5);
  const cut = await withSim(sim, () => getVPCIPs(vpc.id, { page_size: 25 }));
  assert.equal(cut.data.length, 5);
  assert.equal((await withSim(sim, () => getVPCIPs(vpc.id, { page_size: 25 }))).data.length, 25);
  assert.equal(sim.calls.count("GET /v4/vpcs/{id}/ips"), 3);
  assert.equal(sim.calls.count("GET /v4/vpcs/ips"), 1);
});
