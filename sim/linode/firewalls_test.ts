import assert from "node:assert/strict";
import {
  addFirewallDevice,
  createFirewall,
  createNodeBalancer,
  deleteFirewall,
  deleteFirewallDevice,
  disableFirewall,
  getFirewall,
  getFirewallDevice,
  getFirewallDevices,
  getFirewallRules,
  getFirewalls,
  getLinodeFirewalls,
  getNodeBalancerFirewalls,
  updateFirewall,
  updateFirewallRules,
} from "@linode/api-v4";
import type { FirewallRules } from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./test_client.ts";

const RULES = {
  inbound_policy: "DROP" as const,
  outbound_policy: "ACCEPT" as const,
  inbound: [{
    action: "ACCEPT" as const,
    protocol: "TCP" as const,
    ports: "80,443",
    addresses: { ipv4: ["0.0.0.0/0"] },
  }],
  outbound: [],
};

Deno.test("createFirewall() and friends manage firewalls, rules and versions", async () => {
  await using sim = await startLinodeSim();
  const fw = await withSim(sim, () => createFirewall({ label: "ccm-fw", rules: RULES, tags: ["k8s"] }));
  assert.equal(fw.status, "enabled");
  assert.equal(fw.rules.version, 1);
  assert.equal(fw.rules.inbound?.[0]?.ports, "80,443");
  assert.deepEqual((await withSim(sim, () => getFirewalls({}, { tags: "k8s" }))).data.map((f) => f.id), [
    fw.id,
  ]);
  assert.equal((await withSim(sim, () => getFirewall(fw.id))).label, "ccm-fw");
  // The API answers GET rules with the rules object itself (api-v4 types it as a page).
  const rules = (await withSim(sim, () => getFirewallRules(fw.id))) as unknown as FirewallRules;
  assert.equal(rules.inbound_policy, "DROP");
  const next = await withSim(
    sim,
    () => updateFirewallRules(fw.id, { ...RULES, inbound_policy: "ACCEPT", inbound: [] }),
  );
  assert.equal(next.version, 2);
  assert.notEqual(next.fingerprint, rules.fingerprint);
  assert.equal((await withSim(sim, () => disableFirewall(fw.id))).status, "disabled");
  assert.equal((await withSim(sim, () => updateFirewall(fw.id, { label: "ccm-fw-2" }))).label, "ccm-fw-2");
  const dup = await failure(
    withSim(sim, () => rawCall("POST", "/networking/firewalls", { label: "ccm-fw-2", rules: RULES })),
  );
  assert.deepEqual(dup, { status: 400, errors: [{ field: "label", reason: "Label must be unique" }] });
  const badRule = await failure(
    withSim(sim, () =>
      rawCall("POST", "/networking/firewalls", {
        label: "other",
        rules: { ...RULES, inbound: [{ protocol: "XYZ" }] },
      })),
  );
  assert.equal(badRule.errors[0]?.field, "rules.inbound[0].protocol");
  await withSim(sim, () => deleteFirewall(fw.id));
  assert.equal((await failure(withSim(sim, () => getFirewall(fw.id)))).status, 404);
});

Deno.test("addFirewallDevice() attaches Linodes and NodeBalancers and lists them both ways", async () => {
  await using sim = await startLinodeSim();
  const linode = sim.world.addInstance({ label: "node-1" });
  const nb = await withSim(sim, () => createNodeBalancer({ label: "svc-a", region: "us-east", configs: [] }));
  const fw = await withSim(
    sim,
    () => createFirewall({ label: "fw-a", rules: RULES, devices: { linodes: [linode.id] } }),
  );
  assert.deepEqual(fw.entities.map((e) => [e.type, e.id, e.label]), [["linode", linode.id, "node-1"]]);
  const device = await withSim(sim, () => addFirewallDevice(fw.id, { id: nb.id, type: "nodebalancer" }));
  assert.deepEqual(device.entity, {
    id: nb.id,
    type: "nodebalancer",
    label: "svc-a",
    url: `/v4/nodebalancers/${nb.id}`,
    parent_entity: null,
  });
  assert.deepEqual(await withSim(sim, () => getFirewallDevice(fw.id, device.id)), device);
  assert.equal((await withSim(sim, () => getFirewallDevices(fw.id))).results, 2);
  assert.deepEqual((await withSim(sim, () => getNodeBalancerFirewalls(nb.id))).data.map((f) => f.id), [
    fw.id,
  ]);
  assert.deepEqual((await withSim(sim, () => getLinodeFirewalls(linode.id))).data.map((f) => f.id), [fw.id]);
  const again = await failure(
    withSim(sim, () => addFirewallDevice(fw.id, { id: nb.id, type: "nodebalancer" })),
  );
  assert.equal(again.errors[0]?.field, "id");
  const missing = await failure(withSim(sim, () => addFirewallDevice(fw.id, { id: 42, type: "linode" })));
  assert.deepEqual(missing.errors, [{ field: "id", reason: "linode 42 not found" }]);
  await withSim(sim, () => deleteFirewallDevice(fw.id, device.id));
  assert.deepEqual((await withSim(sim, () => getNodeBalancerFirewalls(nb.id))).data, []);
  sim.world.deleteInstance(linode.id);
  assert.deepEqual(sim.world.firewalls()[0]?.entities, [], "deleting a Linode detaches it");
});

Deno.test("createNodeBalancer() with firewall_id attaches the firewall", async () => {
  await using sim = await startLinodeSim();
  const fw = await withSim(sim, () => createFirewall({ label: "fw-nb", rules: RULES }));
  const body = { label: "svc-fw", region: "us-east", firewall_id: fw.id, configs: [] };
  const nb = (await withSim(sim, () => rawCall("POST", "/nodebalancers", body))) as { id: number };
  assert.deepEqual((await withSim(sim, () => getNodeBalancerFirewalls(nb.id))).data.map((f) => f.id), [
    fw.id,
  ]);
  const bad = await failure(
    withSim(sim, () => rawCall("POST", "/nodebalancers", { ...body, label: "svc-x", firewall_id: 1 })),
  );
  assert.deepEqual(bad.errors, [{ field: "firewall_id", reason: "Firewall not found" }]);
});
