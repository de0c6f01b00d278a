import assert from "node:assert/strict";
import { cidr6Within, formatCidr6, formatIpv6, nthBlock6, parseCidr6, parseIpv6 } from "./ipv6.ts";

const ROUND_TRIPS: [string, string][] = [
  ["::", "::"],
  ["::1", "::1"],
  ["2600:3c05:0:1000::", "2600:3c05:0:1000::"],
  ["2600:3C05:0000:1000:0000:000c:0000:0000", "2600:3c05:0:1000:0:c::"],
  ["1:0:0:1:0:0:0:1", "1:0:0:1::1"],
  ["1:0:1:1:1:1:1:1", "1:0:1:1:1:1:1:1"],
  ["fd00::0:0", "fd00::"],
];

for (const [text, want] of ROUND_TRIPS) {
  Deno.test(`formatIpv6() prints ${text} as ${want}`, () => {
    const v = parseIpv6(text);
    assert.notEqual(v, undefined);
    assert.equal(formatIpv6(v as bigint), want);
  });
}

for (const bad of ["", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", "g::", "1.2.3.4", "1:2:3:4:5:6:7"]) {
  Deno.test(`parseIpv6() refuses ${JSON.stringify(bad)}`, () => assert.equal(parseIpv6(bad), undefined));
}

Deno.test("parseCidr6() clears host bits and refuses bad prefixes", () => {
  assert.equal(formatCidr6(parseCidr6("2600:3c05::1234/64")!), "2600:3c05::/64");
  assert.equal(parseCidr6("2600::/129"), undefined);
  assert.equal(parseCidr6("2600::/064"), undefined);
  assert.equal(parseCidr6("10.0.0.0/8"), undefined);
});

Deno.test("nthBlock6() carves blocks of a range, within it", () => {
  const vpc = parseCidr6("2600:3c05:0:1000::/52")!;
  const sub = nthBlock6(vpc, 56, 3n)!;
  assert.equal(formatCidr6(sub), "2600:3c05:0:1300::/56");
  assert.ok(cidr6Within(sub, vpc));
  assert.equal(nthBlock6(vpc, 56, 16n), undefined);
  assert.equal(formatCidr6(nthBlock6(sub, 64, 255n)!), "2600:3c05:0:13ff::/64");
});
