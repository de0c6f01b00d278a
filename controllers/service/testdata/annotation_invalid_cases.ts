/** Invalid values of every Service annotation, for `annotations/parse_test.ts`. */
import type { V1ServicePort } from "@kubernetes/client-node";
import type { ServiceDefaults } from "../annotations/spec.ts";
import { defaults, port } from "./fixtures.ts";
import { UDP, VPC } from "./annotation_valid_cases.ts";

/** An invalid annotation value and the error it must give. */
export interface InvalidCase {
  covers: string;
  ann: Record<string, string>;
  ports?: V1ServicePort[];
  defaults?: ServiceDefaults;
  /** The annotation the error names (default: `covers`). */
  key?: string;
  /** A part of the `accepted` text. */
  accepted: string;
}

/** Invalid values of every annotation. */
/** Values with spaces around them that the Go CCM refuses: name, value, accepted text, VPC defaults. */
const SPACED_ERRORS: [string, string, string, boolean?][] = [
  ["check-interval", " 5", "whole seconds from 2 to 3600"],
  ["check-timeout", "3 ", "whole seconds"],
  ["check-attempts", " 2", "from 1 to 30"],
  ["check-type", " http", "none, connection, http or http_body"],
  ["default-protocol", "http ", "tcp, udp, http or https"],
  ["default-proxy-protocol", " v2", "none, v1 or v2"],
  ["default-algorithm", " leastconn", "roundrobin"],
  ["default-stickiness", "table ", "none"],
  ["udp-check-port", " 80", "from 1 to 65535"],
  ["firewall-id", " 7", "positive whole number"],
  ["frontend-subnet-id", "7 ", "positive whole number"],
  ["backend-subnet-id", " 7", "positive whole number", true],
  ["backend-vpc-name", " vpc-a", "a VPC label", true],
  ["backend-ipv4-range", " 10.100.0.0/30", "IPv4 CIDR", true],
];

