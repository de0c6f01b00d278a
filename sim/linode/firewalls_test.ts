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
import { failure, rawCall, withSim } from "./testdata/test_client.ts";

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

function rule(patch: Record<string, unknown> = {}) {
  return { action: "ACCEPT", protocol: "TCP", ports: "80", addresses: { ipv4: ["0.0.0.0/0"] }, ...patch };
}

/** Rule sets the API refuses, with the field it names. */
const REFUSED_RULES: [string, Record<string, unknown>, string][] = [
  ["26 rules", {
    inbound: Array.from({ length: 13 }, () => rule()),
    outbound: Array.from({ length: 13 }, () => rule()),
  }, "rules"],
  ["no inbound policy", { inbound_policy: undefined }, "rules.inbound_policy"],
  ["an unknown policy", { outbound_policy: "REJECT" }, "rules.outbound_policy"],
  ["a rule without action", { inbound: [rule({ action: undefined })] }, "rules.inbound[0].action"],
  ["a rule without protocol", { inbound: [rule({ protocol: undefined })] }, "rules.inbound[0].protocol"],
  ["port 0", { inbound: [rule({ ports: "0" })] }, "rules.inbound[0].ports"],
  ["port 65536", { inbound: [rule({ ports: "65536" })] }, "rules.inbound[0].ports"],
  ["a leading zero", { inbound: [rule({ ports: "080" })] }, "rules.inbound[0].ports"],
  ["a falling range", { inbound: [rule({ ports: "90-80" })] }, "rules.inbound[0].ports"],
  ["two spaces after a comma", { inbound: [rule({ ports: "80,  443" })] }, "rules.inbound[0].ports"],
  [
    "16 port pieces",
    { inbound: [rule({ ports: "1-2,3-4,5-6,7-8,9-10,11-12,13-14,15-16" })] },
    "rules.inbound[0].ports",
  ],
  ["ports on ICMP", { inbound: [rule({ protocol: "ICMP", ports: "80" })] }, "rules.inbound[0].ports"],
  ["no addresses", { inbound: [rule({ addresses: undefined })] }, "rules.inbound[0].addresses"],
  ["empty addresses", { inbound: [rule({ addresses: {} })] }, "rules.inbound[0].addresses"],
  ["an empty ipv4 list", { inbound: [rule({ addresses: { ipv4: [] } })] }, "rules.inbound[0].addresses.ipv4"],
  [
    "an address without a mask",
    { inbound: [rule({ addresses: { ipv4: ["192.0.2.1"] } })] },
    "rules.inbound[0].addresses.ipv4[0]",
  ],
  [
    "an IPv6 address in ipv4",
    { inbound: [rule({ addresses: { ipv4: ["2001:db8::/32"] } })] },
    "rules.inbound[0].addresses.ipv4[0]",
  ],
  [
    "a zone id",
    { inbound: [rule({ addresses: { ipv6: ["fe80::1%eth0/128"] } })] },
    "rules.inbound[0].addresses.ipv6[0]",
  ],
  [
    "256 addresses",
    {
      inbound: [rule({
        addresses: {
          ipv4: Array.from({ length: 200 }, (_, i) => `10.0.${i}.0/24`),
          ipv6: Array.from({ length: 56 }, (_, i) => `2001:db8:${i}::/48`),
        },
      })],
    },
    "rules.inbound[0].addresses",
  ],
  ["a 2-character rule label", { inbound: [rule({ label: "ab" })] }, "rules.inbound[0].label"],
  [
    "a 101-character description",
    { outbound: [rule({ description: "d".repeat(101) })] },
    "rules.outbound[0].description",
  ],
];

for (const [name, patch, field] of REFUSED_RULES) {
  Deno.test(`createFirewall() refuses ${name}`, async () => {
    await using sim = await startLinodeSim();
    const rules = { inbound_policy: "DROP", outbound_policy: "ACCEPT", inbound: [], outbound: [], ...patch };
    const got = await failure(
      withSim(sim, () => rawCall("POST", "/networking/firewalls", { label: "fw-x", rules })),
    );
    assert.equal(got.status, 400);
    assert.equal(got.errors[0]?.field, field, JSON.stringify(got.errors));
    assert.deepEqual(sim.world.firewalls(), []);
  });
}

