/** Valid values of every Service annotation, for `annotations/parse_test.ts`. */
import type { V1ServicePort } from "@kubernetes/client-node";
import type { ServiceDefaults } from "../annotations/spec.ts";
import { defaults, port } from "./fixtures.ts";
import type { ServiceSpec } from "../annotations/spec.ts";

/** CCM defaults with one VPC. */
export const VPC = defaults({ vpc: { names: ["vpc1"], subnetNames: ["default"] } });
/** A Service with one UDP port. */
export const UDP = [port(53, "UDP")];

const FIREWALL_ACL = '{"allowList": {"ipv4": ["192.168.0.0/16"], "ipv6": ["2001:db8::/32"]}}';

/** A valid annotation value and what the spec holds for it. */
export interface ValidCase {
  /** The annotation this case covers (table name). */
  covers: string;
  ann: Record<string, string>;
  ports?: V1ServicePort[];
  defaults?: ServiceDefaults;
  get: (spec: ServiceSpec) => unknown;
  want: unknown;
}

const p0 = (s: ServiceSpec) => s.ports[0];

/** Valid values of every annotation. */
export const VALID: ValidCase[] = [
  { covers: "throttle", ann: { throttle: "0" }, get: (s) => s.throttle, want: 0 },
  { covers: "throttle", ann: { throttle: "20" }, get: (s) => s.throttle, want: 20 },
  { covers: "throttle", ann: { throttle: "+5" }, get: (s) => s.throttle, want: 5 },
  {
    covers: "default-protocol",
    ann: { "default-protocol": "http" },
    get: (s) => p0(s)?.protocol,
    want: "http",
  },
  {
    covers: "default-protocol",
    ann: { "default-protocol": "HTTP" },
    get: (s) => p0(s)?.protocol,
    want: "http",
  },
  {
    covers: "default-protocol",
    ann: { "default-protocol": "udp" },
    ports: UDP,
    get: (s) => p0(s)?.protocol,
    want: "udp",
  },
  {
    covers: "default-proxy-protocol",
    ann: { "default-proxy-protocol": "v2" },
    get: (s) => p0(s)?.proxyProtocol,
    want: "v2",
  },
  { covers: "proxy-protocol", ann: { "proxy-protocol": "v1" }, get: (s) => p0(s)?.proxyProtocol, want: "v1" },
  {
    covers: "default-algorithm",
    ann: { "default-algorithm": "leastconn" },
    get: (s) => p0(s)?.algorithm,
    want: "leastconn",
  },
  {
    covers: "default-algorithm",
    ann: { "default-algorithm": "ring_hash" },
    ports: UDP,
    get: (s) => p0(s)?.algorithm,
    want: "ring_hash",
  },
  {
    covers: "default-stickiness",
    ann: { "default-stickiness": "http_cookie", "default-protocol": "http" },
    get: (s) => p0(s)?.stickiness,
    want: "http_cookie",
  },
  {
    covers: "default-stickiness",
    ann: { "default-stickiness": "source_ip" },
    ports: UDP,
    get: (s) => p0(s)?.stickiness,
    want: "source_ip",
  },
  {
    covers: "port-<N>",
    ann: { "port-443": '{ "tls-secret-name": "prod-app-tls", "protocol": "https", "proxy-protocol": "v2" }' },
    ports: [port(443)],
    get: (s) => [p0(s)?.protocol, p0(s)?.tlsSecretName, p0(s)?.proxyProtocol, p0(s)?.stickiness],
    want: ["https", "prod-app-tls", "v2", "table"],
  },
  {
    covers: "port-<N>",
    ann: { "port-53": '{"udp-check-port": 8053, "algorithm": "leastconn", "stickiness": "none"}' },
    ports: UDP,
    get: (s) => [p0(s)?.udpCheckPort, p0(s)?.algorithm, p0(s)?.stickiness],
    want: [8053, "leastconn", "none"],
  },
  { covers: "check-type", ann: { "check-type": "http" }, get: (s) => p0(s)?.check.path, want: "/" },
  { covers: "check-type", ann: { "check-type": "none" }, get: (s) => p0(s)?.check.type, want: "none" },
  {
    covers: "check-path",
    ann: { "check-type": "http", "check-path": "/healthz" },
    get: (s) => p0(s)?.check.path,
    want: "/healthz",
  },
  {
    covers: "check-body",
    ann: { "check-type": "http_body", "check-body": "ok" },
    get: (s) => s.ports[0]?.check.body,
    want: "ok",
  },
  // The Go CCM refuses only an empty body; the API takes any regular expression, spaces too.
  {
    covers: "check-body",
    ann: { "check-type": "http_body", "check-body": " ok " },
    get: (s) => [p0(s)?.check.path, p0(s)?.check.body],
    want: ["/", " ok "],
  },
  {
    covers: "check-interval",
    ann: { "check-interval": "10" },
    get: (s) => p0(s)?.check.intervalSec,
    want: 10,
  },
  { covers: "check-timeout", ann: { "check-timeout": "4" }, get: (s) => p0(s)?.check.timeoutSec, want: 4 },
  { covers: "check-attempts", ann: { "check-attempts": "30" }, get: (s) => p0(s)?.check.attempts, want: 30 },
  { covers: "check-passive", ann: { "check-passive": "true" }, get: (s) => p0(s)?.check.passive, want: true },
  {
    covers: "check-passive",
    ann: { "check-passive": "true" },
    ports: UDP,
    get: (s) => p0(s)?.check.passive,
    want: false,
  },
  {
    covers: "udp-check-port",
    ann: { "udp-check-port": "8080" },
    ports: UDP,
    get: (s) => p0(s)?.udpCheckPort,
    want: 8080,
  },
  { covers: "preserve", ann: { preserve: "true" }, get: (s) => s.preserve, want: true },
  {
    covers: "nodebalancer-id",
    ann: { "nodebalancer-id": "12345" },
    get: (s) => s.nodeBalancerId,
    want: 12345,
  },
  {
    covers: "nodebalancer-type",
    ann: { "nodebalancer-type": "PREMIUM_40GB" },
    get: (s) => s.nodeBalancerType,
    want: "premium_40gb",
  },
  {
    covers: "hostname-only-ingress",
    ann: { "hostname-only-ingress": "true" },
    get: (s) => s.hostnameOnlyIngress,
    want: true,
  },
  {
    covers: "hostname-only-ingress",
    ann: { "hostname-only-ingress": "false" },
    defaults: defaults({ hostnameOnlyIngress: true }),
    get: (s) => s.hostnameOnlyIngress,
    want: false,
  },
  {
    covers: "tags",
    ann: { tags: "production, web-tier,,production" },
    get: (s) => s.tags,
    want: ["production", "web-tier"],
  },
  {
    covers: "firewall-id",
    ann: { "firewall-id": "77" },
    get: (s) => s.firewall,
    want: { kind: "id", firewallId: 77 },
  },
  {
    covers: "firewall-acl",
    ann: { "firewall-acl": FIREWALL_ACL },
    get: (s) => s.firewall,
    want: {
      kind: "acl",
      list: "allowList",
      addresses: { ipv4: ["192.168.0.0/16"], ipv6: ["2001:db8::/32"] },
    },
  },
  {
    covers: "firewall-acl",
    ann: { "firewall-acl": '{"denyList": {"ipv4": ["203.0.113.7/32"]}, "allowList": null}' },
    get: (s) => s.firewall,
    want: { kind: "acl", list: "denyList", addresses: { ipv4: ["203.0.113.7/32"], ipv6: [] } },
  },
  {
    covers: "enable-ipv6-ingress",
    ann: { "enable-ipv6-ingress": "True" },
    get: (s) => s.ipv6Ingress,
    want: true,
  },
  {
    covers: "enable-ipv6-backends",
    ann: { "enable-ipv6-backends": "1" },
    defaults: VPC,
    get: (s) => [s.ipv6Backends, s.backendVpc],
    want: [true, null],
  },
  {
    covers: "backend-ipv4-range",
    ann: { "backend-ipv4-range": "10.100.0.0/30" },
    defaults: VPC,
    get: (s) => s.backendVpc,
    want: {
      subnet: { kind: "names", vpcName: "vpc1", subnetName: "default" },
      ipv4Range: "10.100.0.0/30",
      ipv4RangeAutoAssign: false,
    },
  },
  {
    covers: "backend-vpc-name",
    ann: { "backend-vpc-name": "vpc2" },
    defaults: VPC,
    get: (s) => s.backendVpc?.subnet,
    want: { kind: "names", vpcName: "vpc2", subnetName: "default" },
  },
  {
    covers: "backend-subnet-name",
    ann: { "backend-subnet-name": "lb" },
    defaults: VPC,
    get: (s) => s.backendVpc?.subnet,
    want: { kind: "names", vpcName: "vpc1", subnetName: "lb" },
  },
  {
    covers: "backend-subnet-id",
    ann: { "backend-subnet-id": "42", "backend-vpc-name": "ignored-by-id" },
    defaults: VPC,
    get: (s) => s.backendVpc?.subnet,
    want: { kind: "id", subnetId: 42 },
  },
  {
    covers: "frontend-subnet-id",
    ann: { "frontend-subnet-id": "169341" },
    get: (s) => s.frontendVpc,
    want: { subnet: { kind: "id", subnetId: 169341 }, ipv4Range: null, ipv6Range: null },
  },
  {
    covers: "frontend-vpc-name",
    ann: { "frontend-vpc-name": "front", "frontend-subnet-name": "pub" },
    get: (s) => s.frontendVpc?.subnet,
    want: { kind: "names", vpcName: "front", subnetName: "pub" },
  },
  {
    covers: "frontend-subnet-name",
    ann: { "frontend-vpc-name": "front", "frontend-subnet-name": "pub", "frontend-subnet-id": "9" },
    get: (s) => s.frontendVpc?.subnet,
    want: { kind: "id", subnetId: 9 },
  },
  {
    covers: "frontend-ipv4-range",
    ann: { "frontend-subnet-id": "9", "frontend-ipv4-range": "10.0.0.0/24" },
    get: (s) => s.frontendVpc?.ipv4Range,
    want: "10.0.0.0/24",
  },
  {
    covers: "frontend-ipv6-range",
    ann: { "frontend-subnet-id": "9", "frontend-ipv6-range": "2001:db8::/64" },
    get: (s) => s.frontendVpc?.ipv6Range,
    want: "2001:db8::/64",
  },
  {
    covers: "reserved-ipv4",
    ann: { "reserved-ipv4": "203.0.113.9" },
    get: (s) => s.reservedIpv4,
    want: "203.0.113.9",
  },
  {
    covers: "retain-reserved-ipv4",
    ann: { "retain-reserved-ipv4": "false" },
    get: (s) => s.retainReservedIpv4,
    want: false,
  },
];
