import assert from "node:assert/strict";
import type { FirewallRules, UpdateFirewallRules } from "@linode/api-v4";
import { sameFirewallRules } from "./compare.ts";

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
