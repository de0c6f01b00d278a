/**
 * What ships, rebuilt the way the tasks build it: the bundle (`deno task bundle`) and the `ccm` permission
 * set as explicit flags (what `deno compile -P=ccm` embeds in the binary). The deploy tests and the
 * footprint bench run the bundle with these flags, the closest stand-in for the binary on a machine that
 * cannot download `denort`.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const REPO_DIR: string = fileURLToPath(new URL("..", import.meta.url));

/** The `ccm` permission set of `deno.json`. */
export interface CcmPermissions {
  readonly net: boolean | readonly string[];
  /** Hosts refused even though `net` allows every other one. */
  readonly denyNet: readonly string[];
  readonly env: readonly string[];
  readonly read: readonly string[];
  readonly sys: readonly string[];
}

/** Reads the `ccm` permission set from `deno.json`. */
export function ccmPermissions(): CcmPermissions {
  const ccm = JSON.parse(Deno.readTextFileSync(join(REPO_DIR, "deno.json")))?.permissions?.ccm;
  if (!ccm) throw new TypeError("deno.json has no ccm permission set");
  // `"net": { "allow": ..., "deny": [...] }` or a plain allow value.
  const net = typeof ccm.net === "object" && !Array.isArray(ccm.net) ? ccm.net : { allow: ccm.net, deny: [] };
  return {
    net: net.allow ?? false,
    denyNet: net.deny ?? [],
    env: ccm.env ?? [],
    read: ccm.read ?? [],
    sys: ccm.sys ?? [],
  };
}

function allow(name: string, value: boolean | readonly string[]): string[] {
  if (value === true) return [`--allow-${name}`];
  return Array.isArray(value) && value.length ? [`--allow-${name}=${value.join(",")}`] : [];
}

/**
 * The V8 flags `deno task start`, `deno task dev` and the compiled binary run with (`deploy/v8-flags`, one
 * comma-separated line): `--optimize-for-size` keeps the heap close to its live size, which bounds the
 * resident memory of a cold start at 5,000 Nodes (docs/operations.md#memory).
 */
export function ccmV8Flags(): string[] {
  const line = Deno.readTextFileSync(join(REPO_DIR, "deploy/v8-flags")).trim();
  return line ? line.split(",") : [];
}

/**
 * The environment the CCM process runs with besides its settings (`deploy/runtime-env`, one `NAME=value` per
 * line): glibc's allocator, which Deno's runtime uses, told to keep two arenas and to give blocks of 64 KiB
 * and more their own mappings, returned to the system when freed. Without it the blocks of a 5,000-Node list
 * or relist stay in the heap after they are freed (docs/operations.md#memory). The image's `ENV`, the systemd
 * unit's `Environment=`, `deno task start` and `deno task dev`, and every CCM the tests and the bench spawn
 * set exactly these.
 */
export function ccmRuntimeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of Deno.readTextFileSync(join(REPO_DIR, "deploy/runtime-env")).split("\n")) {
    const text = line.trim();
    if (text === "" || text.startsWith("#")) continue;
    const eq = text.indexOf("=");
    if (eq <= 0) throw new SyntaxError(`deploy/runtime-env: not NAME=value: ${text}`);
    env[text.slice(0, eq)] = text.slice(eq + 1);
  }
  return env;
}

/**
 * The `--allow-net` of a CCM the tests and the bench run against the emulators, which listen on loopback, and
 * whose secure port may keep its default `0.0.0.0` (it replaces the in-cluster list of the `ccm` set, as
 * `deploy/net-allow` does for `deno task start`).
 */
export const EMULATOR_NET: readonly string[] = Object.freeze(["127.0.0.1", "0.0.0.0"]);

/**
 * `-P=ccm --ignore-env` spelled out, with `extraRead` folders added to the read list (a test's temporary
 * kubeconfig) and `net` replacing the set's net list when given. Needed where `deno.json` is not in effect
 * (`--no-config`) or where a list must change: `--allow-read`/`--allow-net` on a command line replace the set's
 * list rather than adding to it.
 */
export function ccmPermissionFlags(extraRead: readonly string[] = [], net?: readonly string[]): string[] {
  const p = ccmPermissions();
  return [
    ...allow("net", net ?? p.net),
    ...(p.denyNet.length ? [`--deny-net=${p.denyNet.join(",")}`] : []),
    ...allow("env", p.env),
    "--ignore-env",
    ...allow("read", [...p.read, ...extraRead]),
    ...allow("sys", p.sys),
  ];
}

/** Builds the bundle as `deno task bundle` does, to `path`; returns its size in bytes. */
export async function buildBundle(path: string): Promise<number> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform=deno", "-o", path, "main.ts"],
    cwd: REPO_DIR,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`Cannot bundle main.ts: ${new TextDecoder().decode(out.stderr)}`);
  return (await Deno.stat(path)).size;
}
