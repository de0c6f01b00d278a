import assert from "node:assert/strict";
import { NB, withIngress } from "./testdata/fixtures.ts";
import { findByStatus, hasIngress, ingressFor, statusIngress } from "./read.ts";

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

const INGRESS_CASES = [
  {
    name: "IPv4 with the hostname by default",
    options: { hostnameOnlyIngress: false, ipv6Ingress: false },
    want: [{ ip: NB.ipv4, hostname: NB.hostname ?? "" }],
  },
  {
    name: "the hostname only",
    options: { hostnameOnlyIngress: true, ipv6Ingress: true },
    want: [{ hostname: NB.hostname ?? "" }],
  },
  {
    name: "IPv4 then IPv6, each with the hostname",
    options: { hostnameOnlyIngress: false, ipv6Ingress: true },
    want: [{ ip: NB.ipv4, hostname: NB.hostname ?? "" }, { ip: NB.ipv6 ?? "", hostname: NB.hostname ?? "" }],
  },
];

for (const c of INGRESS_CASES) {
  Deno.test(`ingressFor() reports ${c.name}`, () => assert.deepEqual(ingressFor(NB, c.options), c.want));
}

Deno.test("hasIngress() compares addresses and hostnames in order, nothing else", () => {
  const want = ingressFor(NB, { hostnameOnlyIngress: false, ipv6Ingress: false });
  assert.equal(hasIngress(withIngress([{ ip: NB.ipv4, hostname: NB.hostname ?? "" }]), want), true);
  assert.equal(hasIngress(withIngress([{ ip: NB.ipv4 }]), want), false);
  assert.equal(hasIngress(withIngress([]), want), false);
  assert.equal(hasIngress({ metadata: { name: "web" } }, []), true);
});