export const INVALID: InvalidCase[] = [
  { covers: "default-protocol", ann: { "default-protocol": "ftp" }, accepted: "tcp, udp, http or https" },
  { covers: "default-proxy-protocol", ann: { "default-proxy-protocol": "v3" }, accepted: "none, v1 or v2" },
  {
    covers: "default-proxy-protocol",
    ann: { "default-proxy-protocol": "v2" },
    ports: UDP,
    accepted: "proxy protocol none for udp",
  },
  { covers: "proxy-protocol", ann: { "proxy-protocol": "v9" }, accepted: "none, v1 or v2" },
  { covers: "default-algorithm", ann: { "default-algorithm": "random" }, accepted: "roundrobin" },
  {
    covers: "default-algorithm",
    ann: { "default-algorithm": "ring_hash" },
    accepted: "algorithm roundrobin, leastconn or source for tcp",
  },
  { covers: "default-stickiness", ann: { "default-stickiness": "sticky" }, accepted: "http_cookie" },
  {
    covers: "default-stickiness",
    ann: { "default-stickiness": "session", "default-protocol": "http" },
    accepted: "stickiness none, table or http_cookie for http",
  },
  { covers: "port-<N>", ann: { "port-80": "{not json" }, key: "port-80", accepted: "a JSON object" },
  { covers: "port-<N>", ann: { "port-80": "[1]" }, key: "port-80", accepted: "a JSON object" },
  { covers: "port-<N>", ann: { "port-80": '{"protocol": 5}' }, key: "port-80", accepted: "a JSON object" },
  // Not a protocol at all: the Go CCM's getPortProtocol refuses it too.
  {
    covers: "port-<N>",
    ann: { "port-53": '{"protocol": "sctp"}' },
    ports: UDP,
    key: "port-53",
    accepted: "protocol udp for UDP port 53",
  },
  {
    covers: "port-<N>",
    ann: { "port-80": '{"protocol": "ftp"}' },
    key: "port-80",
    accepted: "protocol tcp, http or https for TCP port 80",
  },
  {
    covers: "port-<N>",
    ann: { "port-443": '{"protocol": "https"}' },
    ports: [port(443)],
    key: "port-443",
    accepted: '"tls-secret-name" for https port 443',
  },
  {
    covers: "port-<N>",
    ann: { "default-protocol": "https" },
    ports: [port(443)],
    key: "port-443",
    accepted: '"tls-secret-name" for https port 443',
  },
  {
    covers: "port-<N>",
    ann: { "port-53": '{"tls-secret-name": "x"}' },
    ports: UDP,
    key: "port-53",
    accepted: 'no "tls-secret-name" on udp port 53',
  },
  {
    covers: "port-<N>",
    ann: { "port-53": '{"udp-check-port": "0"}' },
    ports: UDP,
    key: "port-53",
    accepted: '"udp-check-port" from 1 to 65535',
  },
  {
    covers: "port-<N>",
    ann: { "port-80": '{"algorithm": "ring_hash"}' },
    key: "port-80",
    accepted: "algorithm roundrobin, leastconn or source for tcp",
  },
  { covers: "check-type", ann: { "check-type": "tcp" }, accepted: "none, connection, http or http_body" },
  { covers: "check-body", ann: { "check-type": "http_body" }, accepted: "check-type is http_body" },
  { covers: "check-body", ann: { "check-type": "http_body", "check-body": "" }, accepted: "non-empty" },
  { covers: "check-interval", ann: { "check-interval": "abc" }, accepted: "whole seconds from 2 to 3600" },
  { covers: "check-interval", ann: { "check-interval": "1" }, accepted: "whole seconds from 2 to 3600" },
  { covers: "check-interval", ann: { "check-interval": "3" }, accepted: "more than check-timeout" },
  { covers: "check-timeout", ann: { "check-timeout": "31" }, accepted: "from 1 to 30" },
  { covers: "check-timeout", ann: { "check-timeout": "5" }, accepted: "less than check-interval" },
  { covers: "check-attempts", ann: { "check-attempts": "0" }, accepted: "from 1 to 30" },
  { covers: "check-passive", ann: { "check-passive": "yes" }, accepted: "true or false" },
  { covers: "udp-check-port", ann: { "udp-check-port": "70000" }, ports: UDP, accepted: "1 to 65535" },
  // The Go CCM looks a negative ID up and fails on it (0 and garbage it ignores: annotation_lenient_cases.ts).
  { covers: "nodebalancer-id", ann: { "nodebalancer-id": "-1" }, accepted: "positive whole number" },
  { covers: "firewall-id", ann: { "firewall-id": "fw" }, accepted: "positive whole number" },
  {
    covers: "firewall-acl",
    ann: { "firewall-acl": '{"allowList": {"ipv4": ["10.0.0.0/8"]}, "denyList": {"ipv4": ["10.0.0.0/8"]}}' },
    accepted: 'exactly one of "allowList" or "denyList"',
  },
  {
    covers: "firewall-acl",
    ann: { "firewall-acl": "{}" },
    accepted: 'exactly one of "allowList" or "denyList"',
  },
  { covers: "firewall-acl", ann: { "firewall-acl": "allow all" }, accepted: "a JSON object" },
  {
    covers: "firewall-acl",
    ann: { "firewall-acl": '{"allowList": {"ipv4": ["10.0.0.1"]}}' },
    accepted: 'allowList.ipv4 as a list of IPv4 CIDRs ("10.0.0.1" is not one)',
  },
  {
    covers: "firewall-acl",
    ann: { "firewall-acl": '{"denyList": {"ipv6": ["10.0.0.0/8"]}}' },
    accepted: "denyList.ipv6 as a list of IPv6 CIDRs",
  },
  {
    covers: "firewall-acl",
    ann: { "firewall-acl": '{"allowList": {"ipv4": []}}' },
    accepted: "at least one address",
  },
  {
    covers: "firewall-acl",
    ann: {
      "firewall-acl": JSON.stringify({
        allowList: { ipv4: Array.from({ length: 26 * 255 }, (_, i) => `10.${i >> 8}.${i & 255}.0/32`) },
      }),
    },
    accepted: "at most 25 rules",
  },
  {
    covers: "backend-ipv4-range",
    ann: { "backend-ipv4-range": "10.100.0.0" },
    defaults: VPC,
    accepted: "IPv4 CIDR",
  },
  {
    covers: "backend-ipv4-range",
    ann: { "backend-ipv4-range": "10.200.0.0/30" },
    defaults: defaults({ vpc: { names: ["vpc1"] }, services: { backendIpv4Subnet: "10.100.0.0/24" } }),
    accepted: "inside 10.100.0.0/24",
  },
  { covers: "backend-vpc-name", ann: { "backend-vpc-name": "" }, defaults: VPC, accepted: "a VPC label" },
  {
    covers: "backend-subnet-name",
    ann: { "backend-subnet-name": "  " },
    defaults: VPC,
    accepted: "a subnet label",
  },
  {
    covers: "backend-subnet-id",
    ann: { "backend-subnet-id": "-3" },
    defaults: VPC,
    accepted: "positive whole",
  },
  { covers: "frontend-subnet-id", ann: { "frontend-subnet-id": "abc" }, accepted: "positive whole number" },
  {
    covers: "frontend-subnet-id",
    ann: { "frontend-ipv4-range": "10.0.0.0/24" },
    accepted: "frontend ranges need frontend-subnet-id",
  },
  {
    covers: "frontend-vpc-name",
    ann: { "frontend-subnet-name": "pub" },
    accepted: "with frontend-subnet-name",
  },
  {
    covers: "frontend-subnet-name",
    ann: { "frontend-vpc-name": "front" },
    accepted: "with frontend-vpc-name",
  },
  {
    covers: "frontend-ipv4-range",
    ann: { "frontend-subnet-id": "9", "frontend-ipv4-range": "fd00::/64" },
    accepted: "an IPv4 CIDR",
  },
  {
    covers: "frontend-ipv6-range",
    ann: { "frontend-subnet-id": "9", "frontend-ipv6-range": "10.0.0.0/24" },
    accepted: "an IPv6 CIDR",
  },
  { covers: "reserved-ipv4", ann: { "reserved-ipv4": "2600::1" }, accepted: "reserved IPv4 address" },
  { covers: "reserved-ipv4", ann: { "reserved-ipv4": "1.2.3" }, accepted: "reserved IPv4 address" },
  // Spaces around a value the Go CCM reads with strconv.Atoi, a lookup or a name match: it refuses them too.
  ...SPACED_ERRORS.map(([name, value, accepted, vpc]): InvalidCase => ({
    covers: name,
    ann: { [name]: value },
    ...(vpc ? { defaults: VPC } : {}),
    accepted,
  })),
  {
    covers: "port-<N>",
    ann: { "port-80": '{"protocol": " http"}' },
    key: "port-80",
    accepted: "protocol tcp, http or https for TCP port 80",
  },
  {
    covers: "port-<N>",
    ann: { "port-53": '{"udp-check-port": " 53"}' },
    ports: UDP,
    key: "port-53",
    accepted: '"udp-check-port" from 1 to 65535',
  },
  {
    covers: "port-<N>",
    ann: { "port-80": '{"algorithm": "leastconn "}' },
    key: "port-80",
    accepted: "algorithm roundrobin, leastconn or source",
  },
];
