import assert from "node:assert/strict";
import { parseConfig } from "../config/config.ts";
import { writeTimeoutMs } from "./parts.ts";

const ENV = { LINODE_API_TOKEN: "t", LINODE_REGION: "us-east" };

function configOf(...args: string[]) {
  const parsed = parseConfig(["--master=http://127.0.0.1:1", ...args], ENV);
  if (parsed.kind !== "run") throw new TypeError(parsed.kind);
  return parsed.config;
}

const CASES: { args: string[]; want: number | undefined }[] = [
  { args: [], want: 5_000 },
  { args: ["--leader-elect-lease-duration=20s", "--leader-elect-renew-deadline=12s"], want: 8_000 },
  { args: ["--leader-elect=false"], want: undefined },
  { args: ["--dry-run"], want: undefined },
];

for (const c of CASES) {
  Deno.test(`writeTimeoutMs() with ${c.args.join(" ") || "the defaults"} is ${c.want ?? "unset"}`, () => {
    assert.equal(writeTimeoutMs(configOf(...c.args)), c.want);
  });
}
