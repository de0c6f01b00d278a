/**
 * The memory the CCM process holds before any of its own code runs: the Deno runtime, then with each client
 * library of record imported (`@kubernetes/client-node`, `@linode/api-v4`), under the CCM's runtime flags,
 * V8 flags and allocator settings. The floor the RSS goal row prints beside the goal.
 */
import { childEnv, v8FlagArgs } from "../tests/process.ts";
import { residentMiB } from "./footprint.ts";
import { fileURLToPath } from "node:url";

/** Resident memory of the probe processes, in MiB. */
export interface ImportFloor {
  /** `deno run` of an empty module. */
  readonly runtimeMiB: number;
  /** With `@kubernetes/client-node` imported. */
  readonly kubeMiB: number;
  /** With both client libraries imported. */
  readonly bothMiB: number;
}

const REPO_DIR = fileURLToPath(new URL("..", import.meta.url));

/** One probe: spawned, waited for `ready`, measured, killed. */
async function probe(libraries: readonly string[]): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-P=ccm",
      "--ignore-env",
      ...v8FlagArgs(),
      "bench/import_floor_probe.ts",
    ]
      .concat(libraries),
    cwd: REPO_DIR,
    env: childEnv({}),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const errors = new Response(child.stderr).text();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("ready")) {
      const { done, value } = await reader.read();
      if (done) {
        const why = (await errors).split("\n").filter((l) => l && !l.startsWith("Warning")).join("; ");
        throw new Error(
          `The import probe (${libraries.join(", ") || "runtime"}) ended before it was ready: ${why}`,
        );
      }
      text += value;
    }
    const mib = (await residentMiB(child.pid)).rss;
    reader.releaseLock();
    return mib;
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
    await child.stdout.cancel().catch(() => {});
    await errors.catch(() => "");
  }
}

/** The median of `runs` probes of each step (default 3). */
export async function measureImportFloor(runs = 3): Promise<ImportFloor> {
  const median = async (libraries: readonly string[]) => {
    const values: number[] = [];
    for (let i = 0; i < runs; i++) values.push(await probe(libraries));
    values.sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? 0;
  };
  return {
    runtimeMiB: await median([]),
    kubeMiB: await median(["kube"]),
    bothMiB: await median(["kube", "linode"]),
  };
}

if (import.meta.main) {
  const floor = await measureImportFloor();
  console.log(
    `runtime ${floor.runtimeMiB.toFixed(0)} MiB, + @kubernetes/client-node ${
      (floor.kubeMiB - floor.runtimeMiB).toFixed(0)
    }, + @linode/api-v4 ${(floor.bothMiB - floor.kubeMiB).toFixed(0)}: ${floor.bothMiB.toFixed(0)} MiB`,
  );
}
