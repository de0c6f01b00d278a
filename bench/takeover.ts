/**
 * Measured hand-over: two replicas started as an operator would (`deno task`, each in its own process group,
 * default leader-election timings), the leader's process group signalled, and the time from the signal to
 * the standby's acquisition as the Kubernetes emulator commits it. Under `deno task` the CCM gets the signal
 * twice (directly and forwarded by the task runner), as in a terminal.
 *
 *   deno run -P=dev bench/takeover.ts [--runs=10] [--json]
 *
 * Scenarios: SIGTERM; SIGINT (Ctrl-C); SIGTERM while the leader's controller hangs in a Linode request.
 */
import { fileURLToPath } from "node:url";
import { writeAll } from "../demo/terminal.ts";
import { type DemoWorld, startDemoWorld } from "../sim/demo_world.ts";

const REPO_DIR = fileURLToPath(new URL("..", import.meta.url));
const LEASE = { resource: "leases", name: "cloud-controller-manager", namespace: "kube-system" };

/** One scenario: the signal and whether the leader's controller is stuck in a Linode request. */
interface Scenario {
  name: string;
  signal: "SIGTERM" | "SIGINT";
  busy: boolean;
}

const SCENARIOS: Scenario[] = [
  { name: "SIGTERM to the leader's process group", signal: "SIGTERM", busy: false },
  { name: "Ctrl-C (SIGINT) to the leader's process group", signal: "SIGINT", busy: false },
  { name: "SIGTERM while the leader's controller hangs in a Linode request", signal: "SIGTERM", busy: true },
];

/** One replica: `setsid deno task --eval "deno run … main.ts"`, its JSON log lines, its exit. */
class Replica {
  readonly lines: Record<string, unknown>[] = [];
  readonly child: Deno.ChildProcess;
  readonly exited: Promise<Deno.CommandStatus>;
  #drained: Promise<void>;

