/**
 * The systemd unit (`deploy/systemd/`): `systemd-analyze verify` and `security` when systemd's tools exist,
 * its credential paths against the `ccm` permission set, its syscall filter and address families against
 * the CCM's real syscalls (under `strace`), and why `MemoryDenyWriteExecute=` stays off.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseConfig } from "../config/config.ts";
import { ccmPermissions, EMULATOR_NET } from "../deploy/artifacts.ts";
import { startDemoWorld } from "../sim/demo_world.ts";
import { UNINITIALIZED_TAINT } from "../sim/kubelet.ts";
import { freePort, waitFor } from "./process.ts";
import {
  allowedSyscalls,
  ENV_EXAMPLE_PATH,
  hasTool,
  parseUnit,
  readStraceLog,
  REPO_DIR,
  run,
  serviceValues,
  traceCcm,
  UNIT_BINARY,
  UNIT_PATH,
} from "./systemd_fixture.ts";

const SYSTEMD = hasTool("systemd-analyze");
const STRACE = hasTool("strace");
/** `%d` as systemd expands it for this unit. */
const CREDENTIALS_DIR = "/run/credentials/linode-ccm.service";

/** The kernel's PR_SET_MDWE exists from Linux 6.3. */
function kernelHasMdwe(): boolean {
  const [major = 0, minor = 0] = Deno.osRelease().split(/[.-]/).map(Number);
  return Deno.build.os === "linux" && (major > 6 || (major === 6 && minor >= 3));
}

function envFile(path: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of Deno.readTextFileSync(path).split("\n")) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m?.[1]) env[m[1]] = m[2] ?? "";
  }
  return env;
}

/** The unit's `Environment=` settings, `%d` expanded as systemd does. */
function unitEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const value of serviceValues("Environment")) {
    const [name = "", ...rest] = value.split("=");
    env[name] = rest.join("=").replaceAll("%d", CREDENTIALS_DIR);
  }
  return env;
}

Deno.test({
  name: "linode-ccm.service passes `systemd-analyze verify` with no warning",
  ignore: !SYSTEMD,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "unit_verify_" });
    try {
      // verify also checks that ExecStart= is executable: a stand-in takes the binary's place.
      const standIn = join(dir, "linode-cloud-controller-manager");
      await Deno.writeTextFile(standIn, "#!/bin/sh\n", { mode: 0o755 });
      const unit = await Deno.readTextFile(UNIT_PATH);
      assert.ok(unit.includes(`ExecStart=${UNIT_BINARY} `), "ExecStart= runs the installed binary");
      const copy = join(dir, "linode-ccm.service");
      await Deno.writeTextFile(copy, unit.replace(`ExecStart=${UNIT_BINARY}`, `ExecStart=${standIn}`));
      const { code, out } = await run("systemd-analyze", ["verify", copy]);
      assert.equal(code, 0, out);
      assert.equal(out, "", "systemd-analyze verify printed warnings");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "linode-ccm.service rates OK or better in `systemd-analyze security`, as docs/install.md says",
  ignore: !SYSTEMD,
  async fn() {
    const { out } = await run("systemd-analyze", ["security", "--offline=true", UNIT_PATH]);
    const m = /Overall exposure level for linode-ccm\.service: (\d+\.\d) (\w+)/.exec(out);
    assert.ok(m, out);
    const [, score, rating] = m;
    assert.ok(rating === "OK" || rating === "SAFE", `rated ${score} ${rating}`);
    const version = /systemd (\d+)/.exec((await run("systemd-analyze", ["--version"])).out)?.[1];
    const page = await Deno.readTextFile(join(REPO_DIR, "docs/install.md"));
    const stated = /exposure \*\*(\d+\.\d) (\w+)\*\* \(systemd (\d+)\)/.exec(page);
    assert.ok(stated, "docs/install.md states the exposure as **<score> <rating>** (systemd <version>)");
    if (stated[3] === version) {
      assert.deepEqual([stated[1], stated[2]], [score, rating], "docs/install.md is stale");
    }
  },
});

Deno.test("linode-ccm.service hands the token and kubeconfig over as credentials the ccm set may read", () => {
  const credentials = serviceValues("LoadCredential").map((v) => v.split(":")[0]);
  assert.deepEqual(credentials.sort(), ["kubeconfig", "linode-token"]);
  const env = unitEnvironment();
  assert.equal(env.LINODE_API_TOKEN_FILE, `${CREDENTIALS_DIR}/linode-token`);
  assert.equal(env.KUBECONFIG, `${CREDENTIALS_DIR}/kubeconfig`);
  const { read, env: envNames } = ccmPermissions();
  for (const path of [env.LINODE_API_TOKEN_FILE, env.KUBECONFIG]) {
    assert.ok(read.some((dir) => path === dir || path.startsWith(`${dir}/`)), `${path} outside ${read}`);
  }
  assert.ok(envNames.includes("LINODE_*") && envNames.includes("KUBECONFIG"));
  // The example file sets the region and leaves every credential to the unit.
  const example = envFile(ENV_EXAMPLE_PATH);
  assert.equal(example.LINODE_REGION, "us-east");
  for (const name of ["LINODE_API_TOKEN", "LINODE_API_TOKEN_FILE", "KUBECONFIG"]) {
    assert.equal(example[name], undefined, `${name} in the environment file`);
  }
  // Together they make a valid configuration: the token comes from the file, the flags parse.
  const args =
    serviceValues("ExecStart")[0]?.split(/\s+/).slice(1).flatMap((a) =>
      a === "$CCM_FLAGS" ? (example.CCM_FLAGS ?? "").split(/\s+/).filter(Boolean) : [a]
    ) ?? [];
  const parsed = parseConfig(args, { ...example, ...env });
  assert.equal(parsed.kind, "run");
  if (parsed.kind !== "run") return;
  assert.deepEqual(parsed.config.linode.token, { kind: "file", path: `${CREDENTIALS_DIR}/linode-token` });
  assert.equal(parsed.config.leaderElection.enabled, true);
});

