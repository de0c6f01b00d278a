/**
 * Run by tests/deploy_systemd_test.ts as `deno run --allow-ffi --allow-run tests/mdwe_probe.ts`: turns on
 * the kernel's MemoryDenyWriteExecute for this process and its children (`prctl(PR_SET_MDWE)`, Linux 6.3+,
 * the same refusal of W+X mappings and of making pages executable that systemd's `MemoryDenyWriteExecute=`
 * enforces with seccomp), then runs `deno eval` twice and prints one JSON line with how each ended.
 */
const PR_SET_MDWE = 65;
const PR_MDWE_REFUSE_EXEC_GAIN = 1n;

const libc = Deno.dlopen("libc.so.6", {
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
});
const supported = libc.symbols.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0n, 0n, 0n) === 0;

async function evalUnderMdwe(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", ...args],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return {
    code: out.code,
    stdout: text.decode(out.stdout).trim(),
    stderr: text.decode(out.stderr).slice(0, 2000),
  };
}

const result = supported
  ? {
    supported,
    jit: await evalUnderMdwe(["console.log(typeof WebAssembly)"]),
    jitless: await evalUnderMdwe(["--v8-flags=--jitless", "console.log(typeof WebAssembly)"]),
  }
  : { supported };
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(result) + "\n"));
