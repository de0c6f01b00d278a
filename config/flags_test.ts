import assert from "node:assert/strict";
import { FLAGS, formatGoDuration, helpText, parseArgs, readFlags, suggestFlag } from "./flags.ts";
import { ENV_VARS, parseGoBool, parseGoDuration, parseGoFloat, parseGoInt, readCsv } from "./env.ts";

const BOOLS: [string, boolean | undefined][] = [
  ["1", true],
  ["t", true],
  ["T", true],
  ["TRUE", true],
  ["true", true],
  ["True", true],
  ["0", false],
  ["f", false],
  ["F", false],
  ["FALSE", false],
  ["false", false],
  ["False", false],
  ["yes", undefined],
  ["tRUE", undefined],
  ["", undefined],
  ["on", undefined],
];
for (const [text, want] of BOOLS) {
  Deno.test(`parseGoBool() reads "${text}" as ${want}`, () => assert.equal(parseGoBool(text), want));
}

const DURATIONS: [string, number | undefined][] = [
  ["15s", 15_000],
  ["1m30s", 90_000],
  ["100ms", 100],
  ["2h", 7_200_000],
  ["1.5s", 1_500],
  [".5s", 500],
  ["1.s", 1_000],
  ["0", 0],
  ["0s", 0],
  ["-1s", -1_000],
  ["+2s", 2_000],
  ["1h2m3s4ms", 3_723_004],
  ["300us", 0.3],
  ["300\u00b5s", 0.3],
  ["2000000ns", 2],
  ["15", undefined],
  ["1.5", undefined],
  ["", undefined],
  ["s", undefined],
  [".s", undefined],
  ["1x", undefined],
  ["5 s", undefined],
  ["1d", undefined],
];
for (const [text, want] of DURATIONS) {
  Deno.test(`parseGoDuration() reads "${text}" as ${want}`, () => assert.equal(parseGoDuration(text), want));
}

const INTS: [string, number | undefined][] = [
  ["10", 10],
  ["0", 0],
  ["-3", -3],
  ["+7", 7],
  ["0x1f", 31],
  ["0X1F", 31],
  ["010", 8],
  ["0o17", 15],
  ["0b101", 5],
  ["08", undefined],
  ["1e3", undefined],
  ["1.0", undefined],
  ["", undefined],
  ["ten", undefined],
  ["99999999999999999999", undefined],
];
for (const [text, want] of INTS) {
  Deno.test(`parseGoInt() reads "${text}" as ${want}`, () => assert.equal(parseGoInt(text), want));
}

Deno.test("parseGoFloat() reads decimals and exponents only", () => {
  assert.deepEqual(["20", "0.5", ".5", "1e3", "-2.5E-1", "x", "", "1,5"].map(parseGoFloat), [
    20,
    0.5,
    0.5,
    1000,
    -0.25,
    undefined,
    undefined,
    undefined,
  ]);
});

const FORMATTED: [number, string][] = [
  [0, "0s"],
  [100, "100ms"],
  [15_000, "15s"],
  [90_000, "1m30s"],
  [300_000, "5m0s"],
  [43_200_000, "12h0m0s"],
  [1_500, "1.5s"],
];
for (const [ms, want] of FORMATTED) {
  Deno.test(`formatGoDuration() writes ${ms} ms as ${want}`, () => assert.equal(formatGoDuration(ms), want));
}

Deno.test("parseArgs() appends repeated list flags and lets later scalars win", () => {
  const parsed = parseArgs(["--controllers=cloud-node", "--controllers", "service", "--v=1", "--v=5"]);
  assert.deepEqual(parsed.values.get("controllers"), ["cloud-node", "service"]);
  assert.equal(parsed.values.get("v"), 5);
  assert.deepEqual(parsed.problems, []);
});

Deno.test("parseArgs() takes the next argument as a value even when it starts with a dash", () => {
  const parsed = parseArgs(["--cluster-name", "-odd-name"]);
  assert.equal(parsed.values.get("cluster-name"), "-odd-name");
});

Deno.test("parseArgs() ignores only a leading --, and treats what follows a later -- as arguments", () => {
  assert.deepEqual(parseArgs(["--", "--v=2"]).problems, []);
  const later = parseArgs(["--v=2", "--", "--v=3"]);
  assert.equal(later.values.get("v"), 2);
  assert.deepEqual(later.problems, [
    'unexpected argument "--v=3": no arguments are taken (write booleans as --flag=false)',
  ]);
});

Deno.test("parseArgs() skips empty arguments as pflag does", () => {
  assert.deepEqual(parseArgs(["", "--v=1", ""]).problems, []);
});

Deno.test("parseArgs() reports an unknown flag once, swallowing its likely value", () => {
  assert.deepEqual(parseArgs(["--bogus-flag-name", "value"]).problems, [
    "--bogus-flag-name: unknown flag (see --help)",
  ]);
});

Deno.test("parseArgs() reads --help, -h, --version and --version=raw", () => {
  assert.equal(parseArgs(["-h"]).help, true);
  assert.equal(parseArgs(["--help=false"]).help, false);
  assert.equal(parseArgs(["--version"]).version, true);
  assert.equal(parseArgs(["--version=raw"]).version, "raw");
  assert.equal(parseArgs(["--version=false"]).version, false);
  assert.match(parseArgs(["--version=maybe"]).problems[0] ?? "", /--version: invalid value "maybe"/);
});

