/**
 * The Dockerfile, checked without a Docker engine: pinned bases, a `scratch` final stage with no shell and a
 * non-root user, COPY sources that exist, the libraries it copies against what the Deno runtime links, and
 * its library-copying step run for real on this machine's `deno` to build a root file system on which the
 * CCM then runs, as nobody, against the emulators.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  buildBundle,
  ccmPermissionFlags,
  ccmRuntimeEnv,
  ccmV8Flags,
  EMULATOR_NET,
  REPO_DIR,
} from "../deploy/artifacts.ts";
import { startDemoWorld } from "../sim/demo_world.ts";
import { UNINITIALIZED_TAINT } from "../sim/kubelet.ts";
import {
  copyParts,
  dockerignore,
  isIgnored,
  linkedLibraries,
  parseDockerfile,
  type Stage,
} from "./dockerfile_fixture.ts";
import { childEnv, v8FlagArgs, waitFor } from "./process.ts";
import { hasTool, run, toolPath } from "./systemd_fixture.ts";

const STAGES = parseDockerfile(Deno.readTextFileSync(join(REPO_DIR, "Dockerfile")));
const BUILD = STAGES[0] as Stage;
const FINAL = STAGES.at(-1) as Stage;
const CAN_CHROOT = Deno.uid() === 0 && ["chroot", "unshare", "mount", "ldd", "sh"].every(hasTool);

/** The Deno release CI installs (`.ci/run`), which the build image must match. */
function testedDenoVersion(): string {
  const m = /deno@(\d+\.\d+\.\d+)/.exec(Deno.readTextFileSync(join(REPO_DIR, ".ci/run")));
  assert.ok(m?.[1], ".ci/run pins a Deno version");
  return m[1];
}

/** `$NAME`, `"$NAME"` and `${NAME}` replaced by the stage's ARG defaults. */
function expand(stage: Stage, text: string): string {
  return text.replace(/\$\{?(\w+)\}?/g, (all, name: string) => stage.args.get(name) ?? all);
}

function workdir(stage: Stage): string {
  return stage.instructions.findLast((i) => i.keyword === "WORKDIR")?.args ?? "/";
}

Deno.test("Dockerfile: pinned build image, final stage FROM scratch as a non-root user, no shell", () => {
  const version = testedDenoVersion();
  assert.ok(STAGES.length >= 2);
  for (const stage of STAGES.slice(0, -1)) {
    const [, tag = ""] = stage.from.split("@")[0]!.split(":");
    const pinned = stage.from.includes("@sha256:") ||
      new RegExp(`(^|-)${version.replaceAll(".", "\\.")}$`).test(tag);
    assert.ok(pinned, `${stage.from} is not pinned to Deno ${version} or a digest`);
  }
  assert.equal(FINAL.from, "scratch");
  const keywords = FINAL.instructions.map((i) => i.keyword);
  assert.ok(!keywords.includes("RUN") && !keywords.includes("SHELL"), "the final stage runs nothing");
  const user = FINAL.instructions.findLast((i) => i.keyword === "USER")?.args ?? "";
  assert.match(user, /^\d+(:\d+)?$/, "a numeric user: scratch has no /etc/passwd");
  assert.notEqual(Number(user.split(":")[0]), 0, "not root");
  const entrypoint = JSON.parse(FINAL.instructions.find((i) => i.keyword === "ENTRYPOINT")?.args ?? "null");
  assert.ok(Array.isArray(entrypoint), "ENTRYPOINT in exec form: there is no shell to run a string");
  const copied = FINAL.instructions.filter((i) => i.keyword === "COPY").map((i) => copyParts(i.args).dest);
  assert.ok(copied.includes(entrypoint[0]), `${entrypoint[0]} is copied in`);
  assert.deepEqual(copied.filter((d) => /(^|\/)(sh|bash|ash|busybox)$/.test(d)), []);
});

Deno.test("Dockerfile: every COPY source is in the build context or made by the stage it comes from", () => {
  const ignored = dockerignore(Deno.readTextFileSync(join(REPO_DIR, ".dockerignore")));
  STAGES.forEach((stage, index) => {
    for (const copy of stage.instructions.filter((i) => i.keyword === "COPY").map((i) => copyParts(i.args))) {
      if (copy.from === undefined) {
        for (const source of copy.sources) {
          assert.ok(source === "." || Deno.statSync(join(REPO_DIR, source)), `${source} exists`);
          assert.ok(source === "." || !isIgnored(ignored, source), `${source} is excluded by .dockerignore`);
        }
        continue;
      }
      const origin = STAGES.findIndex((s) => s.name === copy.from);
      assert.ok(origin >= 0 && origin < index, `--from=${copy.from} is an earlier stage`);
      const made = STAGES[origin]!.instructions.filter((i) => i.keyword === "RUN").map((i) =>
        expand(STAGES[origin]!, i.args)
      );
      for (const source of copy.sources) {
        const path = source.replace(/\/$/, "");
        assert.ok(
          made.some((r) => r.includes(path)),
          `${source} is not made (or checked) by a RUN of ${copy.from}`,
        );
      }
    }
  });
});

