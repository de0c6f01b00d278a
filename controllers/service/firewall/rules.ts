/**
 * The inbound rules of the CCM-managed Cloud Firewall of a `firewall-acl` Service, shaped as the Go CCM
 * shapes them (an allowList's addresses ACCEPTed under an inbound DROP policy, a denyList's DROPped under
 * ACCEPT; 255 addresses per rule; label `<ACTION>-<service>` and a description naming the NodeBalancer),
 * with one difference: UDP ports get UDP rules, where the Go CCM writes TCP rules only. Also the planned
 * firewall's shape (`DesiredFirewall`), which the NodeBalancer plan carries, and whether a Cloud Firewall
 * already enforces the planned rules, so an unchanged ACL costs no write. Pure.
 */
import type { FirewallRules, FirewallRuleType, UpdateFirewallRules } from "@linode/api-v4";
import { aclRuleCount, MAX_ADDRESSES_PER_RULE } from "../annotations/parse.ts";
import type { AclAddresses, PortSpec } from "../annotations/spec.ts";

/** The Cloud Firewall of a Service's NodeBalancer, as planned (`DesiredNodeBalancer.firewall`). */
export type DesiredFirewall =
  | { readonly kind: "none" }
  | { readonly kind: "id"; readonly firewallId: number }
  | {
    readonly kind: "acl";
    /** For a new firewall. */
    readonly label: string;
    readonly tags: readonly string[];
    readonly rules: UpdateFirewallRules;
  };

const RULE_LABEL_MAX = 32;
const RULE_DESCRIPTION_MAX = 100;

function chunks(items: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < items.length; i += MAX_ADDRESSES_PER_RULE) {
    out.push(items.slice(i, i + MAX_ADDRESSES_PER_RULE));
  }
  return out;
}

function describe(text: string): string {
  return text.length > RULE_DESCRIPTION_MAX ? `${text.slice(0, RULE_DESCRIPTION_MAX - 3)}...` : text;
}

/** Address groups of the rules: all in one, or per IP family in chunks of 255. */
function addressGroups(addresses: AclAddresses): { ipv4?: string[]; ipv6?: string[] }[] {
  if (aclRuleCount(addresses) === 1) {
    const group: { ipv4?: string[]; ipv6?: string[] } = {};
    if (addresses.ipv4.length) group.ipv4 = [...addresses.ipv4];
    if (addresses.ipv6.length) group.ipv6 = [...addresses.ipv6];
    return [group];
  }
  return [
    ...chunks(addresses.ipv4).map((ipv4) => ({ ipv4 })),
    ...chunks(addresses.ipv6).map((ipv6) => ({ ipv6 })),
  ];
}

/** The firewall rules for an ACL over the Service's ports. */
export function planFirewallRules(
  acl: { list: "allowList" | "denyList"; addresses: AclAddresses },
  ports: readonly PortSpec[],
  names: { serviceName: string; nodeBalancerLabel: string },
): UpdateFirewallRules {
  const action = acl.list === "allowList" ? "ACCEPT" : "DROP";
  const label = `${action}-${names.serviceName}`.slice(0, RULE_LABEL_MAX);
  const groups = addressGroups(acl.addresses);
  const inbound: FirewallRuleType[] = [];
  for (const family of ["tcp", "udp"] as const) {
    const familyPorts = [...new Set(ports.filter((p) => p.family === family).map((p) => p.port))];
    if (familyPorts.length === 0) continue;
    groups.forEach((addresses, i) => {
      const what = `Created by linode-ccm: ${names.nodeBalancerLabel}, for ${names.serviceName}`;
      inbound.push({
        action,
        label,
        description: describe(groups.length > 1 ? `Rule ${i}, ${what}` : what),
        protocol: family === "tcp" ? "TCP" : "UDP",
        ports: familyPorts.join(","),
        addresses,
      });
    });
  }
  return {
    inbound,
    inbound_policy: action === "ACCEPT" ? "DROP" : "ACCEPT",
    outbound: [],
    outbound_policy: "ACCEPT",
  };
}

// ---------------------------------------------------------------------------------------------------------
// Comparing rules.

/** An address with its default prefix length, so `1.2.3.4` and `1.2.3.4/32` compare equal. */
function withPrefix(address: string): string {
  if (address.includes("/")) return address.toLowerCase();
  return address.includes(":") ? `${address.toLowerCase()}/128` : `${address}/32`;
}

/** What a rule does, in a comparable form: action, protocol, ports and addresses, each in order. */
function ruleKey(rule: FirewallRuleType): string {
  const v4 = (rule.addresses?.ipv4 ?? []).map(withPrefix).sort();
  const v6 = (rule.addresses?.ipv6 ?? []).map(withPrefix).sort();
  const ports = (rule.ports ?? "").split(",").map((p) => p.trim()).filter(Boolean).sort().join(",");
  return JSON.stringify([rule.action, rule.protocol, ports, v4, v6]);
}

function keys(rules: readonly FirewallRuleType[] | null | undefined): string {
  return JSON.stringify((rules ?? []).map(ruleKey).sort());
}

/** True when `current` already enforces `desired` (rule labels and descriptions aside). */
export function sameFirewallRules(current: FirewallRules, desired: UpdateFirewallRules): boolean {
  return current.inbound_policy === desired.inbound_policy &&
    current.outbound_policy === desired.outbound_policy &&
    keys(current.inbound) === keys(desired.inbound) &&
    keys(current.outbound) === keys(desired.outbound);
}
