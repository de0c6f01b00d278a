import assert from "node:assert/strict";
import type { V1ServicePort } from "@kubernetes/client-node";
import { annotationKey, ANNOTATIONS } from "./table.ts";
import { INVALID } from "../testdata/annotation_invalid_cases.ts";
import { VALID } from "../testdata/annotation_valid_cases.ts";
import { LENIENT } from "../testdata/annotation_lenient_cases.ts";
import { type AnnotationResult, parseServiceAnnotations } from "./parse.ts";
import { InvalidAnnotationError } from "./spec.ts";
import { defaults, port, service } from "../testdata/fixtures.ts";
import type { ServiceSpec } from "./spec.ts";

function parse(
  annotations: Record<string, string>,
  ports?: V1ServicePort[],
  d = defaults(),
): AnnotationResult {
  return parseServiceAnnotations(service({ annotations, ports }), d);
}

function specOf(result: AnnotationResult): ServiceSpec {
  if (!result.ok) assert.fail(`unexpected errors: ${result.errors.map((e) => e.message).join("; ")}`);
  return result.spec;
}

function errorsOf(result: AnnotationResult): InvalidAnnotationError[] {
  if (result.ok) assert.fail("expected errors, got a spec");
  return [...result.errors];
}

for (const c of VALID) {
  Deno.test(`parseServiceAnnotations() accepts ${c.covers}=${JSON.stringify(Object.values(c.ann).at(-1))}`, () => {
    assert.deepEqual(c.get(specOf(parse(c.ann, c.ports, c.defaults))), c.want);
  });
}

for (const c of INVALID) {
  const key = annotationKey(c.key ?? c.covers);
  Deno.test(`parseServiceAnnotations() refuses ${c.covers}=${JSON.stringify(Object.values(c.ann).at(-1)).slice(0, 40)}`, () => {
    const errors = errorsOf(parse(c.ann, c.ports, c.defaults));
    const mine = errors.find((e) => e.key === key);
    assert.ok(mine, `no error for ${key}: ${errors.map((e) => e.message).join("; ")}`);
    assert.ok(mine.accepted.includes(c.accepted), `accepted text "${mine.accepted}" lacks "${c.accepted}"`);
    assert.equal(mine.value, c.ann[c.key ?? c.covers] ?? "");
    assert.ok(mine instanceof InvalidAnnotationError);
  });
}

for (const c of LENIENT) {
  const key = annotationKey(c.covers);
  const value = JSON.stringify(c.ann[c.covers]).slice(0, 40);
  const on = c.ingress ? " on a Service with a status" : c.current ? " on an existing NodeBalancer" : "";
  Deno.test(`parseServiceAnnotations() reads ${c.covers}=${value} leniently${on} and goes on`, () => {
    const svc = service({ annotations: c.ann, ports: c.ports });
    if (c.ingress) svc.status = { loadBalancer: { ingress: c.ingress } };
    const spec = specOf(parseServiceAnnotations(svc, c.defaults ?? defaults(), c.current));
    assert.deepEqual(c.get(spec), c.want);
    const mine = spec.lenient.find((l) => l.key === key);
    assert.ok(mine, `not reported: ${JSON.stringify(spec.lenient)}`);
    assert.equal(mine.value, c.ann[c.covers]);
    assert.ok(mine.used.includes(c.used), `used text "${mine.used}" lacks "${c.used}"`);
    assert.ok(mine.message.startsWith(`${key}=${JSON.stringify(mine.value)}: expected `), mine.message);
  });
}

Deno.test("parseServiceAnnotations() tests cover a valid and an invalid or lenient value of every annotation in the table", () => {
  for (const { name } of ANNOTATIONS) {
    assert.ok(VALID.some((c) => c.covers === name), `no valid case for ${name}`);
    const bad = [...INVALID, ...LENIENT].some((c) => c.covers === name);
    assert.ok(bad, `no invalid or lenient case for ${name}`);
  }
});

Deno.test("parseServiceAnnotations() keeps lenient values beside errors, for lint", () => {
  const result = parse({ throttle: "99", "check-interval": "abc" });
  if (result.ok) assert.fail("expected errors");
  assert.deepEqual(result.errors.map((e) => e.key), [annotationKey("check-interval")]);
  assert.deepEqual(result.lenient.map((l) => l.key), [annotationKey("throttle")]);
});

