/**
 * `firewall-id` and `firewall-acl`. As in the Go CCM, an ID wins and the ACL is then ignored (a warning
 * here); an ACL holds exactly one of `allowList` or `denyList`, each with IPv4 and IPv6 CIDRs. The ACL's
 * rules hold at most 255 addresses each and a firewall at most 25 rules (the Go CCM's limits). Pure.
 */
import { cidrFamily } from "../../../common/net.ts";
import type { AnnotationReader } from "./values.ts";
import type { AclAddresses, FirewallSpec } from "./spec.ts";

/** Addresses in one firewall rule. */
export const MAX_ADDRESSES_PER_RULE = 255;
/** Inbound rules in one firewall. */
export const MAX_RULES_PER_FIREWALL = 25;

const LISTS = ["allowList", "denyList"] as const;

/** Rules needed for these addresses per port family: one, or one per 255 of each IP family. */
export function aclRuleCount(addresses: AclAddresses): number {
  const { ipv4, ipv6 } = addresses;
  if (ipv4.length + ipv6.length <= MAX_ADDRESSES_PER_RULE) return 1;
  return Math.ceil(ipv4.length / MAX_ADDRESSES_PER_RULE) + Math.ceil(ipv6.length / MAX_ADDRESSES_PER_RULE);
}

/** Reads the firewall annotations; `portFamilies` is how many of tcp/udp the Service uses (rules each). */
export function readFirewall(reader: AnnotationReader, portFamilies: number): FirewallSpec | undefined {
  if (reader.has("firewall-id")) {
    const firewallId = reader.id("firewall-id");
    if (reader.has("firewall-acl")) reader.warn("firewall-acl", "ignored: firewall-id is set");
    return firewallId === undefined ? undefined : { kind: "id", firewallId };
  }
  const raw = reader.raw("firewall-acl");
  if (raw === undefined) return { kind: "none" };
  const acl = parseAcl(raw);
  if (typeof acl === "string") return reader.fail("firewall-acl", raw, acl);
  const rules = aclRuleCount(acl.addresses) * Math.max(1, portFamilies);
  if (rules > MAX_RULES_PER_FIREWALL) {
    const most =
      `at most ${MAX_RULES_PER_FIREWALL} rules of ${MAX_ADDRESSES_PER_RULE} addresses (needs ${rules})`;
    return reader.fail("firewall-acl", raw, most);
  }
  return { kind: "acl", ...acl };
}

type Acl = { list: "allowList" | "denyList"; addresses: AclAddresses };

/** The ACL, or the text of what is accepted when it is not valid. */
function parseAcl(raw: string): Acl | string {
  const shape = 'a JSON object with exactly one of "allowList" or "denyList"';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return shape;
  }
  if (!isObject(parsed)) return shape;
  const present = LISTS.filter((l) => parsed[l] !== undefined && parsed[l] !== null);
  const list = present[0];
  if (present.length !== 1 || list === undefined) return shape;
  const body = parsed[list];
  if (!isObject(body)) return `${list} as {"ipv4": [CIDRs], "ipv6": [CIDRs]}`;
  const ipv4 = cidrList(body.ipv4, 4);
  const ipv6 = cidrList(body.ipv6, 6);
  if (typeof ipv4 === "string") return `${list}.ipv4 as a list of IPv4 CIDRs (${ipv4} is not one)`;
  if (typeof ipv6 === "string") return `${list}.ipv6 as a list of IPv6 CIDRs (${ipv6} is not one)`;
  if (ipv4.length + ipv6.length === 0) return `${list} with at least one address`;
  return { list, addresses: { ipv4, ipv6 } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The trimmed, de-duplicated CIDRs, or the JSON of the first entry that is not one of this family. */
function cidrList(value: unknown, family: 4 | 6): string[] | string {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return JSON.stringify(value);
  const out: string[] = [];
  for (const entry of value) {
    if (typeof entry !== "string" || cidrFamily(entry.trim()) !== family) return JSON.stringify(entry);
    if (!out.includes(entry.trim())) out.push(entry.trim());
  }
  return out;
}