Deno.test("Dockerfile: the binary is `deno task compile`, which embeds the ccm permission set", () => {
  const tasks = JSON.parse(Deno.readTextFileSync(join(REPO_DIR, "deno.json"))).tasks as Record<
    string,
    string
  >;
  const compile = tasks.compile ?? "";
  assert.match(compile, /^deno compile -P=ccm --ignore-env .*--output (\S+) main\.ts$/);
  const output = /--output (\S+)/.exec(compile)?.[1] ?? "";
  assert.equal(BUILD.args.get("BINARY"), join(workdir(BUILD), output), "BINARY is where the task writes");
  assert.ok(BUILD.instructions.some((i) => i.keyword === "RUN" && /\bdeno task compile\b/.test(i.args)));
  assert.ok(ccmPermissionFlags().includes("--ignore-env"), "the bundle tests run with the same flags");
});

Deno.test({
  name:
    "Dockerfile: LINKED_LIBS are exactly the libraries the Deno runtime links (ldd of this machine's deno)",
  ignore: !hasTool("ldd"),
  async fn() {
    // Assumption: denort (the runtime `deno compile` embeds) is built from the same sources with the same
    // toolchain and link flags as the deno CLI, so both link the same C libraries.
    const { code, out } = await run("ldd", [Deno.execPath()]);
    assert.equal(code, 0, out);
    const listed = (BUILD.args.get("LINKED_LIBS") ?? "").split(/\s+/).filter(Boolean).sort();
    assert.deepEqual(listed, linkedLibraries(out));
  },
});

Deno.test({
  name:
    "Dockerfile: its ldd step, run on this machine's deno, makes a root file system the CCM runs on as nobody",
  ignore: !CAN_CHROOT,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "image_root_" });
    const build = await Deno.makeTempDir({ prefix: "image_build_" });
    try {
      await Deno.chmod(root, 0o755);
      const step = BUILD.instructions.find((i) => i.keyword === "RUN" && i.args.startsWith("ldd "));
      assert.ok(step, "the build stage has the ldd step");
      const binary = join(build, "linode-cloud-controller-manager");
      await Deno.copyFile(Deno.execPath(), binary);
      const env = {
        LINKED_LIBS: BUILD.args.get("LINKED_LIBS") ?? "",
        BINARY: binary,
        ROOTFS: root,
        PATH: Deno.env.get("PATH") ?? "",
      };
      const made = await new Deno.Command(toolPath("sh") ?? "sh", {
        args: ["-c", step.args],
        env,
        clearEnv: true,
      }).output();
      assert.ok(made.success, new TextDecoder().decode(made.stderr));
      const files = await listFiles(root);
      const names = files.map((f) => f.split("/").at(-1) ?? "").sort();
      assert.deepEqual(names, env.LINKED_LIBS.split(/\s+/).sort(), `the root file system holds ${files}`);
      await assembleImage(root, binary);
      await runInImage(root);
    } finally {
      await Deno.remove(root, { recursive: true });
      await Deno.remove(build, { recursive: true });
    }
  },
});

async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(join(dir, prefix))) {
    const path = `${prefix}/${entry.name}`;
    if (entry.isDirectory) out.push(...await listFiles(dir, path));
    else out.push(path);
  }
  return out;
}

/** Adds what the final stage copies besides the libraries, plus the bundle the stand-in binary runs. */
async function assembleImage(root: string, binary: string): Promise<void> {
  const ca = FINAL.instructions.map((i) => copyParts(i.args)).find((c) => c.dest.endsWith(".crt"))?.dest ??
    "";
  await Deno.mkdir(join(root, ca, ".."), { recursive: true });
  await Deno.copyFile(ca, join(root, ca));
  // The stand-in for the compiled binary: the runtime itself, running the bundle it would embed.
  await Deno.copyFile(binary, join(root, "linode-cloud-controller-manager"));
  await buildBundle(join(root, "ccm.js"));
  for (const dir of ["etc/kubernetes", "etc/linode", "proc", "dev"]) {
    await Deno.mkdir(join(root, dir), { recursive: true });
  }
  // `deno run` wants a cache folder; the compiled binary does not (the image has none).
  await Deno.mkdir(join(root, "deno-dir"));
  await Deno.chown(join(root, "deno-dir"), 65534, 65534);
}

