import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import type { NodeBalancerSummary } from "../../../cache/types.ts";
import { findByStatus, statusIngress } from "./find.ts";

const NB: NodeBalancerSummary = {
  id: 7,
  label: "ccm-abc",
  region: "us-east",
  hostname: "nb-172-232-1-7.newark.nodebalancer.linode.com",
  ipv4: "172.232.1.7",
  ipv6: "2600:3c03:1::ace8:107",
  tags: [],
};

function withIngress(ingress: { ip?: string; hostname?: string }[]): V1Service {
  return { metadata: { name: "web" }, status: { loadBalancer: { ingress } } };
}

Deno.test("findByStatus() finds by status IPv4 or IPv6 first, then by hostname, else nothing", () => {
  const other = { ...NB, id: 8, ipv4: "172.232.1.8", hostname: "other", ipv6: "2600:3c03:1::8/128" };
  const list = [other, NB];
  assert.deepEqual(findByStatus(withIngress([{ ip: NB.ipv4 }]), list), { nb: NB, via: "status-ip" });
  assert.deepEqual(findByStatus(withIngress([{ ip: "2600:3C03:1::8" }]), list), {
    nb: other,
    via: "status-ip",
  });
  assert.deepEqual(findByStatus(withIngress([{ hostname: NB.hostname ?? "" }]), list), {
    nb: NB,
    via: "status-hostname",
  });
  assert.deepEqual(findByStatus(withIngress([{ ip: "203.0.113.9", hostname: "other" }]), list), {
    nb: other,
    via: "status-hostname",
  });
  assert.equal(findByStatus(withIngress([{ ip: "203.0.113.9" }]), list), undefined);
  assert.deepEqual(statusIngress(withIngress([{ ip: "a", hostname: "b" }, { hostname: "c" }])), {
    ips: ["a"],
    hostnames: ["b", "c"],
  });
});
