/** Whether a Cloud Firewall already enforces the planned rules, so an unchanged ACL costs no write. Pure. */
import type { FirewallRules, FirewallRuleType, UpdateFirewallRules } from "@linode/api-v4";

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
