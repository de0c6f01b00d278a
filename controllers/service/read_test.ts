import assert from "node:assert/strict";
import { NB, service, withIngress } from "./testdata/fixtures.ts";
import {
  findByStatus,
  hasIngress,
  ingressFor,
  LB_FINALIZER,
  otherPointersTo,
  statusIngress,
} from "./read.ts";

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

Deno.test("otherPointersTo() names the other served Services whose annotation or status points at the NodeBalancer", () => {
  const self = service({ name: "web", annotations: { "nodebalancer-id": "7" } });
  const byId = service({
    name: "a",
    uid: "11111111-0000-4000-8000-000000000001",
    annotations: { "nodebalancer-id": "7" },
  });
  const byStatus = {
    ...service({ name: "b", uid: "11111111-0000-4000-8000-000000000002" }),
    status: { loadBalancer: { ingress: [{ ip: NB.ipv4 }] } },
  };
  const elsewhere = service({
    name: "c",
    uid: "11111111-0000-4000-8000-000000000003",
    annotations: { "nodebalancer-id": "8" },
  });
  const notOurs = {
    ...byId,
    metadata: { ...byId.metadata, name: "d", uid: "11111111-0000-4000-8000-000000000004" },
  };
  notOurs.spec = { ...notOurs.spec, type: "ClusterIP" };
  const leaving = { ...notOurs, metadata: { ...notOurs.metadata, name: "e", finalizers: [LB_FINALIZER] } };
  assert.deepEqual(otherPointersTo(NB, [self, byId, byStatus, elsewhere, notOurs, leaving], self), [
    "default/a (its nodebalancer-id)",
    "default/b (its status)",
    "default/e (its nodebalancer-id)",
  ]);
});
