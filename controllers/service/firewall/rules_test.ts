import assert from "node:assert/strict";
import type { FirewallRules, UpdateFirewallRules } from "@linode/api-v4";
import { planFirewallRules, sameFirewallRules } from "./rules.ts";
import type { PortSpec } from "../annotations/spec.ts";

function portSpec(port: number, family: "tcp" | "udp"): PortSpec {
  return {
    port,
    family,
    protocol: family,
    proxyProtocol: "none",
    algorithm: "roundrobin",
    stickiness: null,
    tlsSecretName: null,
    udpCheckPort: null,
    check: {
      type: "none",
      path: null,
      body: null,
      intervalSec: 5,
      timeoutSec: 3,
      attempts: 2,
      passive: false,
      keepPath: false,
    },
    keep: [],
  };
}

const NAMES = { serviceName: "web", nodeBalancerLabel: "ccm-665544332211" };

Deno.test("planFirewallRules() turns an allowList into ACCEPT rules under an inbound DROP policy", () => {
  const rules = planFirewallRules(
    { list: "allowList", addresses: { ipv4: ["203.0.113.0/24"], ipv6: ["2001:db8::/32"] } },
    [portSpec(80, "tcp"), portSpec(443, "tcp")],
    NAMES,
  );
  assert.deepEqual(rules, {
    inbound: [{
      action: "ACCEPT",
      label: "ACCEPT-web",
      description: "Created by linode-ccm: ccm-665544332211, for web",
      protocol: "TCP",
      ports: "80,443",
      addresses: { ipv4: ["203.0.113.0/24"], ipv6: ["2001:db8::/32"] },
    }],
    inbound_policy: "DROP",
    outbound: [],
    outbound_policy: "ACCEPT",
  });
});

Deno.test("planFirewallRules() turns a denyList into DROP rules, with a UDP rule for UDP ports", () => {
  const rules = planFirewallRules(
    { list: "denyList", addresses: { ipv4: ["198.51.100.7/32"], ipv6: [] } },
    [portSpec(53, "tcp"), portSpec(53, "udp")],
    NAMES,
  );
  assert.equal(rules.inbound_policy, "ACCEPT");
  assert.deepEqual(rules.inbound?.map((r) => [r.action, r.protocol, r.ports]), [["DROP", "TCP", "53"], [
    "DROP",
    "UDP",
    "53",
  ]]);
});

Deno.test("planFirewallRules() splits more than 255 addresses into rules per IP family, labels cut to 32", () => {
  const ipv4 = Array.from({ length: 300 }, (_, i) => `10.0.${i >> 8}.${i & 255}/32`);
  const rules = planFirewallRules(
    { list: "allowList", addresses: { ipv4, ipv6: ["2001:db8::/32"] } },
    [portSpec(80, "tcp")],
    { serviceName: "a-service-with-a-really-long-name", nodeBalancerLabel: "ccm-1" },
  );
  assert.deepEqual(rules.inbound?.map((r) => [r.addresses?.ipv4?.length, r.addresses?.ipv6?.length]), [
    [255, undefined],
    [45, undefined],
    [undefined, 1],
  ]);
  assert.ok(rules.inbound?.every((r) => (r.label ?? "").length === 32 && r.description?.startsWith("Rule ")));
});

const DESIRED: UpdateFirewallRules = {
  inbound: [{
    action: "ACCEPT",
    protocol: "TCP",
    ports: "80,443",
    label: "ACCEPT-web",
    addresses: { ipv4: ["203.0.113.0/24", "198.51.100.7"] },
  }],
  inbound_policy: "DROP",
  outbound: [],
  outbound_policy: "ACCEPT",
};

function current(over: Partial<FirewallRules> = {}): FirewallRules {
  return { ...structuredClone(DESIRED), fingerprint: "x", version: 3, ...over } as FirewallRules;
}

const CASES: { name: string; rules: FirewallRules; same: boolean }[] = [
  { name: "the same rules", rules: current(), same: true },
  {
    name: "addresses with their default prefix, ports and addresses in another order, another label",
    rules: current({
      inbound: [{
        action: "ACCEPT",
        protocol: "TCP",
        ports: "443, 80",
        label: "renamed",
        addresses: { ipv4: ["198.51.100.7/32", "203.0.113.0/24"], ipv6: [] },
      }],
    }),
    same: true,
  },
  { name: "another inbound policy", rules: current({ inbound_policy: "ACCEPT" }), same: false },
  {
    name: "another address",
    rules: current({
      inbound: [{
        action: "ACCEPT",
        protocol: "TCP",
        ports: "80,443",
        addresses: { ipv4: ["203.0.113.0/24"] },
      }],
    }),
    same: false,
  },
  { name: "no rules", rules: current({ inbound: null }), same: false },
];

for (const c of CASES) {
  Deno.test(`sameFirewallRules() with ${c.name} is ${c.same}`, () => {
    assert.equal(sameFirewallRules(c.rules, DESIRED), c.same);
  });
}
