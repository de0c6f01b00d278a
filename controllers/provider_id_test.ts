import assert from "node:assert/strict";
import { classifyProviderId, parseProviderId, toProviderId } from "./provider_id.ts";

const PARSE: { input: string | undefined; want: number | undefined }[] = [
  { input: "linode://123", want: 123 },
  { input: "linode://1", want: 1 },
  { input: "linode://9007199254740991", want: 9007199254740991 },
  { input: "linode://9999999999999999", want: undefined },
  { input: "linode://0", want: undefined },
  { input: "linode://0123", want: undefined },
  { input: "linode://-5", want: undefined },
  { input: "linode://12a", want: undefined },
  { input: "linode://", want: undefined },
  { input: "linode:///123", want: undefined },
  { input: "linode://123/", want: undefined },
  { input: " linode://123", want: undefined },
  { input: "Linode://123", want: undefined },
  { input: "linode:/123", want: undefined },
  { input: "aws:///us-east-1a/i-123", want: undefined },
  { input: "", want: undefined },
  { input: undefined, want: undefined },
];

for (const c of PARSE) {
  Deno.test(`parseProviderId() ${JSON.stringify(c.input)} gives ${c.want}`, () => {
    assert.equal(parseProviderId(c.input), c.want);
  });
}

const CLASSIFY = [
  { input: undefined, want: "empty" },
  { input: "", want: "empty" },
  { input: "linode://42", want: "linode" },
  { input: "linode://abc", want: "invalid" },
  { input: "linode://", want: "invalid" },
  { input: "aws:///us-east-1a/i-123", want: "foreign" },
  { input: "kind://docker/kind/node", want: "foreign" },
] as const;

for (const c of CLASSIFY) {
  Deno.test(`classifyProviderId() ${JSON.stringify(c.input)} is ${c.want}`, () => {
    assert.equal(classifyProviderId(c.input), c.want);
  });
}

Deno.test("toProviderId() round-trips through parseProviderId()", () => {
  assert.equal(toProviderId(77), "linode://77");
  assert.equal(parseProviderId(toProviderId(77)), 77);
});

Deno.test("toProviderId() rejects ids that are not positive integers", () => {
  for (const bad of [0, -1, 1.5, NaN]) assert.throws(() => toProviderId(bad), RangeError);
});
