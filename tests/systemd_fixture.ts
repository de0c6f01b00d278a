/**
 * What the systemd unit tests read and run: the unit's settings, systemd's own syscall groups
 * (`systemd-analyze syscall-filter`), and the CCM's real syscalls and socket families under `strace`.
 */
import { join } from "node:path";
import { buildBundle, ccmPermissionFlags, EMULATOR_NET, REPO_DIR } from "../deploy/artifacts.ts";
import type { DemoWorld } from "../sim/demo_world.ts";

export { REPO_DIR };
/** The unit as shipped. */
export const UNIT_PATH: string = join(REPO_DIR, "deploy/systemd/linode-ccm.service");
/** The environment-file example beside it. */
export const ENV_EXAMPLE_PATH: string = join(REPO_DIR, "deploy/systemd/linode-ccm.env");
/** Where the unit expects the binary; tests point it at a stand-in. */
export const UNIT_BINARY = "/usr/local/bin/linode-cloud-controller-manager";

/** The path of executable `name` on PATH, or undefined. */
export function toolPath(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (dir && Deno.statSync(join(dir, name)).isFile) return join(dir, name);
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/** True when `name` is an executable on PATH. */
export function hasTool(name: string): boolean {
  return toolPath(name) !== undefined;
}

/** Runs a command; returns its exit code and output. */
export async function run(cmd: string, args: readonly string[]): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command(cmd, { args: [...args], stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder();
  return { code: o.code, out: (text.decode(o.stdout) + text.decode(o.stderr)).trim() };
}

/** `[Section]` → key → values in order, with comments dropped and `\` continuations joined. */
export function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  const lines = text.replace(/\\\n/g, " ").split("\n");
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section?.[1]) {
      current = new Map();
      sections.set(section[1], current);
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 0 || !current) continue;
    const key = line.slice(0, eq).trim();
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return sections;
}

/** The `[Service]` values of `key` in the shipped unit. */
export function serviceValues(key: string): string[] {
  return parseUnit(Deno.readTextFileSync(UNIT_PATH)).get("Service")?.get(key) ?? [];
}

/** The syscalls of one `systemd-analyze syscall-filter` group, groups inside it expanded. */
export async function expandSyscallGroup(group: string, seen = new Set<string>()): Promise<Set<string>> {
  const names = new Set<string>();
  if (seen.has(group)) return names;
  seen.add(group);
  const { code, out } = await run("systemd-analyze", ["syscall-filter", group]);
  if (code !== 0) throw new Error(`systemd-analyze syscall-filter ${group} failed: ${out}`);
  for (const line of out.split("\n").slice(1)) {
    const entry = line.trim();
    if (entry === "" || entry.startsWith("#")) continue;
    if (entry.startsWith("@")) { for (const n of await expandSyscallGroup(entry, seen)) names.add(n); }
    else names.add(entry);
  }
  return names;
}

/** What `SystemCallFilter=` lines allow: the allow-lists' union minus the `~` deny-lists' union. */
export async function allowedSyscalls(filters: readonly string[]): Promise<Set<string>> {
  const allowed = new Set<string>();
  const denied = new Set<string>();
  for (const filter of filters) {
    const deny = filter.startsWith("~");
    for (const item of filter.replace(/^~/, "").split(/\s+/).filter(Boolean)) {
      const names = item.startsWith("@") ? await expandSyscallGroup(item) : new Set([item]);
      for (const n of names) (deny ? denied : allowed).add(n);
    }
  }
  for (const n of denied) allowed.delete(n);
  return allowed;
}

