import assert from "node:assert/strict";
import { type DemoArgs, parseDemoArgs } from "./args.ts";

const DEFAULTS = {
  once: false,
  durationSec: undefined,
  fast: false,
  plain: false,
  dir: undefined,
  world: "demo" as const,
};

const CASES: { name: string; args: string[]; want: DemoArgs }[] = [
  { name: "defaults to running until stopped", args: [], want: { kind: "run", options: DEFAULTS } },
  {
    name: "reads --fast --duration=15 --plain",
    args: ["--fast", "--duration=15", "--plain"],
    want: { kind: "run", options: { ...DEFAULTS, fast: true, durationSec: 15, plain: true } },
  },
  {
    name: "reads --once and --dir with a separate value",
    args: ["--once", "--dir", "/tmp/x"],
    want: { kind: "run", options: { ...DEFAULTS, once: true, dir: "/tmp/x" } },
  },
  {
    name: "accepts fractional durations",
    args: ["--duration=0.5"],
    want: { kind: "run", options: { ...DEFAULTS, durationSec: 0.5 } },
  },
  {
    name: "reads --world=go-ccm",
    args: ["--world=go-ccm"],
    want: { kind: "run", options: { ...DEFAULTS, world: "go-ccm" } },
  },
  { name: "gives help for -h", args: ["--fast", "-h"], want: { kind: "help" } },
];

for (const c of CASES) {
  Deno.test(`parseDemoArgs() ${c.name}`, () => assert.deepEqual(parseDemoArgs(c.args), c.want));
}

const BAD: { args: string[]; message: RegExp }[] = [
  { args: ["--duration=0"], message: /--duration must be a positive number/ },
  { args: ["--duration=soon"], message: /--duration must be a positive number/ },
  { args: ["--duration"], message: /--duration needs a value/ },
  { args: ["--fast=yes"], message: /Unknown demo flag --fast=yes/ },
  { args: ["--leader-elect=false"], message: /Unknown demo flag/ },
  { args: ["--world=gke"], message: /--world must be demo or go-ccm, got "gke"/ },
];

for (const c of BAD) {
  Deno.test(`parseDemoArgs() rejects ${c.args.join(" ")}`, () => {
    assert.throws(
      () => parseDemoArgs(c.args),
      (e: unknown) => e instanceof RangeError && c.message.test(e.message),
    );
  });
}
