/**
 * End-to-end helpers: spawn `main.ts` as a child process with the production permission set (`deno task
 * start`: `-P=ccm --ignore-env`), read its JSON log lines, and record every write of the leader Lease as
 * the Kubernetes emulator commits it.
 */
import { fileURLToPath } from "node:url";
import type { KubeSim } from "../sim/kube/server.ts";
import { ccmRuntimeEnv, ccmV8Flags, EMULATOR_NET } from "../deploy/artifacts.ts";

/** The repository root: the child runs `main.ts` from here so it finds `deno.json`. */
const REPO_DIR = fileURLToPath(new URL("..", import.meta.url));

/** Short leader-election timings; client-go's rules hold (lease > renew > 1.2 × retry). */
export const FAST_LEASE: LeaseTiming = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 250 };

/** Leader-election timings, in milliseconds. */
export interface LeaseTiming {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** The `--leader-elect-*` flags for `timing`, with serving off (`--secure-port=0`). */
export function leaseFlags(timing: LeaseTiming): string[] {
  return [
    `--leader-elect-lease-duration=${timing.leaseDurationMs}ms`,
    `--leader-elect-renew-deadline=${timing.renewDeadlineMs}ms`,
    `--leader-elect-retry-period=${timing.retryPeriodMs}ms`,
    "--secure-port=0",
  ];
}

/** The flags that select `FAST_LEASE`, with serving off. */
export const FAST_LEASE_FLAGS: readonly string[] = leaseFlags(FAST_LEASE);

/** client-go's acquire jitter: a candidate waits retryPeriod × [1, 2.2) between attempts. */
export const MAX_RETRY_WAIT_FACTOR = 2.2;

/** One JSON log line of a child, with its own timestamp in epoch milliseconds. */
export interface LogLine {
  readonly atMs: number;
  readonly level: string;
  readonly message: string;
  readonly record: Readonly<Record<string, unknown>>;
}

/** How a child ended; `atMs` is when the test process saw it end. */
export interface ExitInfo {
  readonly code: number;
  readonly signal: Deno.Signal | null;
  readonly atMs: number;
}

/** Options of `spawnCcm`. */
export interface SpawnOptions {
  /** The child's whole environment (it starts from an empty one, plus what Deno needs to find its cache). */
  env: Readonly<Record<string, string>>;
  /** Extra folders the child may read (the temp kubeconfig), added to the `ccm` set's own read list. */
  readDirs?: readonly string[];
  /** A label for messages. */
  name?: string;
  /** Runtime flags before `main.ts` (the profiler's `--inspect=...`). */
  denoFlags?: readonly string[];
}

/** The `read` list of the `ccm` permission set: `--allow-read` on the command line replaces it, not adds. */
function ccmReadList(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${REPO_DIR}deno.json`));
  const read: unknown = config?.permissions?.ccm?.read;
  return Array.isArray(read) ? read.filter((p): p is string => typeof p === "string") : [];
}

/** What the Deno runtime itself needs from the parent's environment to find its module cache. */
function runtimeEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** A spawned CCM's whole environment: what Deno needs, `deploy/runtime-env`, then `env`. */
export function childEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return { ...runtimeEnv(), ...ccmRuntimeEnv(), ...env };
}

/** `deploy/v8-flags` as the runtime flag the compiled binary embeds (none when the file is empty). */
export function v8FlagArgs(): string[] {
  const flags = ccmV8Flags();
  return flags.length ? [`--v8-flags=${flags.join(",")}`] : [];
}

function command(args: readonly string[], options: SpawnOptions): Deno.Command {
  const read = [...ccmReadList(), ...(options.readDirs ?? [])];
  return new Deno.Command(Deno.execPath(), {
    // The emulators listen on loopback: that replaces the ccm set's in-cluster net list (deploy/net-allow.default).
    args: ["run", "-P=ccm", "--ignore-env", `--allow-read=${read.join(",")}`, `--allow-net=${EMULATOR_NET}`]
      .concat([...v8FlagArgs(), ...(options.denoFlags ?? []), "main.ts", ...args]),
    cwd: REPO_DIR,
    env: childEnv(options.env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

function parseLine(text: string): LogLine | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const record = JSON.parse(text) as Record<string, unknown>;
    const atMs = Date.parse(String(record["@timestamp"]));
    if (!Number.isFinite(atMs)) return undefined;
    return { atMs, level: String(record.level), message: String(record.message), record };
  } catch {
    return undefined;
  }
}

async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop() ?? "";
    for (const part of parts) onLine(part);
  }
  if (rest !== "") onLine(rest);
}

/** A running CCM child process. Dispose it: it is killed if still running and its pipes are drained. */
export class CcmProcess implements AsyncDisposable {
  readonly name: string;
  readonly #child: Deno.ChildProcess;
  readonly #lines: LogLine[] = [];
  readonly #stdout: string[] = [];
  readonly #stderr: string[] = [];
  readonly #drained: Promise<unknown>;
  readonly #exit: Promise<ExitInfo>;
  #exitInfo: ExitInfo | undefined;

  /** Spawns `main.ts` with `args`; use `spawnCcm`. */
  constructor(args: readonly string[], options: SpawnOptions) {
    this.name = options.name ?? "ccm";
    this.#child = command(args, options).spawn();
    this.#drained = Promise.all([
      readLines(this.#child.stdout, (l) => this.#stdout.push(l)),
      readLines(this.#child.stderr, (l) => {
        this.#stderr.push(l);
        const parsed = parseLine(l);
        if (parsed) this.#lines.push(parsed);
      }),
    ]);
    this.#exit = this.#child.status.then((s) => {
      this.#exitInfo = { code: s.code, signal: s.signal, atMs: Date.now() };
      return this.#exitInfo;
    });
  }

  /** Process id. */
  get pid(): number {
    return this.#child.pid;
  }

  /** Every JSON log line so far. */
  get lines(): readonly LogLine[] {
    return this.#lines;
  }

  /** Everything written to stdout and stderr so far, JSON or not. */
  get output(): string {
    return [...this.#stdout, ...this.#stderr].join("\n");
  }

  /** Stdout so far. */
  get stdout(): string {
    return this.#stdout.join("\n");
  }

  /** Stderr so far. */
  get stderr(): string {
    return this.#stderr.join("\n");
  }

  /** How the process ended, once it has. */
  get exitInfo(): ExitInfo | undefined {
    return this.#exitInfo;
  }

  /** Log lines whose message matches. */
  logs(pattern: RegExp): LogLine[] {
    return this.#lines.filter((l) => pattern.test(l.message));
  }

  /** The first log line matching `pattern`, waiting up to `timeoutMs` for it. */
  async waitForLog(pattern: RegExp, timeoutMs = 60_000): Promise<LogLine> {
    let found: LogLine | undefined;
    await waitFor(() => (found = this.logs(pattern)[0]) !== undefined || this.#exitInfo !== undefined, {
      what: `${this.name} to log ${pattern}`,
      timeoutMs,
    });
    if (!found) {
      throw new Error(
        `${this.name} exited (${this.#exitInfo?.code}) before logging ${pattern}:\n${this.output}`,
      );
    }
    return found;
  }