Deno.test("parseServiceAnnotations() leaves a check-path unused without an http check, as the Go CCM ignores it", () => {
  const spec = specOf(parse({ "check-path": "healthz", "check-type": "connection" }));
  assert.deepEqual([spec.ports[0]?.check.path, spec.ports[0]?.keep, spec.lenient], [null, [], []]);
  assert.deepEqual(spec.warnings.map((w) => w.key), [annotationKey("check-path")]);
});

Deno.test("parseServiceAnnotations() applies every default to a Service without annotations", () => {
  assert.deepEqual(specOf(parse({})), {
    throttle: 20,
    nodeBalancerType: "common",
    nodeBalancerId: null,
    preserve: false,
    reservedIpv4: null,
    retainReservedIpv4: true,
    hostnameOnlyIngress: false,
    ipv6Ingress: false,
    ipv6Backends: false,
    keepsBackendFamily: false,
    tags: [],
    firewall: { kind: "none" },
    backendVpc: null,
    frontendVpc: null,
    ports: [{
      port: 80,
      family: "tcp",
      protocol: "tcp",
      proxyProtocol: "none",
      algorithm: "roundrobin",
      stickiness: null,
      tlsSecretName: null,
      udpCheckPort: null,
      check: {
        type: "connection",
        path: null,
        body: null,
        intervalSec: 5,
        timeoutSec: 3,
        attempts: 2,
        passive: false,
        keepPath: false,
      },
      keep: [],
    }],
    keep: [],
    warnings: [],
    lenient: [],
  });
});

Deno.test("parseServiceAnnotations() gives udp ports session stickiness, no check and check port 80", () => {
  const [udp] = specOf(parse({}, [port(53, "UDP")])).ports;
  assert.deepEqual(
    [udp?.protocol, udp?.stickiness, udp?.check.type, udp?.udpCheckPort, udp?.check.passive],
    ["udp", "session", "none", 80, false],
  );
});

Deno.test("parseServiceAnnotations() takes CCM-wide defaults from the flags and environment", () => {
  const d = defaults({
    hostnameOnlyIngress: true,
    services: {
      defaultNodeBalancerType: "premium",
      enableIpv6ForLoadBalancers: true,
      enableIpv6ForNodeBalancerBackends: true,
    },
  });
  const spec = specOf(parse({}, [port(80)], d));
  assert.deepEqual(
    [spec.nodeBalancerType, spec.hostnameOnlyIngress, spec.ipv6Ingress, spec.ipv6Backends],
    ["premium", true, true, true],
  );
});

const TRUE_SPELLINGS = ["1", "t", "T", "TRUE", "true", "True"];
const FALSE_SPELLINGS = ["0", "f", "F", "FALSE", "false", "False"];
for (const value of [...TRUE_SPELLINGS, ...FALSE_SPELLINGS]) {
  Deno.test(`parseServiceAnnotations() reads the Go bool ${value} in every bool annotation`, () => {
    const want = TRUE_SPELLINGS.includes(value);
    const spec = specOf(parse({
      preserve: value,
      "retain-reserved-ipv4": value,
      "hostname-only-ingress": value,
      "enable-ipv6-ingress": value,
      "enable-ipv6-backends": value,
      "check-passive": value,
    }));
    const got = [spec.preserve, spec.retainReservedIpv4, spec.hostnameOnlyIngress, spec.ipv6Ingress];
    assert.deepEqual([...got, spec.ipv6Backends, spec.ports[0]?.check.passive], Array(6).fill(want));
  });
}

for (const value of ["yes", "no", "on", "", " true", "tRuE"]) {
  Deno.test(`parseServiceAnnotations() reports the bool ${JSON.stringify(value)} and reads it as the Go CCM`, () => {
    const spec = specOf(parse({ "hostname-only-ingress": value, preserve: value }));
    assert.deepEqual([spec.hostnameOnlyIngress, spec.preserve], [false, true]);
    assert.equal(spec.lenient.length, 2);
  });
  Deno.test(`parseServiceAnnotations() refuses the bool ${JSON.stringify(value)} in check-passive, as the Go CCM`, () => {
    assert.equal(parse({ "check-passive": value }).ok, false);
  });
}

