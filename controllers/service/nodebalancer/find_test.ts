import assert from "node:assert/strict";
import { NB, withIngress } from "../testdata/fixtures.ts";
import { findByStatus, statusIngress } from "./find.ts";

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