async function runInImage(root: string): Promise<void> {
  await using world = await startDemoWorld({ nodes: 1, services: 0 });
  await Deno.copyFile(world.kubeconfigPath, join(root, "etc/kubernetes/ccm.conf"));
  await Deno.writeTextFile(join(root, "etc/linode/token"), world.env.LINODE_API_TOKEN ?? "");
  for (const f of ["etc/kubernetes/ccm.conf", "etc/linode/token", "ccm.js"]) {
    await Deno.chmod(join(root, f), 0o644);
  }
  // A container runtime mounts /proc and /dev into every container; a private mount namespace does it here.
  const mounts = `mount --bind /proc "$0/proc" && mount --bind /dev "$0/dev" && exec ${
    toolPath("chroot")
  } "$@"`;
  const child = new Deno.Command(toolPath("unshare") ?? "unshare", {
    args: ["--mount", toolPath("sh") ?? "sh", "-c", mounts, root, "--userspec=65534:65534", root]
      .concat([
        "/linode-cloud-controller-manager",
        "run",
        "--no-config",
        ...ccmPermissionFlags([], EMULATOR_NET),
      ])
      .concat(["/ccm.js", "--secure-port=0", "--leader-elect=false"]),
    env: {
      KUBECONFIG: "/etc/kubernetes/ccm.conf",
      LINODE_API_TOKEN_FILE: "/etc/linode/token",
      LINODE_REGION: world.region,
      LINODE_URL: world.env.LINODE_URL ?? "",
      DENO_TLS_CA_STORE: "system,mozilla",
      DENO_DIR: "/deno-dir",
      NO_COLOR: "1",
    },
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const output = new Response(child.stderr).text();
  let exited = false;
  const status = child.status.finally(() => exited = true);
  try {
    const initialised = () =>
      world.kube.store.list("nodes").every((n) =>
        !((n as { spec?: { taints?: { key?: string }[] } }).spec?.taints ?? []).some((t) =>
          t.key === UNINITIALIZED_TAINT.key
        )
      );
    await waitFor(() => exited || initialised(), {
      what: "the CCM in the image root to initialise the Node",
    });
    // The message awaits the output, which ends only with the process: build it only when it has ended.
    if (exited) assert.fail(`the CCM exited: ${(await output).slice(0, 3000)}`);
  } finally {
    if (!exited) child.kill("SIGTERM");
    // A stop that hangs is a failure, not a hung suite.
    const timer = setTimeout(() => exited || child.kill("SIGKILL"), 10_000);
    const { code } = await status;
    clearTimeout(timer);
    const text = await output;
    assert.equal(code, 0, text);
    assert.ok(!text.includes(world.env.LINODE_API_TOKEN ?? "\u0000"), "the token was printed");
  }
}

Deno.test("deploy/v8-flags: start, dev and compile run with it, and so do the processes the tests and the bench spawn", () => {
  const tasks = JSON.parse(Deno.readTextFileSync(join(REPO_DIR, "deno.json"))).tasks as Record<
    string,
    string
  >;
  for (const name of ["start", "dev", "compile"]) {
    assert.match(
      tasks[name] ?? "",
      /^(?:[A-Z_]+=\S+ )*deno (run|compile) -P=\w+ (--ignore-env )?--v8-flags=\$\(cat deploy\/v8-flags\) /,
      name,
    );
  }
  const flags = ccmV8Flags();
  assert.ok(flags.length > 0 && flags.every((f) => /^--[a-z][a-z0-9-]*(=\S+)?$/.test(f)), flags.join(","));
  assert.deepEqual(
    v8FlagArgs(),
    [`--v8-flags=${flags.join(",")}`],
    "tests/process.ts spawns with the same flags",
  );
});

Deno.test("deploy/runtime-env: the image, the systemd unit, start, dev and every spawned CCM set exactly it", () => {
  const env = ccmRuntimeEnv();
  const pairs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  assert.ok(pairs.length > 0 && Object.keys(env).every((k) => /^[A-Z][A-Z0-9_]*$/.test(k)), pairs.join(" "));
  const dockerfile = Deno.readTextFileSync(join(REPO_DIR, "Dockerfile"));
  const envLines = dockerfile.split("\n").filter((l) => l.startsWith("ENV MALLOC_"));
  assert.deepEqual(envLines, [`ENV ${pairs.join(" ")}`], "the image's ENV");
  const unit = Deno.readTextFileSync(join(REPO_DIR, "deploy/systemd/linode-ccm.service"));
  assert.deepEqual(
    unit.split("\n").filter((l) => l.startsWith("Environment=MALLOC_")),
    pairs.map((p) => `Environment=${p}`),
    "the unit's Environment=",
  );
  const tasks = JSON.parse(Deno.readTextFileSync(join(REPO_DIR, "deno.json"))).tasks as Record<
    string,
    string
  >;
  for (const name of ["start", "dev"]) {
    assert.ok((tasks[name] ?? "").startsWith(`${pairs.join(" ")} deno run `), `${name}: ${tasks[name]}`);
  }
  const child = childEnv({ KUBECONFIG: "/x" });
  for (const [k, v] of Object.entries(env)) assert.equal(child[k], v, `spawned CCM: ${k}`);
  assert.equal(child.KUBECONFIG, "/x");
});
