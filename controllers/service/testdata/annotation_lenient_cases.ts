/**
 * Values the Go CCM reads leniently, for `annotations/parse_test.ts`: each must leave the Service syncing with
 * the value the Go CCM would use (or, where the API would refuse that, the safe one `docs/migration.md` names),
 * report the value as lenient, and mark what an existing NodeBalancer keeps.
 */
import type { V1LoadBalancerIngress, V1ServicePort } from "@kubernetes/client-node";
import type { CurrentNodeBalancerShape } from "../annotations/parse.ts";
import type { ServiceSpec } from "../annotations/spec.ts";
import type { ServiceDefaults } from "../annotations/spec.ts";
import { defaults, port } from "./fixtures.ts";
import { UDP } from "./annotation_valid_cases.ts";

/** A lenient value, what the spec holds for it and the part of the report that says so. */
export interface LenientCase {
  covers: string;
  ann: Record<string, string>;
  ports?: V1ServicePort[];
  defaults?: ServiceDefaults;
  /** The Service's `status.loadBalancer.ingress`. */
  ingress?: V1LoadBalancerIngress[];
  /** What its existing NodeBalancer shows. */
  current?: CurrentNodeBalancerShape;
  get: (spec: ServiceSpec) => unknown;
  want: unknown;
  /** A part of the `used` text. */
  used: string;
}

const BOOL_AS_FALSE = ["hostname-only-ingress", "enable-ipv6-ingress", "enable-ipv6-backends"];
const PREMIUM = defaults({ services: { defaultNodeBalancerType: "premium" } });

