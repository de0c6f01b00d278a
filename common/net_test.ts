import assert from "node:assert/strict";
import {
  cidr4Contains,
  cidr6Within,
  cidrFamily,
  formatCidr6,
  formatIpv6,
  ipFamily,
  isIpAddress,
  isPrivateIpv4,
  nthBlock6,
  parseCidr4,
  parseCidr6,
  parseIpv6,
} from "./net.ts";

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

for (
  const bad of [
    "",
    ":::",
    "1::2::3",
    "1:2:3:4:5:6:7:8:9",
    "12345::",
    "g::",
    "1.2.3.4",
    "1:2:3:4:5:6:7",
    "fe80::1%eth0",
    "::ffff:1.2.3",
  ]
) {
  Deno.test(`parseIpv6() refuses ${JSON.stringify(bad)}`, () => assert.equal(parseIpv6(bad), undefined));
}

Deno.test("parseCidr6() clears host bits and refuses bad prefixes", () => {
  assert.equal(formatCidr6(parseCidr6("2600:3c05::1234/64")!), "2600:3c05::/64");
  assert.equal(parseCidr6("2600::/129"), undefined);
  assert.deepEqual(parseCidr6("2600::/064"), parseCidr6("2600::/64"));
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

Deno.test("parseIpv6() reads an embedded IPv4 tail, as Go's net.ParseIP", () => {
  assert.equal(formatIpv6(parseIpv6("::ffff:10.0.0.1")!), "::ffff:a00:1");
});

const FAMILIES: [string, 4 | 6 | undefined, 4 | 6 | undefined][] = [
  ["10.0.0.1", 4, undefined],
  ["10.0.0.0/8", undefined, 4],
  ["2600::1", 6, undefined],
  ["2600::/64", undefined, 6],
  ["010.0.0.1", undefined, undefined],
  ["10.0.0.0/33", undefined, undefined],
  ["2600::/129", undefined, undefined],
  ["", undefined, undefined],
];

for (const [text, address, cidr] of FAMILIES) {
  Deno.test(`ipFamily() and cidrFamily() of ${JSON.stringify(text)}: ${address} and ${cidr}`, () => {
    assert.equal(ipFamily(text), address);
    assert.equal(cidrFamily(text), cidr);
  });
}

Deno.test("isPrivateIpv4() is RFC 1918 minus the excepted subnet", () => {
  assert.equal(isPrivateIpv4("192.168.130.5"), true);
  assert.equal(isPrivateIpv4("172.32.0.1"), false);
  assert.equal(isPrivateIpv4("10.1.2.3", parseCidr4("10.1.0.0/16")), false);
  assert.equal(isPrivateIpv4("2600::1"), false);
});

const CIDR_CASES = [
  { cidr: "10.0.0.0/8", ip: "10.255.1.1", want: true },
  { cidr: "10.0.0.0/8", ip: "11.0.0.1", want: false },
  { cidr: "0.0.0.0/0", ip: "8.8.8.8", want: true },
  { cidr: "192.168.1.7/32", ip: "192.168.1.7", want: true },
  { cidr: "192.168.1.7/32", ip: "192.168.1.8", want: false },
  { cidr: "10.0.0.0/8", ip: "2600::1", want: false },
];

for (const c of CIDR_CASES) {
  Deno.test(`cidr4Contains() ${c.cidr} ${c.ip} is ${c.want}`, () => {
    assert.equal(cidr4Contains(parseCidr4(c.cidr)!, c.ip), c.want);
  });
}

Deno.test("parseCidr4() refuses what Go's net.ParseCIDR refuses, and IPv6", () => {
  for (
    const bad of [
      "10.0.0.0",
      "10.0.0.0/33",
      "10.0.0/8",
      "256.0.0.0/8",
      "10.0.0.0/8/1",
      "::/0",
      "01.0.0.0/8",
      " 10.0.0.0/8",
    ]
  ) {
    assert.equal(parseCidr4(bad), undefined, bad);
  }
});

Deno.test("parseCidr4() takes a prefix length with leading zeros, as Go's dtoi", () => {
  assert.deepEqual(parseCidr4("10.1.2.3/08"), parseCidr4("10.0.0.0/8"));
});

const CIDRS: [string, 4 | 6 | undefined][] = [
  ["10.0.0.0/8", 4],
  ["10.0.0.1/8", 4],
  ["0.0.0.0/0", 4],
  ["172.24.0.0/16", 4],
  ["fd00::/56", 6],
  ["2600:3c0f::/128", 6],
  ["10.0.0.0/33", undefined],
  ["10.0.0.0", undefined],
  ["10.0.0/8", undefined],
  ["010.0.0.0/8", undefined],
  ["fd00::/129", undefined],
  ["fe80::1%eth0/64", undefined],
  ["10.0.0.0/-1", undefined],
  ["", undefined],
];
for (const [text, want] of CIDRS) {
  Deno.test(`cidrFamily() reads "${text}" as ${want}`, () => assert.equal(cidrFamily(text), want));
}

Deno.test("isIpAddress() accepts IPv4 and IPv6 without zones", () => {
  assert.deepEqual(["0.0.0.0", "::", "127.0.0.1", "fe80::1%eth0", "localhost", "1.2.3"].map(isIpAddress), [
    true,
    true,
    true,
    false,
    false,
    false,
  ]);
});