Deno.test("createFirewall() accepts the documented limits: 25 rules, 15 port pieces, 255 addresses", async () => {
  await using sim = await startLinodeSim();
  const full = rule({
    ports: "22-24, 80, 443,1-2,3-4,5-6,7-8,9",
    label: "allow-all",
    description: "d".repeat(100),
    addresses: {
      ipv4: Array.from({ length: 200 }, (_, i) => `10.0.${i}.0/24`),
      ipv6: Array.from({ length: 55 }, (_, i) => `2001:db8:${i}::/48`),
    },
  });
  const rules = {
    inbound_policy: "DROP",
    outbound_policy: "ACCEPT",
    inbound: [full, ...Array.from({ length: 12 }, () => rule({ protocol: "ICMP", ports: undefined }))],
    outbound: Array.from(
      { length: 12 },
      () => rule({ protocol: "ALL", ports: undefined, addresses: { ipv6: ["::/0"] } }),
    ),
  };
  const fw = await withSim(
    sim,
    () => rawCall("POST", "/networking/firewalls", { label: "fw.ok_1-a", rules }),
  ) as {
    id: number;
    rules: { inbound: unknown[]; outbound: unknown[] };
  };
  assert.equal(fw.rules.inbound.length + fw.rules.outbound.length, 25);
  const tooMany = { ...rules, outbound: [...rules.outbound, rule()] };
  const put = await failure(
    withSim(sim, () => rawCall("PUT", `/networking/firewalls/${fw.id}/rules`, tooMany)),
  );
  assert.deepEqual(put.errors, [{ field: "rules", reason: "A firewall may have at most 25 rules" }]);
  const badPut = await failure(
    withSim(
      sim,
      () => rawCall("PUT", `/networking/firewalls/${fw.id}/rules`, { ...rules, inbound_policy: "NOPE" }),
    ),
  );
  assert.equal(
    badPut.errors[0]?.field,
    "inbound_policy",
    "a rules PUT names fields without the rules. prefix",
  );
});

Deno.test("createFirewall() refuses labels the reference refuses", async () => {
  await using sim = await startLinodeSim();
  for (const label of ["fw", "-fw-a", "fw-a-", "fw--a", "fw__a", "fw..a", "fw a", "f".repeat(33)]) {
    const got = await failure(
      withSim(sim, () => rawCall("POST", "/networking/firewalls", { label, rules: RULES })),
    );
    assert.equal(got.errors[0]?.field, "label", label);
  }
});

Deno.test("addFirewallDevice() allows one enabled firewall per NodeBalancer; disabled ones may join it", async () => {
  await using sim = await startLinodeSim();
  const nb = await withSim(
    sim,
    () => rawCall("POST", "/nodebalancers", { label: "svc-fw2", region: "us-east" }),
  ) as { id: number };
  const fwA = await withSim(sim, () => createFirewall({ label: "fw-a", rules: RULES }));
  const fwB = await withSim(sim, () => createFirewall({ label: "fw-b", rules: RULES }));
  await withSim(sim, () => addFirewallDevice(fwA.id, { id: nb.id, type: "nodebalancer" }));
  const second = await failure(
    withSim(sim, () => addFirewallDevice(fwB.id, { id: nb.id, type: "nodebalancer" })),
  );
  assert.deepEqual(second.errors, [{
    field: "id",
    reason: `nodebalancer ${nb.id} already has an enabled firewall`,
  }]);
  await withSim(sim, () => disableFirewall(fwB.id));
  await withSim(sim, () => addFirewallDevice(fwB.id, { id: nb.id, type: "nodebalancer" }));
  const enable = await failure(
    withSim(sim, () => rawCall("PUT", `/networking/firewalls/${fwB.id}`, { status: "enabled" })),
  );
  assert.equal(enable.errors[0]?.field, "status");
  assert.deepEqual((await withSim(sim, () => getNodeBalancerFirewalls(nb.id))).data.map((f) => f.id), [
    fwA.id,
    fwB.id,
  ]);
  const withFw = await failure(
    withSim(
      sim,
      () => rawCall("POST", "/nodebalancers", { label: "svc-fw3", region: "us-east", firewall_id: "x" }),
    ),
  );
  assert.deepEqual(withFw.errors, [{ field: "firewall_id", reason: "Firewall not found" }]);
});