const SUGGESTIONS: [string, string | undefined][] = [
  ["leader-elct", "leader-elect"],
  ["leaderelect", "leader-elect"],
  ["leader-elect-lease", "leader-elect-lease-duration"],
  ["vpc-nmes", "vpc-names"],
  ["secure-prot", "secure-port"],
  ["hepl", "help"],
  ["completely-unrelated-thing", undefined],
];
for (const [typo, want] of SUGGESTIONS) {
  Deno.test(`suggestFlag() suggests ${want} for ${typo}`, () => assert.equal(suggestFlag(typo), want));
}

Deno.test("helpText() lists every flag with its default and every environment variable", () => {
  const text = helpText();
  for (const flag of FLAGS) assert.match(text, new RegExp(`\\n  --${flag.name}[ \\w]*\\s.*\\(default `));
  for (const v of ENV_VARS) assert.ok(text.includes(`  ${v.name} `), v.name);
  assert.match(text, /--leader-elect-lease-duration duration +.*\(default 15s\)/);
  assert.match(text, /--node-status-update-frequency duration +.*\(default 5m0s\)/);
  assert.match(text, /--secure-port int +.*\(default 10258\)/);
  assert.match(text, /LINODE_URL +.*\(default https:\/\/api\.linode\.com\/v4\)/);
});

Deno.test("FLAGS has no duplicate names", () => {
  assert.equal(new Set(FLAGS.map((f) => f.name)).size, FLAGS.length);
});

/** [value, items or the problem]: Go's encoding/csv on one record, which is how pflag reads a StringSlice. */
const CSV: [string, string[] | RegExp][] = [
  ["", []],
  ["a,b", ["a", "b"]],
  ["a, b", ["a", " b"]],
  ["a,,b,", ["a", "", "b", ""]],
  ['"/metrics"', ["/metrics"]],
  ['"a,b",c', ["a,b", "c"]],
  ['"say ""hi""",x', ['say "hi"', "x"]],
  ["team-a env-prod", ["team-a env-prod"]],
  ["a\nb", ["a"]],
  ['"a\nb"', ["a\nb"]],
  ["a,b\r\n", ["a", "b"]],
  ['a"b', /quote inside an unquoted item/],
  [' "a"', /quote inside an unquoted item/],
  ['"a"b', /after a closing quote/],
  ['"a', /not closed/],
  ["\n", /no items/],
];
for (const [text, want] of CSV) {
  Deno.test(`readCsv() reads ${JSON.stringify(text)} as pflag's StringSlice does`, () => {
    const got = readCsv(text);
    if (want instanceof RegExp) assert.match(String(got), want);
    else assert.deepEqual(got, want);
  });
}

Deno.test("parseArgs() reads each upstream flag with its pflag type: values consumed, bare booleans, lists", () => {
  const parsed = parseArgs([
    "--cidr-allocator-type",
    "CloudAllocator",
    "--profiling",
    "--node-sync-period",
    "0",
    "--feature-gates=A=true, B = false",
    "--tls-sni-cert-key",
    "a.crt,a.key:*.a.com",
    "--tls-sni-cert-key=b.crt,b.key",
    "--requestheader-group-headers=x-a,x-b",
    "--kube-api-qps=2.5",
    "--log-text-info-buffer-size=2Ki",
    "--webhook-bind-address= ::1",
    "--v",
    "2",
  ]);
  assert.deepEqual(parsed.problems, []);
  assert.deepEqual(Object.fromEntries(parsed.values), {
    "cidr-allocator-type": "CloudAllocator",
    profiling: true,
    "node-sync-period": 0,
    "feature-gates": ["A=true", " B = false"],
    "tls-sni-cert-key": ["a.crt,a.key:*.a.com", "b.crt,b.key"],
    "requestheader-group-headers": ["x-a", "x-b"],
    "kube-api-qps": 2.5,
    "log-text-info-buffer-size": "2Ki",
    "webhook-bind-address": "::1",
    v: 2,
  });
});

Deno.test("parseArgs() refuses what pflag refuses in the upstream flags' values", () => {
  const problems = parseArgs([
    "--profiling=yes",
    "--feature-gates=A",
    "--tls-sni-cert-key=only.crt",
    "--log-text-info-buffer-size=lots",
    "--webhook-bind-address=localhost",
    "--vpc-ids=1, 2",
    "--subnet-ids=",
    '--nodebalancer-tags=a"b',
  ]).problems;
  assert.deepEqual(problems.map((p) => p.slice(0, p.indexOf(":"))), [
    "--profiling",
    "--feature-gates",
    "--tls-sni-cert-key",
    "--log-text-info-buffer-size",
    "--webhook-bind-address",
    "--vpc-ids",
    "--subnet-ids",
    "--nodebalancer-tags",
  ]);
});

Deno.test("parseArgs() accepts --version=vX.Y.Z, which only sets the version upstream reports", () => {
  const parsed = parseArgs(["--version=v1.2.3"]);
  assert.deepEqual([parsed.version, parsed.problems], [false, []]);
});

Deno.test("readFlags() types each flag by the table: an unknown name or the wrong kind does not compile", () => {
  const flags = readFlags(new Map([["vpc-names", ["a"]]]));
  // @ts-expect-error: there is no --vpc-namez (deno check fails if this line compiles)
  assert.equal(flags.get("vpc-namez"), undefined);
  // @ts-expect-error: --vpc-names is a list, not a string
  const wrong: string = flags.get("vpc-names");
  const names: readonly string[] = flags.get("vpc-names");
  const ids: readonly number[] = flags.get("vpc-ids");
  const lease: number = flags.get("leader-elect-lease-duration");
  assert.deepEqual([wrong, names, ids, lease, flags.given("vpc-names")], [["a"], ["a"], [], 15_000, true]);
});
