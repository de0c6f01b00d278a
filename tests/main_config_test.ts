/** `main.ts` as a process: exit codes and output of config errors, `--help` and `--version`; the token stays out. */
import assert from "node:assert/strict";
import { startDemoWorld } from "../sim/demo_world.ts";
import { VERSION } from "../config/version.ts";
import { runCcmToExit } from "./process.ts";

/** A token no code path would print by accident. */
const TOKEN = "tok-e2e-3f9a7c1d5b8e2f40a6c9d1e7b3f5a8c2";

/** A kubeconfig in the readable test folder that is not YAML. */
const BROKEN = "broken-kubeconfig";

/** A Deno or V8 stack frame, or an uncaught error report. */
const STACK = /^\s+at \S|error: Uncaught/m;

interface Case {
  name: string;
  args: string[];
  env?: (env: Record<string, string>) => Record<string, string>;
  code: number;
  stdout?: RegExp;
  stderr?: RegExp;
  /** Found only once running (logged, so no --help hint). */
  late?: boolean;
}

const CASES: Case[] = [
  {
    name: "exits 2 on an unknown flag and suggests the closest one",
    args: ["--leader-elect-lease-duraton=2s"],
    code: 2,
    stderr: /--leader-elect-lease-duraton: unknown flag \(did you mean --leader-elect-lease-duration\?\)/,
  },
  {
    name: "exits 2 without LINODE_REGION and names it",
    args: [],
    env: ({ LINODE_REGION: _, ...rest }) => rest,
    code: 2,
    stderr: /LINODE_REGION: not set/,
  },
  {
    name: "exits 2 on an invalid duration and lists every problem at once",
    args: ["--leader-elect-retry-period=soon", "--concurrent-node-syncs=0"],
    code: 2,
    stderr: /--leader-elect-retry-period[^\n]*\n(.*\n)*.*--concurrent-node-syncs/,
  },
  {
    // It used to pass validation, then throw when the leader term started (a leader running no controller).
    name: "exits 2 on an IPv6 LINODE_EXTERNAL_SUBNET and says what is accepted",
    args: [],
    env: (env) => ({ ...env, LINODE_EXTERNAL_SUBNET: "fd00::/64" }),
    code: 2,
    stderr:
      /^LINODE_EXTERNAL_SUBNET: invalid IPv4 CIDR "fd00::\/64" \(use an IPv4 network such as 172\.24\.0\.0\/16/m,
  },
  {
    name: "exits 2 on a leader-election timer too long to run",
    args: ["--leader-elect-lease-duration=1000h"],
    code: 2,
    stderr: /^--leader-elect-lease-duration: is too long, got 1000h0m0s \(use 1ms to 240h0m0s/m,
  },
  {
    name: "exits 2 when the kubeconfig is outside the readable folders, and says how to allow it",
    args: [],
    env: (env) => ({ ...env, KUBECONFIG: "/nonexistent/kubeconfig" }),
    code: 2,
    stderr:
      /KUBECONFIG: cannot read \/nonexistent\/kubeconfig: this process may not read it \(.*\/etc\/kubernetes\/ccm\.conf, .*\): move it there, or add it to permissions\.ccm\.read in deno\.json/,
  },
  {
    name: "exits 2 when a readable kubeconfig cannot be loaded and names the file",
    args: [],
    env: (env) => ({ ...env, KUBECONFIG: env.KUBECONFIG?.replace(/kubeconfig$/, BROKEN) ?? "" }),
    code: 2,
    stderr: /Cannot load kubeconfig [^\n]*broken-kubeconfig/,
    late: true,
  },
  {
    name: "prints --help on stdout and exits 0",
    args: ["--help"],
    code: 0,
    stdout: /--leader-elect-lease-duration[\s\S]*LINODE_API_TOKEN/,
  },
  {
    name: "prints --version on stdout and exits 0",
    args: ["--version"],
    code: 0,
    stdout: new RegExp(`^linode-cloud-controller-manager v${VERSION.replaceAll(".", "\\.")}$`),
  },
];

Deno.test("main() config errors, --help and --version: exit codes, messages, no stack, no token", async () => {
  await using world = await startDemoWorld({ nodes: 0, services: 0, linodeToken: TOKEN });
  const dir = world.kubeconfigPath.replace(/\/[^/]+$/, "");
  await Deno.writeTextFile(`${dir}/${BROKEN}`, "{ not: [yaml");
  // Independent short-lived processes: run them side by side.
  const results = await Promise.all(CASES.map(async (c) => {
    const env = c.env ? c.env({ ...world.env }) : world.env;
    return { c, result: await runCcmToExit(c.args, { env, readDirs: [dir], name: c.name }) };
  }));
  for (const { c, result } of results) {
    const all = `${result.stdout}\n${result.stderr}`;
    assert.equal(result.code, c.code, `${c.name}: exit code\n${all}`);
    if (c.stdout) assert.match(result.stdout.trim(), c.stdout, c.name);
    if (c.stderr) assert.match(result.stderr, c.stderr, `${c.name}\n${result.stderr}`);
    if (c.code === 2 && !c.late) assert.match(result.stderr, /Run with --help/, c.name);
    assert.doesNotMatch(all, STACK, `${c.name}: stack trace`);
    assert.ok(!all.includes(TOKEN), `${c.name}: the Linode token was printed`);
    assert.ok(!all.includes(world.kube.token), `${c.name}: the kube token was printed`);
  }
  // None of them got as far as talking to Linode or Kubernetes.
  assert.equal(world.linode.calls.total(), 0);
  assert.equal(world.kube.calls.total(), 0);
});

Deno.test("main() exits 2 naming every kubeconfig, token or TLS file it may not read, before starting anything", async () => {
  await using world = await startDemoWorld({ nodes: 0, services: 0, linodeToken: TOKEN });
  const readable = world.kubeconfigPath.replace(/\/[^/]+$/, "");
  // Not granted to the child: outside the ccm set's folders and not in readDirs.
  const outside = await Deno.makeTempDir({ prefix: "ccm-unreadable-" });
  try {
    for (const f of ["kubeconfig", "token", "tls.crt"]) await Deno.writeTextFile(`${outside}/${f}`, "x");
    const { LINODE_API_TOKEN: _, ...withoutToken } = world.env;
    const result = await runCcmToExit([
      `--kubeconfig=${outside}/kubeconfig`,
      `--tls-cert-file=${outside}/tls.crt`,
      `--tls-private-key-file=${readable}/absent.key`,
    ], { env: { ...withoutToken, LINODE_API_TOKEN_FILE: `${outside}/token` }, readDirs: [readable] });
    assert.equal(result.code, 2, result.stderr);
    const denied = "this process may not read it \\(the ccm permission set";
    for (
      const line of [
        `--kubeconfig: cannot read ${outside}/kubeconfig: ${denied}`,
        `LINODE_API_TOKEN_FILE: cannot use ${outside}/token: ${denied}`,
        `--tls-cert-file: cannot read ${outside}/tls.crt: ${denied}`,
        `--tls-private-key-file: cannot read ${readable}/absent.key: not found`,
      ]
    ) assert.match(result.stderr, new RegExp(line), result.stderr);
    assert.match(result.stderr, /Run with --help/);
    assert.doesNotMatch(result.stderr, STACK);
    assert.equal(world.linode.calls.total(), 0);
    assert.equal(world.kube.calls.total(), 0);
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});
