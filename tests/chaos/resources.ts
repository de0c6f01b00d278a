/**
 * What a soak measures besides API calls: the heap after a full garbage collection, the process's open file
 * descriptors (sockets included; Deno 2 has no `Deno.resources()`, Linux only), and the sleeps pending on the fake clock
 * (a loop that leaks a timer leaves one behind per cycle).
 */
import v8 from "node:v8";
import vm from "node:vm";

let gcFunction: (() => void) | undefined;

/** V8's `gc()`, enabled at run time (no `--expose-gc` needed on the command line). */
function gc(): () => void {
  if (!gcFunction) {
    v8.setFlagsFromString("--expose-gc");
    const fn: unknown = vm.runInNewContext("gc");
    if (typeof fn !== "function") throw new TypeError("V8 did not expose gc()");
    gcFunction = () => fn();
  }
  return gcFunction;
}

/** The heap spaces that hold data; code and its metadata grow as V8 optimises more of the program. */
const DATA_SPACES = new Set(["new_space", "old_space", "large_object_space", "new_large_object_space"]);

/**
 * Bytes of JavaScript data in use after full collections (several: finalizers free more on the next). Code
 * spaces are left out: a warming JIT fills them for minutes, which is not memory the program keeps.
 */
export async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc()();
    await new Promise((r) => setTimeout(r, 0));
  }
  return v8.getHeapSpaceStatistics().filter((s) => DATA_SPACES.has(s.space_name))
    .reduce((sum, s) => sum + s.space_used_size, 0);
}

/**
 * Open file descriptors of this process (every socket and file counts), listed by `ls` in a child: Deno asks
 * for every permission to read `/proc` itself, and `deno task test` grants `run`, not all.
 */
export async function openFds(): Promise<number> {
  const out = await new Deno.Command("ls", { args: ["-1", `/proc/${Deno.pid}/fd`], stderr: "null" }).output();
  if (!out.success) throw new Error(`Cannot list /proc/${Deno.pid}/fd`);
  // The listing itself holds one descriptor of ours (the pipe) while it runs: the same in every sample.
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "").length;
}

/** Least-squares slope of `ys` over their index (per step). */
export function slope(ys: readonly number[]): number {
  const n = ys.length;
  if (n < 2) return 0;
  const meanX = (n - 1) / 2;
  const meanY = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  return num / den;
}

/**
 * Theil-Sen slope of `ys` over their index: the median of the slopes between every pair of samples. One odd
 * sample (a cycle that a loaded machine interleaved differently) moves it little, where it tilts a
 * least-squares line over six samples; steady growth moves it as much.
 */
export function medianSlope(ys: readonly number[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < ys.length; i++) {
    for (let j = i + 1; j < ys.length; j++) slopes.push(((ys[j] ?? 0) - (ys[i] ?? 0)) / (j - i));
  }
  if (slopes.length === 0) return 0;
  slopes.sort((a, b) => a - b);
  const mid = slopes.length >> 1;
  return slopes.length % 2 ? slopes[mid] ?? 0 : ((slopes[mid - 1] ?? 0) + (slopes[mid] ?? 0)) / 2;
}
