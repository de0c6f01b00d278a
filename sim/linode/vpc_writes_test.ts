import assert from "node:assert/strict";
import { getLinodeConfigs, getLinodeIPs, getVPCIPs, getVPCsIPs } from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { rawCall, withSim } from "./testdata/test_client.ts";

type Row = [linodeId: number | null, address: string | null, range: string | null, active: boolean];

/** What each VPC view says right now; all three must agree. */
async function views(sim: LinodeSim, vpcId: number, linodeIds: number[]): Promise<Row[]> {
  const row = (
    e: { linode_id: number | null; address: string | null; address_range: string | null; active: boolean },
  ) => [e.linode_id, e.address, e.address_range, e.active] as Row;
  const one = (await withSim(sim, () => getVPCIPs(vpcId))).data.map(row);
  const all = (await withSim(sim, () => getVPCsIPs({}, { vpc_id: vpcId }))).data.map(row);
  const perLinode: Row[] = [];
  for (const id of linodeIds) {
    perLinode.push(...(await withSim(sim, () => getLinodeIPs(id))).ipv4.vpc.map(row));
  }
  assert.deepEqual(all, one, "GET /vpcs/ips agrees with GET /vpcs/{id}/ips");
  assert.deepEqual(perLinode, one, "GET /linode/instances/{id}/ips agrees with GET /vpcs/{id}/ips");
  return one;
}

Deno.test("every write shows in the VPC listings at once, for both interface generations", async () => {
  await using sim = await startLinodeSim();
  const vpc = sim.world.createVpc({
    label: "v",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/8" }],
  });
  const at = { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id ?? 0 };
  const a = sim.world.addInstance({ label: "a", vpc: at });
  const b = sim.world.addInstance({ label: "b", interfaceGeneration: "linode", vpc: at });
  const config = (await withSim(sim, () => getLinodeConfigs(a.id))).data[0];
  const aIface = config?.interfaces?.find((i) => i.purpose === "vpc")?.id;
  const bIface = sim.world.linodeInterfaces(b.id).find((i) => i.vpc)?.id;
  const putA = (body: unknown) =>
    withSim(
      sim,
      () => rawCall("PUT", `/linode/instances/${a.id}/configs/${config?.id}/interfaces/${aIface}`, body),
    );
  const bPath = `/linode/instances/${b.id}/interfaces`;
  const call = (method: "PUT" | "POST" | "DELETE", path: string, body?: unknown) =>
    withSim(sim, () => rawCall(method, path, body));
  const ids = [a.id, b.id];
  assert.deepEqual(await views(sim, vpc.id, ids), [[a.id, "10.0.0.2", null, true], [
    b.id,
    "10.0.0.3",
    null,
    true,
  ]]);
  await putA({ ip_ranges: ["10.192.0.0/24"], ipv4: { vpc: "10.0.0.7" } });
  await call("PUT", `${bPath}/${bIface}`, {
    vpc: { subnet_id: at.subnetId, ipv4: { ranges: [{ range: "10.192.1.0/24" }] } },
  });
  assert.deepEqual(await views(sim, vpc.id, ids), [
    [a.id, "10.0.0.7", null, true],
    [a.id, null, "10.192.0.0/24", true],
    [b.id, "10.0.0.3", null, true],
    [b.id, null, "10.192.1.0/24", true],
  ]);
  sim.world.setStatus(b.id, "offline");
  await call("DELETE", `${bPath}/${bIface}`);
  assert.deepEqual(await views(sim, vpc.id, ids), [[a.id, "10.0.0.7", null, true], [
    a.id,
    null,
    "10.192.0.0/24",
    true,
  ]]);
  await call("POST", bPath, {
    vpc: { subnet_id: at.subnetId, ipv4: { ranges: [{ range: "10.192.1.0/24" }] } },
  });
  await putA({ ip_ranges: [] });
  sim.world.setStatus(a.id, "offline");
  assert.deepEqual(await views(sim, vpc.id, ids), [
    [a.id, "10.0.0.7", null, false],
    [b.id, "10.0.0.2", null, false],
    [b.id, null, "10.192.1.0/24", false],
  ]);
  sim.world.deleteInstance(a.id);
  assert.deepEqual(await views(sim, vpc.id, [b.id]), [[b.id, "10.0.0.2", null, false], [
    b.id,
    null,
    "10.192.1.0/24",
    false,
  ]]);
});
