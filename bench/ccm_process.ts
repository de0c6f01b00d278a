/**
 * The real CCM process as the bench runs it: `deno run -P=ccm --ignore-env main.ts` (spawned by
 * `tests/process.ts`) against a bench world, serving `/readyz` and `/metrics` on a free loopback port with a
 * certificate the bench trusts, plus what the kernel says about it (`/proc/<pid>`: resident memory, CPU time).
 */
import { join } from "node:path";
import { generateSelfSignedCert } from "../server/tls.ts";
import { type CcmProcess, freePort, spawnCcm } from "../tests/process.ts";
import { BENCH_CLUSTER_CIDR, type CcmWorld } from "./ccm_world.ts";
import { BENCH_VPC } from "./world.ts";

/** The flags of every benchmark CCM: routes in the bench VPC; every other setting at its default. */
export const ROUTE_FLAGS: readonly string[] = [
  "--enable-route-controller",
  `--vpc-names=${BENCH_VPC}`,
  `--cluster-cidr=${BENCH_CLUSTER_CIDR}`,
];

/** A running CCM process. Dispose it to kill it (if still running) and close the HTTPS client. */
export interface CcmChild extends AsyncDisposable {
  readonly proc: CcmProcess;
  /** `performance.now()` just before the spawn. */
  readonly spawnedAt: number;
  /** Resolves with the milliseconds from spawn to the first `/readyz` answering 200. */
  waitReady(timeoutMs?: number): Promise<number>;
  /** The unlabelled samples of `/metrics` (gauges and counters), by name. */
  metrics(): Promise<Map<string, number>>;
  /** `/metrics` as served, every sample. */
  metricsText(): Promise<string>;
  /** Resident set size now, from `/proc/<pid>/status`. */
  rssBytes(): Promise<number>;
  /** CPU time (user + system) so far, from `/proc/<pid>/stat`. */
  cpuSeconds(): Promise<number>;
}

/** Options of `startCcmProcess`. */
export interface CcmProcessOptions {
  /** A label for messages and log lines. */
  name: string;
  /** Flags after `ROUTE_FLAGS` and the serving flags. */
  flags?: readonly string[];
  /** Runtime flags before `main.ts` (`bench/ccm_profile.ts` adds `--inspect`). */
  denoFlags?: readonly string[];
}

let clockTicks: number | undefined;

/**
 * Every CCM process still running. Module state on purpose: a Ctrl-C of the bench must kill them (they
 * would retry the vanished emulators for ever), and the signal handler cannot reach the scenarios' locals.
 */
const running = new Set<CcmProcess>();

/** Kills every CCM process the bench started and has not disposed (on SIGINT/SIGTERM of the bench). */
export function killCcmProcesses(): void {
  for (const proc of running) proc.kill("SIGKILL");
}

/** `sysconf(_SC_CLK_TCK)`: the unit of the CPU times in `/proc/<pid>/stat`. */
async function clockTicksPerSecond(): Promise<number> {
  if (clockTicks === undefined) {
    const out = await new Deno.Command("getconf", { args: ["CLK_TCK"], stdout: "piped", stderr: "null" })
      .output().catch(() => undefined);
    const n = Number(new TextDecoder().decode(out?.stdout ?? new Uint8Array()).trim());
    clockTicks = Number.isInteger(n) && n > 0 ? n : 100;
  }
  return clockTicks;
}

