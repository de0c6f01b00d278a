import assert from "node:assert/strict";
import { NB, withIngress } from "./testdata/fixtures.ts";
import { hasIngress, ingressFor } from "./status.ts";

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
