import assert from "node:assert/strict";
import { parseServiceAnnotations } from "../annotations/parse.ts";
import { createNodeBalancerBody, revealCreateBody } from "./writes.ts";
import { defaults, node, port, service } from "../testdata/fixtures.ts";
import { planNodeBalancer } from "./plan.ts";

const CERT = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----";
const KEY = "-----BEGIN EC PRIVATE KEY-----\nc2VjcmV0LWtleQ==\n-----END EC PRIVATE KEY-----";

Deno.test("createNodeBalancerBody() holds everything a new NodeBalancer needs, the key redacted until revealed", () => {
  const d = defaults({ vpc: { names: ["vpc1"] }, services: { backendIpv4Subnet: "10.100.0.0/24" } });
  const svc = service({
    ports: [port(443, "TCP", 30443)],
    annotations: {
      "port-443": '{"protocol": "https", "tls-secret-name": "tls"}',
      "reserved-ipv4": "203.0.113.5",
      "frontend-subnet-id": "9",
      "frontend-ipv4-range": "10.9.0.0/24",
    },
  });
  const parsed = parseServiceAnnotations(svc, d);
  if (!parsed.ok) assert.fail(parsed.errors.map((e) => e.message).join("; "));
  const result = planNodeBalancer(svc, parsed.spec, [node("node-a", { internalIps: ["10.0.0.4"] })], {
    defaults: d,
    backendSubnetId: 5,
    tls: new Map([["tls", { cert: CERT, key: KEY }]]),
  });
  if (!result.ok) assert.fail(result.errors.map((e) => e.message).join("; "));
  const body = createNodeBalancerBody(result.desired, 41);
  assert.ok(!JSON.stringify(body).includes("c2VjcmV0"));
  assert.deepEqual(revealCreateBody(body), {
    label: "ccm-665544332211",
    region: "us-east",
    type: "common",
    tags: ["kubernetes", "ccm-owner:kubernetes/0f1e2d3c4b5a4697"],
    client_conn_throttle: 20,
    ipv4: "203.0.113.5",
    firewall_id: 41,
    vpcs: [{ subnet_id: 5, ipv4_range: "10.100.0.0/24", ipv4_range_auto_assign: true }],
    frontend_vpcs: [{ subnet_id: 9, ipv4_range: "10.9.0.0/24" }],
    configs: [{
      port: 443,
      protocol: "https",
      proxy_protocol: "none",
      algorithm: "roundrobin",
      stickiness: "table",
      check: "connection",
      check_interval: 5,
      check_timeout: 3,
      check_attempts: 2,
      check_passive: false,
      ssl_cert: CERT,
      ssl_key: KEY,
      nodes: [{ address: "10.0.0.4:30443", label: "node-a", weight: 100, mode: "accept", subnet_id: 5 }],
    }],
  });
});