const PRECEDENCE: {
  name: string;
  ann: Record<string, string>;
  ports?: ReturnType<typeof port>[];
  want: [string, string, string, string | null];
}[] = [
  { name: "built-in defaults", ann: {}, want: ["tcp", "none", "roundrobin", null] },
  {
    name: "default annotations over built-ins",
    ann: { "default-protocol": "http", "default-proxy-protocol": "v1", "default-algorithm": "source" },
    want: ["http", "v1", "source", "table"],
  },
  {
    name: "port JSON over default annotations",
    ann: {
      "default-protocol": "http",
      "default-proxy-protocol": "v1",
      "default-algorithm": "source",
      "default-stickiness": "none",
      "port-80": '{"protocol": "tcp", "proxy-protocol": "v2", "algorithm": "leastconn"}',
    },
    want: ["tcp", "v2", "leastconn", null],
  },
  {
    name: "port JSON stickiness over default-stickiness",
    ann: {
      "default-protocol": "http",
      "default-stickiness": "none",
      "port-80": '{"stickiness": "http_cookie"}',
    },
    want: ["http", "none", "roundrobin", "http_cookie"],
  },
  {
    name: "default-proxy-protocol over the deprecated proxy-protocol",
    ann: { "proxy-protocol": "v1", "default-proxy-protocol": "v2" },
    want: ["tcp", "v2", "roundrobin", null],
  },
  {
    name: "empty port JSON values fall through to the defaults",
    ann: { "default-protocol": "http", "port-80": '{"protocol": ""}' },
    want: ["http", "none", "roundrobin", "table"],
  },
  {
    name: "a port without its own JSON next to one with it",
    ann: { "port-443": '{"protocol": "http"}' },
    ports: [port(80), port(443)],
    want: ["tcp", "none", "roundrobin", null],
  },
];

for (const c of PRECEDENCE) {
  Deno.test(`parseServiceAnnotations() precedence: ${c.name}`, () => {
    const p = specOf(parse(c.ann, c.ports ?? [port(80)])).ports[0];
    assert.deepEqual([p?.protocol, p?.proxyProtocol, p?.algorithm, p?.stickiness], c.want);
  });
}

Deno.test("parseServiceAnnotations() udp-check-port: port JSON over the annotation over 80", () => {
  const ports = [port(53, "UDP"), port(54, "UDP"), port(55, "UDP")];
  const one = specOf(parse({ "udp-check-port": "9000", "port-53": '{"udp-check-port": "9053"}' }, ports));
  assert.deepEqual(one.ports.map((p) => p.udpCheckPort), [9053, 9000, 9000]);
  assert.deepEqual(specOf(parse({}, ports)).ports.map((p) => p.udpCheckPort), [80, 80, 80]);
});

Deno.test("parseServiceAnnotations() reports every invalid annotation at once", () => {
  const result = parse({
    "check-timeout": "abc",
    "check-interval": "abc",
    "check-passive": "yes",
    "nodebalancer-id": "-4",
  });
  if (result.ok) assert.fail("expected errors");
  assert.deepEqual(
    result.errors.map((e) => e.key).sort(),
    ["check-interval", "check-passive", "check-timeout", "nodebalancer-id"].map(annotationKey).sort(),
  );
});

Deno.test("parseServiceAnnotations() error messages name the annotation, the value and what is accepted", () => {
  const result = parse({ "check-interval": "abc" });
  if (result.ok) assert.fail("expected errors");
  assert.equal(
    result.errors[0]?.message,
    'Invalid annotation service.beta.kubernetes.io/linode-loadbalancer-check-interval="abc": ' +
      "expected whole seconds from 2 to 3600, more than check-timeout",
  );
  assert.equal(result.errors[0]?.name, "InvalidAnnotationError");
});

Deno.test("parseServiceAnnotations() reports one default-algorithm error for many ports it does not fit", () => {
  const result = parse({ "default-algorithm": "ring_hash" }, [port(80), port(81), port(82)]);
  if (result.ok) assert.fail("expected errors");
  assert.equal(result.errors.length, 1);
});

Deno.test("parseServiceAnnotations() returns a deeply frozen spec", () => {
  const spec = specOf(parse({ tags: "a-tag" }));
  assert.ok(Object.isFrozen(spec) && Object.isFrozen(spec.ports[0]?.check) && Object.isFrozen(spec.tags));
});