/** Syscall names and socket families in an `strace -f` log, from the line where `from` matches on. */
export function readStraceLog(text: string, from: string): { syscalls: Set<string>; families: Set<string> } {
  const syscalls = new Set<string>();
  const families = new Set<string>();
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.includes(from));
  for (const line of lines.slice(Math.max(start, 0))) {
    // "1234 openat(AT_FDCWD, ..." or "1234 <... openat resumed>" (the call was already counted).
    const m = /^\d+\s+([a-z_0-9]+)\(/.exec(line);
    if (!m?.[1]) continue;
    syscalls.add(m[1]);
    const family = /^\d+\s+socket(?:pair)?\((AF_[A-Z0-9]+)/.exec(line)?.[1];
    if (family) families.add(family);
  }
  return { syscalls, families };
}

/** The first traced pid of an `strace -f -o` log (the command strace started), once it is written. */
export function firstPid(text: string): number | undefined {
  const m = /^(\d+)\s/.exec(text);
  return m?.[1] ? Number(m[1]) : undefined;
}

/** A CCM running under `strace -f`, as the unit runs it. */
export interface TracedCcm extends AsyncDisposable {
  /** The strace log so far. */
  log(): Promise<string>;
  /** What strace and the CCM wrote on stderr, once both have ended. */
  output(): Promise<string>;
  /** What marks the CCM's own start in the log (the `execve` of the runtime). */
  readonly start: string;
  /** Sends SIGTERM to the CCM (not to strace, which would detach) and waits for both to end. */
  stop(): Promise<void>;
}

/** Options of `traceCcm`. */
export interface TraceOptions {
  /**
   * Syscalls not to trace. With `--seccomp-bpf` the kernel stops the process only for the others, so leaving
   * out the allowed ones keeps the CCM at nearly full speed and logs only what matters.
   */
  untraced?: Iterable<string>;
}

/** strace's `-e trace=` expression for every syscall but `untraced` (`?`: unknown names are no error). */
function traceExpression(untraced: Iterable<string> | undefined): string[] {
  const names = [...(untraced ?? [])];
  return names.length ? ["--seccomp-bpf", `-e`, `trace=!${names.map((n) => `?${n}`).join(",")}`] : [];
}

/** The nobody user: what `DynamicUser=` comes closest to on a machine without systemd running. */
const NOBODY = "65534";

/**
 * Runs the bundle under `strace -f` with the `ccm` flags, as an unprivileged user when this process is root
 * (as root, SQLite in Deno's caches calls `fchown`, which a service user never does): the token and the
 * kubeconfig are handed over in files only that user may read, like `LoadCredential=`.
 */
export async function traceCcm(
  world: DemoWorld,
  args: readonly string[],
  options: TraceOptions = {},
): Promise<TracedCcm> {
  const dir = await Deno.makeTempDir({ prefix: "traced_ccm_" });
  await Deno.chmod(dir, 0o755);
  const asRoot = Deno.uid() === 0;
  const files = ["ccm.js", "kubeconfig", "linode-token", "cache"].map((f) => join(dir, f));
  const [bundle = "", kubeconfig = "", token = "", cache = ""] = files;
  await buildBundle(bundle);
  await Deno.copyFile(world.kubeconfigPath, kubeconfig);
  await Deno.writeTextFile(token, world.env.LINODE_API_TOKEN ?? "");
  await Deno.mkdir(cache);
  const deno = asRoot ? join(dir, "deno") : Deno.execPath();
  if (asRoot) {
    // The runtime lives under root's home, out of reach of the unprivileged user.
    await Deno.copyFile(Deno.execPath(), deno);
    for (const f of [kubeconfig, token, cache]) await Deno.chown(f, Number(NOBODY), Number(NOBODY));
  }
  const user = asRoot
    ? [toolPath("setpriv") ?? "setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"]
    : [];
  const log = join(dir, "strace.log");
  const child = new Deno.Command("strace", {
    args: ["-f", "-qq", ...traceExpression(options.untraced), "-o", log, ...user, deno, "run", "--no-config"]
      .concat(ccmPermissionFlags([dir], EMULATOR_NET), [bundle])
      .concat(args),
    env: {
      LINODE_URL: world.env.LINODE_URL ?? "",
      LINODE_REGION: world.region,
      LINODE_API_TOKEN_FILE: token,
      KUBECONFIG: kubeconfig,
      DENO_DIR: cache,
      HOME: dir,
      NO_COLOR: "1",
    },
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const output = new Response(child.stderr).text();
  let stopped: Promise<void> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      const pid = firstPid(await Deno.readTextFile(log).catch(() => ""));
      const signal = (sig: Deno.Signal) => {
        try {
          if (pid !== undefined) Deno.kill(pid, sig);
          else child.kill("SIGKILL");
        } catch {
          // Already ended.
        }
      };
      signal("SIGTERM");
      // A stop that hangs (a slow start under a loaded machine) must not hang the suite.
      const timer = setTimeout(() => signal("SIGKILL"), 15_000);
      await child.status;
      clearTimeout(timer);
      await output;
    })();
  return {
    log: () => Deno.readTextFile(log),
    output: () => output,
    start: `execve("${deno}"`,
    stop,
    async [Symbol.asyncDispose]() {
      await stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