/** One row per kind of value the issue lists (and each spelling the Go CCM treats alike). */
export const LENIENT: LenientCase[] = [
  // getConnectionThrottle: clamp to 0–20, anything not a number is 0; an existing NodeBalancer keeps its own.
  {
    covers: "throttle",
    ann: { throttle: "50" },
    get: (s) => [s.throttle, s.keep],
    want: [20, ["client_conn_throttle"]],
    used: "20 on a new",
  },
  {
    covers: "throttle",
    ann: { throttle: "-3" },
    get: (s) => [s.throttle, s.keep],
    want: [0, ["client_conn_throttle"]],
    used: "0 on a new",
  },
  {
    covers: "throttle",
    ann: { throttle: "fast" },
    get: (s) => [s.throttle, s.keep],
    want: [0, ["client_conn_throttle"]],
    used: "keeps its client_conn_throttle",
  },
  { covers: "throttle", ann: { throttle: "" }, get: (s) => s.throttle, want: 0, used: "0 on a new" },
  // getServiceBoolAnnotation: anything but a Go bool is false.
  ...BOOL_AS_FALSE.flatMap((name) =>
    ["yes", "on", "tRuE"].map((value) => ({
      covers: name,
      ann: { [name]: value },
      get: (s: ServiceSpec) => [s.hostnameOnlyIngress, s.ipv6Ingress, s.ipv6Backends],
      want: [false, false, false],
      used: "false (as the Go CCM reads it)",
    }))
  ),
  // ...but what an existing Service or NodeBalancer shows is kept.
  {
    covers: "enable-ipv6-backends",
    ann: { "enable-ipv6-backends": "yes" },
    current: { ipv6Backends: true },
    get: (s) => [s.ipv6Backends, s.keepsBackendFamily, s.backendVpc],
    want: [true, true, null],
    used: "true (kept",
  },
  {
    covers: "enable-ipv6-backends",
    ann: { "enable-ipv6-backends": "yes" },
    current: { ipv6Backends: false },
    get: (s) => [s.ipv6Backends, s.keepsBackendFamily],
    want: [false, true],
    used: "false (kept",
  },
  {
    covers: "hostname-only-ingress",
    ann: { "hostname-only-ingress": "yes" },
    ingress: [{ hostname: "nb-1.example" }],
    get: (s) => s.hostnameOnlyIngress,
    want: true,
    used: "true (kept: the status is hostname-only",
  },
  {
    covers: "hostname-only-ingress",
    ann: { "hostname-only-ingress": "yes" },
    defaults: defaults({ hostnameOnlyIngress: true }),
    ingress: [{ ip: "192.0.2.1", hostname: "nb-1.example" }],
    get: (s) => s.hostnameOnlyIngress,
    want: false,
    used: "false (kept: the status is not hostname-only",
  },
  {
    covers: "enable-ipv6-ingress",
    ann: { "enable-ipv6-ingress": "on" },
    ingress: [{ ip: "192.0.2.1" }, { ip: "2001:db8::1" }],
    get: (s) => s.ipv6Ingress,
    want: true,
    used: "true (kept: the status has IPv6",
  },
  {
    covers: "enable-ipv6-ingress",
    ann: { "enable-ipv6-ingress": "on" },
    ingress: [{ hostname: "nb-1.example" }],
    get: (s) => s.ipv6Ingress,
    want: false,
    used: "false (as the Go CCM reads it)",
  },
  // The Go CCM reads false and would delete; nothing is deleted on a value that cannot be read.
  {
    covers: "preserve",
    ann: { preserve: "yes" },
    get: (s) => s.preserve,
    want: true,
    used: "true (nothing is deleted",
  },
  {
    covers: "retain-reserved-ipv4",
    ann: { "retain-reserved-ipv4": "nope" },
    get: (s) => s.retainReservedIpv4,
    want: true,
    used: "true (nothing is deleted",
  },
  // getNodeBalancerForService: 0 or not a number means no ID; the status finds the NodeBalancer.
  {
    covers: "nodebalancer-id",
    ann: { "nodebalancer-id": "0" },
    get: (s) => s.nodeBalancerId,
    want: null,
    used: "none",
  },
  {
    covers: "nodebalancer-id",
    ann: { "nodebalancer-id": "nb-1" },
    get: (s) => s.nodeBalancerId,
    want: null,
    used: "none",
  },
  // GetLinodeNBType: an unknown type is --default-nodebalancer-type.
  {
    covers: "nodebalancer-type",
    ann: { "nodebalancer-type": "huge" },
    get: (s) => [s.nodeBalancerType, s.keep],
    want: ["common", ["type"]],
    used: "common (--default-nodebalancer-type)",
  },
  {
    covers: "nodebalancer-type",
    ann: { "nodebalancer-type": "premium-40gb" },
    defaults: PREMIUM,
    get: (s) => s.nodeBalancerType,
    want: "premium",
    used: "an existing one keeps its type",
  },
  // The API refuses tags outside 3–50 characters: they are left out, the others apply.
  {
    covers: "tags",
    ann: { tags: "ok-tag,ab" },
    get: (s) => [s.tags, s.keep],
    want: [["ok-tag"], ["tags"]],
    used: 'without "ab"',
  },
  {
    covers: "tags",
    ann: { tags: `team-a,${"x".repeat(51)}` },
    get: (s) => s.tags,
    want: ["team-a"],
    used: "without",
  },
  // Ownership and identity tags are this CCM's to write: dropped, in any letter case; not kept (`keep`), so an
  // existing NodeBalancer loses none it has but gains none from the Service.
  {
    covers: "tags",
    ann: { tags: `team-a, ccm-cluster:${"f".repeat(32)},CCM-Owner:kubernetes/0123456789abcdef` },
    get: (s) => [s.tags, s.keep],
    want: [["team-a"], []],
    used: `without "ccm-cluster:${"f".repeat(32)}", "CCM-Owner:kubernetes/0123456789abcdef"`,
  },
  // The API refuses a check_path without its leading slash: a new config gets /, an existing one keeps its path.
  {
    covers: "check-path",
    ann: { "check-type": "http", "check-path": "healthz" },
    get: (s) => [s.ports[0]?.check.path, s.ports[0]?.keep],
    want: ["/", ["check_path"]],
    used: "/ on a new config",
  },
  // A default-protocol of the other family: the port keeps its own family's protocol.
  {
    covers: "default-protocol",
    ann: { "default-protocol": "http" },
    ports: UDP,
    get: (s) => [s.ports[0]?.protocol, s.ports[0]?.keep],
    want: ["udp", ["protocol"]],
    used: "udp on UDP port 53",
  },
  {
    covers: "default-protocol",
    ann: { "default-protocol": "udp" },
    ports: [port(80), port(53, "UDP")],
    get: (s) => s.ports.map((p) => [p.protocol, p.keep]),
    want: [["tcp", ["protocol"]], ["udp", []]],
    used: "tcp on TCP port 80",
  },
  // The same from the port's own JSON: the Go CCM's getPortProtocol checks the value, not the family.
  {
    covers: "port-53",
    ann: { "port-53": '{"protocol": "http"}' },
    ports: UDP,
    get: (s) => [s.ports[0]?.protocol, s.ports[0]?.keep],
    want: ["udp", ["protocol"]],
    used: "udp on UDP port 53 when new",
  },
  {
    covers: "port-80",
    ann: { "port-80": '{"protocol": "UDP"}' },
    get: (s) => [s.ports[0]?.protocol, s.ports[0]?.keep],
    want: ["tcp", ["protocol"]],
    used: "an existing config keeps its protocol",
  },
  // Spaces around a value the Go CCM reads leniently: read as it reads them.
  {
    covers: "throttle",
    ann: { throttle: " 5" },
    get: (s) => [s.throttle, s.keep],
    want: [0, ["client_conn_throttle"]],
    used: "0 on a new NodeBalancer",
  },
  {
    covers: "nodebalancer-id",
    ann: { "nodebalancer-id": "42 " },
    get: (s) => s.nodeBalancerId,
    want: null,
    used: "none",
  },
  {
    covers: "nodebalancer-type",
    ann: { "nodebalancer-type": " premium" },
    get: (s) => [s.nodeBalancerType, s.keep],
    want: ["common", ["type"]],
    used: "common (--default-nodebalancer-type)",
  },
  ...["yes ", " true"].map((value) => ({
    covers: "enable-ipv6-backends",
    ann: { "enable-ipv6-backends": value },
    get: (s: ServiceSpec) => s.ipv6Backends,
    want: false,
    used: "false (as the Go CCM reads it)",
  })),
  ...[" /healthz", "/healthz ", "  "].map((value) => ({
    covers: "check-path",
    ann: { "check-type": "http", "check-path": value },
    get: (s: ServiceSpec) => [s.ports[0]?.check.path, s.ports[0]?.keep],
    want: ["/", ["check_path"]],
    used: "/ on a new config",
  })),
];
