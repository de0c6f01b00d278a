import assert from "node:assert/strict";
import type { Firewall, UpdateFirewallRules } from "@linode/api-v4";
import type { DesiredFirewall } from "./rules.ts";
import { firewallChanges } from "./reconcile.ts";

const TAG = "ccm-owner:kubernetes/0f1e2d3c4b5a4697";
const RULES: UpdateFirewallRules = {
  inbound_policy: "DROP",
  outbound_policy: "ACCEPT",
  inbound: [{ action: "ACCEPT", protocol: "TCP", ports: "80", addresses: { ipv4: ["10.0.0.0/8"] } }],
  outbound: [],
};

function fw(id: number, tags: string[] = [], rules: UpdateFirewallRules = RULES): Firewall {
  return {
    id,
    label: `fw-${id}`,
    tags,
    rules: { ...rules, fingerprint: "f", version: 1 },
    status: "enabled",
    entities: [],
    created: "",
    updated: "",
  };
}

const ACL: DesiredFirewall = { kind: "acl", label: "ccm-web", tags: [TAG], rules: RULES };

const CASES: { name: string; attached: Firewall[]; want: DesiredFirewall; changes: string[] }[] = [
  {
    name: "nothing when the named firewall is the one attached",
    attached: [fw(9)],
    want: { kind: "id", firewallId: 9 },
    changes: [],
  },
  {
    name: "attaching the named firewall in place of another",
    attached: [fw(8)],
    want: { kind: "id", firewallId: 9 },
    changes: ["firewalls"],
  },
  {
    name: "nothing when no firewall is wanted and none is attached",
    attached: [],
    want: { kind: "none" },
    changes: [],
  },
  {
    // As the Go CCM: removing firewall-id detaches the firewall (never deletes it).
    name: "detaching a user's firewall when none is wanted",
    attached: [fw(8)],
    want: { kind: "none" },
    changes: ["firewalls"],
  },
  {
    name: "releasing our firewall when none is wanted",
    attached: [fw(8, [TAG])],
    want: { kind: "none" },
    changes: ["firewalls"],
  },
  {
    name: "creating the ACL firewall when none is attached",
    attached: [],
    want: ACL,
    changes: ["firewalls"],
  },
  { name: "nothing when our ACL firewall has the rules", attached: [fw(5, [TAG])], want: ACL, changes: [] },
  {
    name: "new rules on our ACL firewall",
    attached: [fw(5, [TAG], { ...RULES, inbound_policy: "ACCEPT" })],
    want: ACL,
    changes: ["firewalls[5].rules"],
  },
  {
    name: "taking over an attached firewall for the ACL",
    attached: [fw(5)],
    want: ACL,
    changes: ["firewalls[5].tags"],
  },
];

for (const c of CASES) {
  Deno.test(`firewallChanges() ${c.name}`, () => {
    assert.deepEqual(firewallChanges(c.attached, c.want, TAG).map((ch) => ch.field), c.changes);
  });
}