/** `/proc/<pid>/stat` and `/status` through `cat`: Deno lets only `--allow-all` read `/proc` itself. */
async function readProc(pid: number): Promise<{ stat: string; status: string }> {
  const out = await new Deno.Command("cat", {
    args: [`/proc/${pid}/stat`, `/proc/${pid}/status`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`Cannot read /proc/${pid}: ${new TextDecoder().decode(out.stderr)}`);
  const text = new TextDecoder().decode(out.stdout);
  const split = text.indexOf("\nName:");
  return { stat: text.slice(0, split), status: text.slice(split + 1) };
}

function rssOf(status: string): number {
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  if (!Number.isFinite(kib)) throw new Error("Cannot read VmRSS");
  return kib * 1024;
}

function cpuTicksOf(stat: string): number {
  // Fields after the command name (which may hold spaces) start at field 3: utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^([a-z_]+) (\S+)$/gm)) out.set(m[1] ?? "", Number(m[2]));
  return out;
}

/** Writes a serving certificate into the world's folder (which the `ccm` permission set is given). */
async function servingFiles(world: CcmWorld, name: string): Promise<{ certPem: string; flags: string[] }> {
  const pem = await generateSelfSignedCert({ hosts: ["127.0.0.1"] });
  const cert = join(world.dir, `${name}.crt`);
  const key = join(world.dir, `${name}.key`);
  await Deno.writeTextFile(cert, pem.certPem);
  await Deno.writeTextFile(key, pem.keyPem, { mode: 0o600 });
  return { certPem: pem.certPem, flags: [`--tls-cert-file=${cert}`, `--tls-private-key-file=${key}`] };
}

/** Spawns the CCM against `world`; resolves once spawned (see `waitReady`). */
export async function startCcmProcess(world: CcmWorld, options: CcmProcessOptions): Promise<CcmChild> {
  const ticks = await clockTicksPerSecond();
  const serving = await servingFiles(world, options.name);
  const port = freePort();
  const args = [
    ...ROUTE_FLAGS,
    "--bind-address=127.0.0.1",
    `--secure-port=${port}`,
    ...serving.flags,
    ...(options.flags ?? []),
  ];
  const client = Deno.createHttpClient({ caCerts: [serving.certPem] });
  const get = async (path: string) => {
    const res = await fetch(`https://127.0.0.1:${port}${path}`, {
      client,
      // The emulator's admin token: /metrics needs a token the TokenReview accepts (server/auth.ts).
      headers: { authorization: `Bearer ${world.world.kube.token}` },
      signal: AbortSignal.timeout(5000),
    });
    return { status: res.status, body: await res.text() };
  };
  const spawnedAt = performance.now();
  const proc = spawnCcm(args, {
    env: world.world.env,
    readDirs: [world.dir],
    name: options.name,
    denoFlags: options.denoFlags,
  });
  running.add(proc);
  /** Throws with the end of its output once the process has exited: its /proc entry no longer says. */
  const exited = (): undefined => {
    if (!proc.exitInfo) return undefined;
    const tail = proc.output.split("\n").slice(-40).join("\n");
    const { code, signal } = proc.exitInfo;
    throw new Error(`${options.name} exited (code ${code}${signal ? `, ${signal}` : ""}):\n${tail}`);
  };
  /**
   * `/proc/<pid>/status` of the live process. An exited process not yet reaped (a zombie) has no VmRSS line:
   * then its exit is awaited, so the error says why it ended rather than "Cannot read VmRSS".
   */
  const procOf = async (): Promise<string> => {
    const { status } = await readProc(exited() ?? proc.pid);
    if (/^VmRSS:/m.test(status)) return status;
    await proc.exited(5_000).catch(() => undefined);
    return exited() ?? status;
  };
  return {
    proc,
    spawnedAt,
    async waitReady(timeoutMs = 120_000) {
      const deadline = spawnedAt + timeoutMs;
      while (performance.now() < deadline) {
        if (proc.exitInfo) throw new Error(`${options.name} exited (${proc.exitInfo.code}):\n${proc.stderr}`);
        const answer = await get("/readyz").catch(() => undefined);
        if (answer?.status === 200) return performance.now() - spawnedAt;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`${options.name} was not ready within ${timeoutMs} ms`);
    },
    metrics: async () => parseMetrics((await get("/metrics")).body),
    metricsText: async () => (await get("/metrics")).body,
    rssBytes: async () => rssOf(await procOf()),
    cpuSeconds: async () => cpuTicksOf((await readProc(exited() ?? proc.pid)).stat) / ticks,
    async [Symbol.asyncDispose]() {
      await proc[Symbol.asyncDispose]();
      running.delete(proc);
      client.close();
    },
  };
}