Deno.test("linode-ccm.service restarts on failure but not on a configuration error (exit 2)", () => {
  assert.deepEqual(serviceValues("Restart"), ["on-failure"]);
  assert.deepEqual(serviceValues("RestartPreventExitStatus"), ["2"]);
  const unit = parseUnit(Deno.readTextFileSync(UNIT_PATH));
  assert.deepEqual(unit.get("Install")?.get("WantedBy"), ["multi-user.target"]);
});

Deno.test({
  name: "the CCM's syscalls and socket families stay inside SystemCallFilter= and RestrictAddressFamilies=",
  ignore: !SYSTEMD || !STRACE || (Deno.uid() === 0 && !hasTool("setpriv")),
  async fn() {
    const allowed = await allowedSyscalls(serviceValues("SystemCallFilter"));
    const families = new Set(serviceValues("RestrictAddressFamilies").join(" ").split(/\s+/));
    // Traced: what the filter would refuse, plus socket calls (for their families) and execve (the start).
    const watched = new Set(["socket", "socketpair", "execve"]);
    const untraced = [...allowed].filter((s) => !watched.has(s));
    await using world = await startDemoWorld({ nodes: 2, services: 0 });
    await using ccm = await traceCcm(world, [
      `--secure-port=${freePort()}`,
      "--leader-elect-retry-period=250ms",
    ], {
      untraced,
    });
    const tainted = () =>
      world.kube.store.list("nodes").some((n) =>
        (n as { spec?: { taints?: { key?: string }[] } }).spec?.taints?.some((t) =>
          t.key === UNINITIALIZED_TAINT.key
        )
      );
    await waitFor(() => !tainted(), { what: "the traced CCM to initialise the Nodes", timeoutMs: 60_000 });
    await ccm.stop();
    const used = readStraceLog(await ccm.log(), ccm.start);
    assert.ok(used.families.has("AF_INET"), "the log holds the CCM's socket calls");
    assert.deepEqual([...used.syscalls].filter((s) => !allowed.has(s)), [], "syscalls outside the filter");
    assert.deepEqual([...used.families].filter((f) => !families.has(f)), [], "socket families not allowed");
  },
});

Deno.test({
  name: "MemoryDenyWriteExecute: Deno aborts under it, and --jitless (which it needs) has no WebAssembly",
  ignore: !kernelHasMdwe(),
  async fn() {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-ffi", "--allow-run", "tests/mdwe_probe.ts"],
      cwd: REPO_DIR,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const result = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(result.supported, true);
    // If this ever passes, V8 no longer needs W+X memory: turn MemoryDenyWriteExecute= on in the unit.
    assert.notEqual(result.jit.code, 0, `deno ran under MDWE: ${JSON.stringify(result.jit)}`);
    assert.deepEqual([result.jitless.code, result.jitless.stdout], [0, "undefined"]);
  },
});

Deno.test("the CCM cannot reach the apiserver with --jitless: the Kubernetes client's HTTP parser is WebAssembly", async () => {
  await using world = await startDemoWorld({ nodes: 1, services: 0 });
  const dir = world.kubeconfigPath.replace(/\/[^/]+$/, "");
  const read = [...ccmPermissions().read, dir].join(",");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-P=ccm", "--ignore-env", `--allow-read=${read}`, `--allow-net=${EMULATOR_NET}`]
      .concat(["--v8-flags=--jitless", "main.ts"])
      .concat(["--secure-port=0", "--leader-elect=false"]),
    cwd: REPO_DIR,
    env: { ...world.env, HOME: Deno.env.get("HOME") ?? "/", NO_COLOR: "1" },
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const reading = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({
      write: (chunk) => {
        stderr += chunk;
      },
    }),
  );
  try {
    await waitFor(() => stderr.includes("ERR_WEBASSEMBLY_NOT_SUPPORTED"), {
      what: "the jitless CCM to fail its first list",
      timeoutMs: 30_000,
    });
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await reading;
  }
  assert.equal(world.kube.calls.count("GET /api/v1/nodes"), 0, "no list reached the apiserver");
});
