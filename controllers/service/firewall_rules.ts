/**
 * `firewall-acl` → Cloud Firewall rules, as the Go CCM builds them: one TCP rule on the Service's ports for
 * the listed addresses (split into rules of at most 255 addresses, at most 25 rules); an allowList drops
 * everything else, a denyList accepts everything else; outbound is accepted. Pure.
 */
import type { FirewallRules, FirewallRuleType, UpdateFirewallRules } from "@linode/api-v4";
import type { AclAddresses, FirewallAcl, InvalidInput } from "./contracts.ts";

const MAX_ADDRESSES_PER_RULE = 255;
const MAX_RULES = 25;
const MAX_RULE_LABEL = 32;
const MAX_RULE_DESCRIPTION = 100;
const ACL_KEY = "service.beta.kubernetes.io/linode-loadbalancer-firewall-acl";

function chunks(list: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < list.length; i += MAX_ADDRESSES_PER_RULE) {
    out.push(list.slice(i, i + MAX_ADDRESSES_PER_RULE));
  }
  return out;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

/** What the rules are built from: the ACL, the Service's ports and names for labels. */
export interface FirewallRuleInput {
  acl: FirewallAcl;
  ports: readonly number[];
  /** The firewall's label (the NodeBalancer's), named in rule descriptions. */
  label: string;
  serviceName: string;
}

function rulesFor(
  action: "ACCEPT" | "DROP",
  addresses: AclAddresses,
  input: FirewallRuleInput,
): FirewallRuleType[] {
  const ruleLabel = `${action === "ACCEPT" ? "allow" : "deny"}-${input.serviceName}`.slice(0, MAX_RULE_LABEL);
  const ports = input.ports.join(",");
  const v4 = addresses.ipv4 ?? [];
  const v6 = addresses.ipv6 ?? [];
  const split = v4.length + v6.length > MAX_ADDRESSES_PER_RULE;
  const groups = split
    ? [...chunks(v4).map((ipv4) => ({ ipv4 })), ...chunks(v6).map((ipv6) => ({ ipv6 }))]
    : [{ ipv4: v4, ipv6: v6 }];
  return groups.map((group, i) => ({
    action,
    protocol: "TCP",
    ports,
    label: ruleLabel,
    description: truncate(
      split
        ? `Rule ${i}, created by linode-ccm: ${input.label}, for ${input.serviceName}`
        : `Created by linode-ccm: ${input.label}, for ${input.serviceName}`,
      MAX_RULE_DESCRIPTION,
    ),
    addresses: group,
  }));
}

/** The rules for an ACL, or why it cannot be one (both or neither list, too many addresses). */
export function planFirewallRules(
  input: FirewallRuleInput,
): { ok: true; rules: UpdateFirewallRules } | { ok: false; error: InvalidInput } {
  const { allowList, denyList } = input.acl;
  const value = JSON.stringify(input.acl);
  if ((allowList && denyList) || (!allowList && !denyList)) {
    return { ok: false, error: { key: ACL_KEY, value, accepted: "exactly one of allowList and denyList" } };
  }
  const action = allowList ? "ACCEPT" : "DROP";
  const inbound = rulesFor(action, allowList ?? denyList ?? {}, input);
  if (inbound.length > MAX_RULES) {
    const accepted = `at most ${
      MAX_RULES * MAX_ADDRESSES_PER_RULE
    } addresses (${MAX_RULES} rules of ${MAX_ADDRESSES_PER_RULE})`;
    return { ok: false, error: { key: ACL_KEY, value: `${value.slice(0, 200)}…`, accepted } };
  }
  return {
    ok: true,
    rules: {
      inbound,
      inbound_policy: allowList ? "DROP" : "ACCEPT",
      outbound: [],
      outbound_policy: "ACCEPT",
    },
  };
}

/** An address with its default prefix length, so `1.2.3.4` and `1.2.3.4/32` compare equal. */
function withPrefix(address: string): string {
  if (address.includes("/")) return address.toLowerCase();
  return address.includes(":") ? `${address.toLowerCase()}/128` : `${address}/32`;
}

function ruleKey(rule: FirewallRuleType): string {
  const v4 = (rule.addresses?.ipv4 ?? []).map(withPrefix).sort();
  const v6 = (rule.addresses?.ipv6 ?? []).map(withPrefix).sort();
  const ports = (rule.ports ?? "").split(",").map((p) => p.trim()).filter(Boolean).sort().join(",");
  return JSON.stringify([rule.action, rule.protocol, ports, v4, v6]);
}

/** True when `current` already enforces `desired` (labels and descriptions aside). */
export function sameFirewallRules(current: FirewallRules, desired: UpdateFirewallRules): boolean {
  if (current.inbound_policy !== desired.inbound_policy) return false;
  if (current.outbound_policy !== desired.outbound_policy) return false;
  const keys = (rules: readonly FirewallRuleType[] | null | undefined) => (rules ?? []).map(ruleKey).sort();
  return JSON.stringify(keys(current.inbound)) === JSON.stringify(keys(desired.inbound)) &&
    JSON.stringify(keys(current.outbound)) === JSON.stringify(keys(desired.outbound));
}
