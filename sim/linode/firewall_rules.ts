/**
 * Cloud Firewall rule sets and labels, checked as the reference's Firewall and FirewallRuleConfig schemas say:
 * at most 25 rules across inbound and outbound; `ports` a port, range or comma list (a space allowed after each
 * comma) of 1–65535 without leading zeroes, ranges rising, at most 15 pieces (a range counts two), and only for
 * TCP and UDP; `addresses` with `ipv4`, `ipv6` or both, non-empty lists in IP/mask form, at most 255 in all; rule
 * labels 3–32 and descriptions 1–100 characters. `ALL` joins the protocols as Linode's own client has it.
 * Required `action`, `protocol` and policies follow Linode's client schema (the reference lists no defaults).
 */
import type { FirewallRules, FirewallRuleType } from "@linode/api-v4";
import { type Body, fieldError, isRecord, optEnum, optString } from "./http.ts";
import { parseCidr } from "./ip.ts";

const POLICIES = ["ACCEPT", "DROP"] as const;
const PROTOCOLS = ["TCP", "UDP", "ICMP", "IPENCAP", "ALL"] as const;
/** Rules a firewall may hold across inbound and outbound. */
export const MAX_RULES = 25;
/** Addresses (single IPs and networks alike) a rule may list across ipv4 and ipv6. */
export const MAX_ADDRESSES = 255;
const MAX_PORT_PIECES = 15;

/** A firewall label: 3–32 characters, alphanumeric at both ends, `-`, `_`, `.` inside but never doubled. */
export function checkFirewallLabel(label: string, field = "label"): string {
  if (label.length < 3 || label.length > 32) {
    throw fieldError(field, "Label must be between 3 and 32 characters");
  }
  if (!/^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$/.test(label) || /--|__|\.\./.test(label)) {
    throw fieldError(
      field,
      "Label must begin and end with a letter or digit and contain only letters, digits and single -, _ or .",
    );
  }
  return label;
}

function portNumber(text: string, field: string): number {
  if (!/^[1-9]\d{0,4}$/.test(text) || Number(text) > 65535) {
    throw fieldError(field, "Ports must be integers from 1 to 65535 without leading zeroes");
  }
  return Number(text);
}

/** Checks a `ports` string; returns it unchanged. */
export function checkPorts(ports: string, field: string): string {
  let pieces = 0;
  for (const part of ports.split(/, ?/)) {
    const range = /^(\d+)-(\d+)$/.exec(part);
    if (range) {
      if (portNumber(range[1] ?? "", field) >= portNumber(range[2] ?? "", field)) {
        throw fieldError(field, "A port range must start with the smaller port");
      }
      pieces += 2;
    } else {
      portNumber(part, field);
      pieces++;
    }
  }
  if (pieces > MAX_PORT_PIECES) {
    throw fieldError(field, `At most ${MAX_PORT_PIECES} ports or range ends are allowed`);
  }
  return ports;
}

function checkAddressList(value: unknown, field: string, version: 4 | 6): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === "string")) {
    throw fieldError(field, "Must be a non-empty list of addresses");
  }
  value.forEach((entry, i) => {
    const ok = version === 4 ? isIpv4Network(entry) : isIpv6Network(entry);
    if (!ok) {
      throw fieldError(`${field}[${i}]`, `Must be an IPv${version} address or network in IP/mask form`);
    }
  });
  return value;
}

/** `a.b.c.d/n` with host bits set (the reference does not say the API requires the network base). */
function isIpv4Network(text: string): boolean {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(text);
  return match !== null && Number(match[2]) <= 32 && parseCidr(`${match[1]}/32`) !== undefined;
}

function isIpv6Network(text: string): boolean {
  const match = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(text);
  if (!match || Number(match[2]) > 128) return false;
  try {
    new URL(`http://[${match[1]}]/`);
    return true;
  } catch {
    return false;
  }
}

function parseAddresses(value: unknown, prefix: string): FirewallRuleType["addresses"] {
  if (!isRecord(value)) throw fieldError(`${prefix}addresses`, "addresses must contain ipv4, ipv6 or both");
  const ipv4 = checkAddressList(value.ipv4, `${prefix}addresses.ipv4`, 4);
  const ipv6 = checkAddressList(value.ipv6, `${prefix}addresses.ipv6`, 6);
  if (!ipv4 && !ipv6) throw fieldError(`${prefix}addresses`, "addresses must contain ipv4, ipv6 or both");
  if ((ipv4?.length ?? 0) + (ipv6?.length ?? 0) > MAX_ADDRESSES) {
    throw fieldError(`${prefix}addresses`, `A rule may list at most ${MAX_ADDRESSES} addresses`);
  }
  return { ipv4: ipv4 ?? [], ipv6: ipv6 ?? [] };
}

function parseRule(rule: unknown, prefix: string): FirewallRuleType {
  if (!isRecord(rule)) throw fieldError(prefix.replace(/\.$/, ""), "Must be an object");
  const protocol = optEnum(rule, "protocol", PROTOCOLS, prefix);
  if (protocol === undefined) throw fieldError(`${prefix}protocol`, "protocol is required");
  const action = optEnum(rule, "action", POLICIES, prefix);
  if (action === undefined) throw fieldError(`${prefix}action`, "action is required");
  const ports = optString(rule, "ports", prefix);
  if (ports !== undefined && ports !== "" && protocol !== "TCP" && protocol !== "UDP") {
    throw fieldError(`${prefix}ports`, "Ports are only allowed for the TCP and UDP protocols");
  }
  const label = optString(rule, "label", prefix);
  if (label !== undefined && (label.length < 3 || label.length > 32)) {
    throw fieldError(`${prefix}label`, "Label must be between 3 and 32 characters");
  }
  const description = optString(rule, "description", prefix);
  if (description !== undefined && (description.length < 1 || description.length > 100)) {
    throw fieldError(`${prefix}description`, "Description must be between 1 and 100 characters");
  }
  return {
    action,
    protocol,
    ports: ports ? checkPorts(ports, `${prefix}ports`) : "",
    label: label ?? null,
    description: description ?? null,
    addresses: parseAddresses(rule.addresses, prefix),
  };
}

function parseRuleList(value: unknown, field: string): FirewallRuleType[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw fieldError(field, `${field} must be an array`);
  return value.map((rule, i) => parseRule(rule, `${field}[${i}].`));
}

function policy(body: Body, field: string, prefix: string): "ACCEPT" | "DROP" {
  const value = optEnum(body, field, POLICIES, prefix);
  if (value === undefined) throw fieldError(`${prefix}${field}`, `${field} is required`);
  return value;
}

/** A rule set with its version and a fingerprint of its content; `prefix` is "rules." inside a create body. */
export function parseRules(value: unknown, version: number, prefix: string): FirewallRules {
  if (!isRecord(value)) throw fieldError(prefix.replace(/\.$/, "") || "rules", "rules are required");
  const inbound = parseRuleList(value.inbound, `${prefix}inbound`);
  const outbound = parseRuleList(value.outbound, `${prefix}outbound`);
  if (inbound.length + outbound.length > MAX_RULES) {
    throw fieldError(prefix.replace(/\.$/, "") || "rules", `A firewall may have at most ${MAX_RULES} rules`);
  }
  const rules: FirewallRules = {
    inbound_policy: policy(value, "inbound_policy", prefix),
    outbound_policy: policy(value, "outbound_policy", prefix),
    inbound,
    outbound,
    version,
    fingerprint: "",
  };
  rules.fingerprint = fingerprintOf(JSON.stringify(rules));
  return rules;
}

function fingerprintOf(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}
