/** `deno task demo` end to end: the real entry point as a subprocess, output piped (so not a terminal). */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PROJECT = dirname(dirname(fileURLToPath(import.meta.url)));
const KILL_AFTER_MS = 90_000;

/** A running demo whose stdout and stderr are collected as they arrive. */
interface DemoRun {
  child: Deno.ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout contains `text` (rejects if the demo ends first). */
  waitFor(text: string): Promise<void>;
  /** Exit status, once both streams are drained. */
  finished: Promise<Deno.CommandStatus>;
}

async function collect(
  stream: ReadableStream<Uint8Array>,
  into: string[],
  onChunk: () => void,
): Promise<void> {
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    into.push(chunk);
    onChunk();
  }
}

function startDemo(args: string[], dir: string): DemoRun {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-P=dev", "demo/main.ts", `--dir=${dir}`, ...args],
    cwd: PROJECT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out: string[] = [], err: string[] = [];
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((w) => w());
  // A demo that hangs must not hang the test run.
  const killer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
  const finished = Promise.all([collect(child.stdout, out, wake), collect(child.stderr, err, wake)])
    .then(() => child.status)
    .finally(() => {
      clearTimeout(killer);
      wake();
    });
  let ended = false;
  finished.then(() => ended = true, () => ended = true);
  return {
    child,
    stdout: () => out.join(""),
    stderr: () => err.join(""),
    finished,
    waitFor: (text) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (out.join("").includes(text)) resolve();
          else if (ended) reject(new Error(`demo ended before printing "${text}":\n${out.join("")}`));
          else return;
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
  };
}

Deno.test("demo.ts main() plays the --fast story in plain lines and exits 0 after it with --once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "demo-test-" });
  try {
    const run = startDemo(["--fast", "--once", "--duration=60"], dir);
    const status = await run.finished;
    const out = run.stdout();
    assert.equal(status.code, 0, `stdout:\n${out}\nstderr:\n${run.stderr()}`);
    assert.ok(out.includes(`kubectl --kubeconfig ${join(dir, "kubeconfig")} get nodes -o wide`), out);
    for (
      const line of [
        "leader A · nodes initialised 6/6",
        "✓ CCM initialised demo-node-7: linode://",
        "✓ CCM tainted demo-node-3 as shut down",
        "✓ CCM removed the shutdown taint from demo-node-3",
        "✓ CCM deleted Node demo-node-5 after the Linode API confirmed 404",
        "DeletingNode Node/demo-node-5",
        "story complete",
        "stopped: the Lease was released, emulators closed",
      ]
    ) assert.ok(out.includes(line), `missing "${line}" in:\n${out}`);
    assert.match(out, /NODES +6\/6 initialised · 6 Ready/);
    assert.ok(!out.includes("\x1b["), "no ANSI escapes when stdout is not a terminal");
    assert.ok(!out.includes("✗"), out);
    // The CCM's own logs stay out of the terminal (they appear only in the view's panel, parsed).
    assert.ok(!run.stderr().includes('"logger":"ccm.'), run.stderr());
    assert.ok((await Deno.stat(join(dir, "kubeconfig"))).isFile);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("demo.ts main() exits 0 when --duration ends, before the story starts", async () => {
  const dir = await Deno.makeTempDir({ prefix: "demo-test-" });
  try {
    const run = startDemo(["--duration=3"], dir);
    const status = await run.finished;
    const out = run.stdout();
    assert.equal(status.code, 0, `stdout:\n${out}\nstderr:\n${run.stderr()}`);
    assert.match(out, /NODES +6\/6 initialised · 6 Ready/);
    assert.ok(out.includes("(from 00:10: a node joins"), out);
    assert.ok(out.trimEnd().endsWith("stopped: the Lease was released, emulators closed"), out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("demo.ts main() stops cleanly on SIGINT: Lease released, emulators closed, exit 0", async () => {
  const dir = await Deno.makeTempDir({ prefix: "demo-test-" });
  try {
    const run = startDemo([], dir);
    await run.waitFor("nodes initialised 6/6");
    run.child.kill("SIGINT");
    const status = await run.finished;
    const out = run.stdout();
    assert.equal(status.code, 0, `stdout:\n${out}\nstderr:\n${run.stderr()}`);
    assert.match(out, /LEADER +nobody holds the Lease · transitions 0 · stopped A demo-a_\w+, B demo-b_/);
    assert.match(out, /released leadership of lease kube-system\/cloud-controller-manager as demo-a_/);
    assert.ok(out.trimEnd().endsWith("stopped: the Lease was released, emulators closed"), out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("demo.ts main() --world=go-ccm: the Go CCM stops, a replica takes its Lease and adopts its NodeBalancers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "demo-test-" });
  try {
    const run = startDemo(["--world=go-ccm", "--fast", "--once", "--duration=80"], dir);
    const status = await run.finished;
    const out = run.stdout();
    assert.equal(status.code, 0, `stdout:\n${out}\nstderr:\n${run.stderr()}`);
    for (
      const line of [
        "the Go CCM is scaled to 0",
        "took the Lease once the Go CCM's had expired",
        "in place: same IPs, ownership tag added, 0 created",
        "✓ CCM added go-node-5 to every port of the adopted NodeBalancers",
        "✓ CCM deleted the Go CCM's NodeBalancer",
        "story complete",
      ]
    ) assert.ok(out.includes(line), `missing "${line}" in:\n${out}`);
    assert.ok(!out.includes("✗"), out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
