/** Invalid values of every Service annotation, for `annotations/parse_test.ts`. */
import type { V1ServicePort } from "@kubernetes/client-node";
import type { ServiceDefaults } from "../annotations/defaults.ts";
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
export const INVALID: InvalidCase[] = [
  { covers: "throttle", ann: { throttle: "21" }, accepted: "0 to 20" },
  { covers: "throttle", ann: { throttle: "-1" }, accepted: "0 to 20" },
  { covers: "throttle", ann: { throttle: "fast" }, accepted: "0 to 20" },
  { covers: "default-protocol", ann: { "default-protocol": "ftp" }, accepted: "tcp, udp, http or https" },
  {
    covers: "default-protocol",
    ann: { "default-protocol": "http" },
    ports: UDP,
    accepted: "protocol udp for UDP port 53",
  },
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
  {
    covers: "port-<N>",
    ann: { "port-53": '{"protocol": "http"}' },
    ports: UDP,
    key: "port-53",
    accepted: "protocol udp for UDP port 53",
  },
  {
    covers: "port-<N>",
    ann: { "port-80": '{"protocol": "udp"}' },
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
  {
    covers: "check-path",
    ann: { "check-type": "http", "check-path": "healthz" },
    accepted: "starting with /",
  },
  { covers: "check-body", ann: { "check-type": "http_body" }, accepted: "check-type is http_body" },
  { covers: "check-body", ann: { "check-type": "http_body", "check-body": "  " }, accepted: "non-empty" },
  { covers: "check-interval", ann: { "check-interval": "abc" }, accepted: "whole seconds from 2 to 3600" },
  { covers: "check-interval", ann: { "check-interval": "1" }, accepted: "whole seconds from 2 to 3600" },
  { covers: "check-interval", ann: { "check-interval": "3" }, accepted: "more than check-timeout" },
  { covers: "check-timeout", ann: { "check-timeout": "31" }, accepted: "from 1 to 30" },
  { covers: "check-timeout", ann: { "check-timeout": "5" }, accepted: "less than check-interval" },
  { covers: "check-attempts", ann: { "check-attempts": "0" }, accepted: "from 1 to 30" },
  { covers: "check-passive", ann: { "check-passive": "yes" }, accepted: "true or false" },
  { covers: "udp-check-port", ann: { "udp-check-port": "70000" }, ports: UDP, accepted: "1 to 65535" },
  { covers: "preserve", ann: { preserve: "yes" }, accepted: "true or false" },
  { covers: "nodebalancer-id", ann: { "nodebalancer-id": "0" }, accepted: "positive whole number" },
  { covers: "nodebalancer-id", ann: { "nodebalancer-id": "nb-1" }, accepted: "positive whole number" },
  {
    covers: "nodebalancer-type",
    ann: { "nodebalancer-type": "huge" },
    accepted: "common, premium or premium_40gb",
  },
  { covers: "hostname-only-ingress", ann: { "hostname-only-ingress": "maybe" }, accepted: "true or false" },
  { covers: "tags", ann: { tags: "ok-tag,ab" }, accepted: "3 to 50 characters" },
  { covers: "tags", ann: { tags: "x".repeat(51) }, accepted: "3 to 50 characters" },
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
  { covers: "enable-ipv6-ingress", ann: { "enable-ipv6-ingress": "2" }, accepted: "true or false" },
  { covers: "enable-ipv6-backends", ann: { "enable-ipv6-backends": "on" }, accepted: "true or false" },
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
  { covers: "retain-reserved-ipv4", ann: { "retain-reserved-ipv4": "nope" }, accepted: "true or false" },
];
