/**
 * `deno task lint-services [files…] [flags]`: runs `main.ts lint` in a child process that may read only what the
 * lint is given (its manifest files, or, without files, the kubeconfig of `--kubeconfig`/`KUBECONFIG`) with the
 * `lint` permission set of deno.json: no other file, no write, no process, no Linode Metadata service.
 *
 * A `deno task` cannot know the paths when it is defined, and Deno cannot narrow a permission at run time (only
 * revoke it whole), so this launcher reads the arguments, and starts the lint with `--allow-read=<those paths>`.
 * The launcher itself may read no file and reach no host: it may only start Deno (`--allow-run=<deno>`, which the
 * task finds with `Deno.execPath()`) and read the variables that choose the kubeconfig.
 */
import { fileURLToPath } from "node:url";
import { ConfigError, readLintConfig } from "../config/config.ts";
import { lintReadPaths } from "../config/lint_args.ts";

const REPO_DIR = fileURLToPath(new URL("..", import.meta.url));

/** The `deno run` arguments of the lint for `args` (the arguments after the task name). */
export function lintCommand(args: readonly string[]): string[] {
  let reads: string[] = [];
  try {
    const parsed = readLintConfig(args);
    if (parsed.kind === "lint") reads = lintReadPaths(parsed.config);
  } catch (e) {
    // A usage problem: the lint itself prints it (exit 2), reading nothing.
    if (!(e instanceof ConfigError)) throw e;
  }
  return [
    "run",
    "--no-prompt",
    `--config=${REPO_DIR}deno.json`,
    "-P=lint",
    ...(reads.length > 0 ? [`--allow-read=${reads.join(",")}`] : []),
    "--ignore-env",
    `${REPO_DIR}main.ts`,
    "lint",
    ...args,
  ];
}

if (import.meta.main) {
  const child = new Deno.Command(Deno.execPath(), {
    args: lintCommand(Deno.args),
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  Deno.exit((await child.status).code);
}