  /** Sends `signal`; returns when it was sent (epoch ms). */
  kill(signal: Deno.Signal): number {
    const atMs = Date.now();
    if (!this.#exitInfo) this.#child.kill(signal);
    return atMs;
  }

  /** Resolves when the process has exited and its output is fully read; throws after `timeoutMs`. */
  async exited(timeoutMs = 60_000): Promise<ExitInfo> {
    await waitFor(() => this.#exitInfo !== undefined, { what: `${this.name} to exit`, timeoutMs });
    await this.#drained;
    return await this.#exit;
  }

  /** Kills the process if it still runs and waits for its pipes to close. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      if (!this.#exitInfo) this.#child.kill("SIGKILL");
    } catch {
      // It exited between the check and the kill.
    }
    await this.#exit;
    await this.#drained;
  }
}

/** Starts one CCM child process. */
export function spawnCcm(args: readonly string[], options: SpawnOptions): CcmProcess {
  return new CcmProcess(args, options);
}

/** Runs the CCM to completion (config errors, `--help`); returns exit code and output. */
export async function runCcmToExit(
  args: readonly string[],
  options: SpawnOptions,
): Promise<{ code: number; stdout: string; stderr: string }> {
  await using p = spawnCcm(args, options);
  const { code } = await p.exited(60_000);
  return { code, stdout: p.stdout, stderr: p.stderr };
}

/** Polls `condition` every 10 ms; throws after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean,
  options: { what: string; timeoutMs?: number },
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${options.what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): number {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return listener.addr.port;
}

/** One committed write of the leader Lease, as the emulator stored it; `atMs` is the commit time. */
export interface LeaseWrite {
  readonly atMs: number;
  readonly holder: string;
  readonly leaseDurationSec: number;
  readonly acquireTimeMs: number;
  readonly renewTimeMs: number;
  readonly transitions: number;
  /** Length of the emulator's request log at commit: the write's own request is the entry just before. */
  readonly callIndex: number;
}

/** Records every write of one Lease in the Kubernetes emulator, synchronously at commit. */
export class LeaseHistory implements Disposable {
  readonly writes: LeaseWrite[] = [];
  readonly #unsubscribe: () => void;

  /** Starts recording writes of `namespace/name` (default kube-system/cloud-controller-manager). */
  constructor(kube: KubeSim, namespace = "kube-system", name = "cloud-controller-manager") {
    this.#unsubscribe = kube.store.subscribe((event) => {
      const meta = event.object.metadata as { name?: string; namespace?: string } | undefined;
      if (event.def.kind !== "Lease" || meta?.name !== name || meta?.namespace !== namespace) return;
      const spec = (event.object as { spec?: Record<string, unknown> }).spec ?? {};
      this.writes.push({
        atMs: Date.now(),
        holder: typeof spec.holderIdentity === "string" ? spec.holderIdentity : "",
        leaseDurationSec: Number(spec.leaseDurationSeconds ?? 0),
        acquireTimeMs: Date.parse(String(spec.acquireTime)),
        renewTimeMs: Date.parse(String(spec.renewTime)),
        transitions: Number(spec.leaseTransitions ?? 0),
        callIndex: kube.calls.log.length,
      });
    });
  }

  /** The holder of the latest write ("" when none or released). */
  get holder(): string {
    return this.writes.at(-1)?.holder ?? "";
  }

  /** The writes where the holder changed (acquisitions and releases), in order. */
  changes(): LeaseWrite[] {
    return this.writes.filter((w, i) => i === 0 || w.holder !== this.writes[i - 1]?.holder);
  }

  /** The last write by `holder`. */
  lastBy(holder: string): LeaseWrite | undefined {
    return this.writes.findLast((w) => w.holder === holder);
  }

  /** The first write after `afterMs` whose holder is not `holder`. */
  firstNotBy(holder: string, afterMs = 0): LeaseWrite | undefined {
    return this.writes.find((w) => w.atMs >= afterMs && w.holder !== holder);
  }

  /** Stops recording. */
  [Symbol.dispose](): void {
    this.#unsubscribe();
  }
}