Deno.test("parseServiceAnnotations() warns about unknown, deprecated, ignored and misplaced annotations", () => {
  const spec = specOf(parse({
    "check-pasive": "true",
    "proxy-protocol": "v1",
    "port-8080": '{"protocol": "http"}',
    "port-80": '{"stickiness": "table", "colour": "red"}',
    "firewall-id": "5",
    "firewall-acl": "not even json",
    "backend-vpc-name": "vpc1",
    "check-path": "/x",
  }));
  const got = spec.warnings.map((w) =>
    `${w.key.slice(annotationKey("").length)}: ${w.message.split(" (")[0]}`
  );
  assert.deepEqual(got.sort(), [
    "backend-vpc-name: ignored: NodeBalancer backends are not VPC addresses here",
    "check-pasive: unknown annotation ignored",
    "check-path: used only with check-type http or http_body",
    "firewall-acl: ignored: firewall-id is set",
    "port-8080: ignored: the Service has no port 8080",
    'port-80: "stickiness" does not apply to tcp and is ignored',
    'port-80: unknown key "colour" ignored',
    "proxy-protocol: deprecated: use default-proxy-protocol",
  ]);
});

Deno.test("parseServiceAnnotations() leaves SCTP ports out and keeps tcp 53 and udp 53 apart", () => {
  const spec = specOf(parse({}, [port(53, "TCP"), port(53, "UDP"), port(9, "SCTP")]));
  assert.deepEqual(spec.ports.map((p) => `${p.port}/${p.protocol}`), ["53/tcp", "53/udp"]);
});

const VPC_CASES: {
  name: string;
  services?: Parameters<typeof defaults>[0];
  ann?: Record<string, string>;
  want: unknown;
}[] = [
  { name: "no VPC: none", services: {}, want: null },
  {
    name: "first --vpc-names and --subnet-names",
    services: { vpc: { names: ["a", "b"], subnetNames: ["s1", "s2"] } },
    want: {
      subnet: { kind: "names", vpcName: "a", subnetName: "s1" },
      ipv4Range: null,
      ipv4RangeAutoAssign: false,
    },
  },
  {
    name: "--disable-nodebalancer-vpc-backends",
    services: { vpc: { names: ["a"] }, services: { disableVpcBackends: true } },
    want: null,
  },
  {
    name: "--nodebalancer-backend-ipv4-subnet-id",
    services: { vpc: { names: ["a"] }, services: { backendIpv4SubnetId: 7 } },
    want: { subnet: { kind: "id", subnetId: 7 }, ipv4Range: null, ipv4RangeAutoAssign: false },
  },
  {
    name: "--nodebalancer-backend-ipv4-subnet-name in the first VPC",
    services: { vpc: { names: ["a"] }, services: { backendIpv4SubnetName: "nb" } },
    want: {
      subnet: { kind: "names", vpcName: "a", subnetName: "nb" },
      ipv4Range: null,
      ipv4RangeAutoAssign: false,
    },
  },
  {
    name: "--nodebalancer-backend-ipv4-subnet: auto-assigned range",
    services: { vpc: { names: ["a"] }, services: { backendIpv4Subnet: "10.100.0.0/24" } },
    want: {
      subnet: { kind: "names", vpcName: "a", subnetName: "default" },
      ipv4Range: "10.100.0.0/24",
      ipv4RangeAutoAssign: true,
    },
  },
  {
    name: "backend-ipv4-range inside --nodebalancer-backend-ipv4-subnet wins over it",
    services: { vpc: { names: ["a"] }, services: { backendIpv4Subnet: "10.100.0.0/24" } },
    ann: { "backend-ipv4-range": "10.100.0.8/30" },
    want: {
      subnet: { kind: "names", vpcName: "a", subnetName: "default" },
      ipv4Range: "10.100.0.8/30",
      ipv4RangeAutoAssign: false,
    },
  },
  {
    name: "--vpc-ids and --subnet-ids: the first subnet ID",
    services: { vpc: { ids: [3], subnetIds: [31, 32], subnetNames: [] } },
    want: { subnet: { kind: "id", subnetId: 31 }, ipv4Range: null, ipv4RangeAutoAssign: false },
  },
];

for (const c of VPC_CASES) {
  Deno.test(`parseServiceAnnotations() backend VPC: ${c.name}`, () => {
    assert.deepEqual(specOf(parse(c.ann ?? {}, [port(80)], defaults(c.services))).backendVpc, c.want);
  });
}