  constructor(world: DemoWorld) {
    const config = JSON.parse(Deno.readTextFileSync(`${REPO_DIR}deno.json`));
    const read = [...config.permissions.ccm.read, world.kubeconfigPath.replace(/\/[^/]+$/, "")];
    // The emulators listen on loopback (the ccm set's own net list is the in-cluster one).
    const run =
      `deno run -P=ccm --ignore-env --allow-read=${read.join(",")} --allow-net=127.0.0.1,0.0.0.0 main.ts ` +
      "--secure-port=0";
    const env: Record<string, string> = { ...world.env, NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "" };
    for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    }
    this.child = new Deno.Command("setsid", {
      args: [Deno.execPath(), "task", "--eval", run],
      cwd: REPO_DIR,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    this.#drained = this.#read();
    this.exited = this.child.status;
  }

  async #read(): Promise<void> {
    let rest = "";
    for await (const chunk of this.child.stderr.pipeThrough(new TextDecoderStream())) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const part of parts) {
        if (part.startsWith("{")) this.lines.push(JSON.parse(part));
      }
    }
  }

  /** The identity this replica logged when it became leader. */
  get identity(): string | undefined {
    const line = this.lines.find((l) => String(l.message).startsWith("became leader"));
    return line ? String(line.identity) : undefined;
  }

  /** Signals the whole process group (the task runner and the CCM), as a terminal or `kill -- -PGID` does. */
  signalGroup(signal: Deno.Signal): void {
    Deno.kill(-this.child.pid, signal);
  }

  async stop(): Promise<void> {
    try {
      this.signalGroup("SIGKILL");
    } catch {
      // Already gone.
    }
    await this.exited;
    await this.#drained;
  }
}

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Holder changes of the leader Lease, stamped with `performance.now()` at commit. */
function recordHolders(world: DemoWorld): { changes: { holder: string; atMs: number }[]; stop: () => void } {
  const changes: { holder: string; atMs: number }[] = [];
  const stop = world.kube.store.subscribe((event) => {
    const meta = event.object.metadata as { name?: string; namespace?: string };
    if (event.def.kind !== "Lease" || meta.name !== LEASE.name || meta.namespace !== LEASE.namespace) return;
    const holder = String(
      (event.object as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? "",
    );
    if (changes.at(-1)?.holder !== holder) changes.push({ holder, atMs: performance.now() });
  });
  return { changes, stop };
}

/** One run's figures; `deliveries` counts the stop signals the leader logged (2 under `deno task`). */
interface Sample {
  releaseMs: number;
  takeoverMs: number;
  exitCode: number;
  deliveries: number;
}

/** One run: returns ms from the signal to the release commit and to the standby's acquisition commit. */
async function runOnce(
  scenario: Scenario,
): Promise<Sample> {
  await using world = await startDemoWorld({ nodes: 2, services: 0 });
  const hang = scenario.busy ? world.linode.faults.hang({ route: "/linode/instances" }) : undefined;
  const lease = recordHolders(world);
  const a = new Replica(world);
  const b = new Replica(world);
  try {
    await until(() => a.identity !== undefined || b.identity !== undefined, "a leader");
    const [leader, standby] = a.identity !== undefined ? [a, b] : [b, a];
    // The standby is campaigning: it logged its start, polled the Lease, and its watch is open.
    await until(
      () => standby.lines.some((l) => /^secure serving disabled/.test(String(l.message))),
      "standby",
    );
    await new Promise((r) => setTimeout(r, 1_000));
    if (scenario.busy) await until(() => world.linode.faults.hungCount >= 1, "a hung Linode request");
    const sentAt = performance.now();
    leader.signalGroup(scenario.signal);
    await until(
      () => standby.identity !== undefined && lease.changes.at(-1)?.holder === standby.identity,
      "take-over",
    );
    const released = lease.changes.find((c) => c.holder === "" && c.atMs >= sentAt);
    const taken = lease.changes.findLast((c) => c.holder === standby.identity);
    // A leader that never exits (it waits for a hung controller) is reported as -1, not waited for.
    const exited = await Promise.race([
      leader.exited.then((st) => st.code),
      new Promise<number>((r) => setTimeout(() => r(-1), 20_000)),
    ]);
    return {
      releaseMs: released ? released.atMs - sentAt : NaN,
      takeoverMs: (taken?.atMs ?? NaN) - sentAt,
      exitCode: exited,
      deliveries: leader.lines.filter((l) => /^received/.test(String(l.message))).length,
    };
  } finally {
    lease.stop();
    if (hang) world.linode.faults.remove(hang);
    await Promise.all([a.stop(), b.stop()]);
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
}

/** The figures of one scenario over its runs. */
function summarise(scenario: Scenario, samples: readonly Sample[]) {
  const sorted = (xs: number[]) => xs.filter(Number.isFinite).sort((x, y) => x - y);
  const takeover = sorted(samples.map((s) => s.takeoverMs));
  const release = sorted(samples.map((s) => s.releaseMs));
  return {
    scenario: scenario.name,
    runs: samples.length,
    takeoverP50Ms: Math.round(percentile(takeover, 0.5)),
    takeoverMaxMs: Math.round(takeover.at(-1) ?? NaN),
    released: release.length,
    releaseP50Ms: Math.round(percentile(release, 0.5)),
    releaseMaxMs: Math.round(release.at(-1) ?? NaN),
    exitCodes: samples.map((s) => s.exitCode),
    doubledSignals: samples.filter((s) => s.deliveries >= 2).length,
  };
}

async function main(args: readonly string[]): Promise<void> {
  const runs = Number(args.find((a) => a.startsWith("--runs="))?.slice(7) ?? 10);
  for (const scenario of SCENARIOS) {
    const samples: Sample[] = [];
    for (let i = 0; i < runs; i++) samples.push(await runOnce(scenario));
    const r = summarise(scenario, samples);
    const text = args.includes("--json")
      ? JSON.stringify(r)
      : `${r.scenario}: take-over p50 ${r.takeoverP50Ms} ms, ` +
        `max ${r.takeoverMaxMs} ms; Lease released in ${r.released} of ${r.runs} runs (p50 ${r.releaseP50Ms} ms, ` +
        `max ${r.releaseMaxMs} ms); signal delivered twice in ${r.doubledSignals}; leader exit codes ` +
        r.exitCodes.join(",");
    writeAll(Deno.stdout, text + "\n");
  }
}

if (import.meta.main) await main(Deno.args);
