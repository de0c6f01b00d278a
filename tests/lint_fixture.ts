/**
 * `main.ts lint` as a process, under the permission sets users run it with: `ccm` (`deno task start lint`, the
 * binary) or `deno task lint-services` itself (the `lint` set, reading only what it is given); stdin can be piped.
 */
import { fileURLToPath } from "node:url";
import { EMULATOR_NET } from "../deploy/artifacts.ts";

const REPO_DIR = fileURLToPath(new URL("..", import.meta.url));

/** Options of `runLint`. */
export interface LintRunOptions {
  /** `ccm` (default): the binary's reads; `given`: `deno task lint-services` (only the files it is given). */
  read?: "ccm" | "given";
  /** Piped to stdin (default: none). */
  stdin?: string;
  /** The child's whole environment besides what Deno needs to find its cache. */
  env?: Record<string, string>;
}

/** What the process left behind. */
export interface LintRun {
  code: number;
  stdout: string;
  stderr: string;
}

function runtimeEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Runs `main.ts lint <args>` (or `deno task lint-services <args>`) to its end. */
export async function runLint(args: readonly string[], options: LintRunOptions = {}): Promise<LintRun> {
  const child = new Deno.Command(Deno.execPath(), {
    // `--kubeconfig` runs talk to the emulator on loopback.
    args: options.read === "given" ? ["task", "-q", "lint-services", ...args] : [
      "run",
      "-P=ccm",
      `--allow-net=${EMULATOR_NET}`,
      "--ignore-env",
      "main.ts",
      "lint",
      ...args,
    ],
    cwd: REPO_DIR,
    env: { ...runtimeEnv(), ...options.env },
    clearEnv: true,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** The `deno task` lines of the permission set warning are Deno's, not ours. */
export function ownLines(text: string): string[] {
  return text.split("\n").filter((l) => l !== "" && !l.startsWith("Warning Permissions in the config file"));
}
