/**
 * Leader takeover between two real CCM processes: the leader is sent SIGKILL (or SIGTERM), and the time is
 * taken from the signal to the emulator's commit of the first Lease write naming the standby. The killed
 * process is replaced by a new standby, which campaigns before the next round. After the last round a new
 * Node must be initialised: the last leader's controllers run. (`bench/takeover.ts` measures the hand-over
 * as an operator triggers it instead: SIGTERM and Ctrl-C through `deno task`, and with a hung controller.)
 */
import { systemClock } from "../common/clock.ts";
import { identityOf } from "../tests/leader_fixture.ts";
import {
  type CcmProcess,
  FAST_LEASE,
  leaseFlags,
  LeaseHistory,
  type LeaseTiming,
  waitFor,
} from "../tests/process.ts";
import { type CcmChild, startCcmProcess } from "./ccm_process.ts";
import { CcmWorld } from "./ccm_world.ts";

/** client-go's (and the Go CCM's) defaults: 15 s lease, 10 s renew deadline, 2 s retry period. */
export const DEFAULT_LEASE: LeaseTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/** Options of `benchTakeover`. */
export interface TakeoverOptions {
  /** Takeovers per signal. */
  samples: number;
  /** Lease timings; `DEFAULT_LEASE` passes no flag at all. */
  timing: LeaseTiming;
  /** Also measure SIGTERM hand-overs (default true). */
  sigterm?: boolean;
}

/** Takeover times in ms, per signal. */
export interface TakeoverResult {
  readonly timing: LeaseTiming;
  readonly sigkillMs: number[];
  readonly sigtermMs: number[];
}

function timingFlags(timing: LeaseTiming): string[] {
  if (timing === DEFAULT_LEASE) return [];
  return leaseFlags(timing).filter((f) => !f.startsWith("--secure-port"));
}

/** Two replicas and a Lease recorder; `next()` spawns a fresh standby. */
class Replicas {
  readonly live: CcmChild[] = [];
  #spawned = 0;

  constructor(readonly world: CcmWorld, readonly lease: LeaseHistory, readonly timing: LeaseTiming) {}

  async spawn(): Promise<CcmChild> {
    const child = await startCcmProcess(this.world, {
      name: `replica-${this.#spawned++}`,
      flags: timingFlags(this.timing),
    });
    this.live.push(child);
    await child.waitReady();
    return child;
  }

  /** The live replica whose identity the Lease names. */
  async leader(): Promise<CcmChild> {
    let found: CcmChild | undefined;
    await waitFor(() => {
      found = this.live.find((c) => this.lease.holder !== "" && identityOf(c.proc) === this.lease.holder);
      return found !== undefined;
    }, { what: "a leader", timeoutMs: 60_000 });
    return found as CcmChild;
  }

  /** Waits until a standby has read the Lease at least twice (its expiry clock runs from what it saw). */
  async campaigning(): Promise<void> {
    await systemClock.sleep(2 * 2.2 * this.timing.retryPeriodMs);
  }

  async dispose(): Promise<void> {
    for (const c of this.live) await c[Symbol.asyncDispose]();
  }
}

function newHolderAfter(lease: LeaseHistory, old: string, sinceMs: number): number | undefined {
  return lease.writes.find((w) => w.atMs >= sinceMs && w.holder !== "" && w.holder !== old)?.atMs;
}

async function round(r: Replicas, signal: "SIGKILL" | "SIGTERM"): Promise<number> {
  const leader = await r.leader();
  const old = identityOf(leader.proc) ?? "";
  const killedAt = leader.proc.kill(signal);
  let takenAt: number | undefined;
  const bound = r.timing.leaseDurationMs + 10 * r.timing.retryPeriodMs;
  await waitFor(() => (takenAt = newHolderAfter(r.lease, old, killedAt)) !== undefined, {
    what: `a new leader after ${signal}`,
    timeoutMs: bound,
  });
  const exit = await leader.proc.exited(30_000);
  if (signal === "SIGTERM" && exit.code !== 0) throw new Error(`SIGTERM: the leader exited ${exit.code}`);
  await leader[Symbol.asyncDispose]();
  r.live.splice(r.live.indexOf(leader), 1);
  await r.spawn();
  await r.campaigning();
  return (takenAt ?? NaN) - killedAt;
}

async function assertControllersRun(world: CcmWorld, leader: CcmProcess): Promise<void> {
  const node = world.addNode(true);
  await waitFor(() => world.isInitialised(node), {
    what: `${leader.name} to initialise a new Node`,
    timeoutMs: 60_000,
  });
}

/** Measures takeovers after SIGKILL, then after SIGTERM, on a small cluster. */
export async function benchTakeover(o: TakeoverOptions): Promise<TakeoverResult> {
  await using world = await CcmWorld.start(6, 2);
  using lease = new LeaseHistory(world.world.kube);
  const r = new Replicas(world, lease, o.timing);
  try {
    await r.spawn();
    await r.leader();
    await r.spawn();
    await r.campaigning();
    const sigkillMs: number[] = [];
    const sigtermMs: number[] = [];
    for (let i = 0; i < o.samples; i++) sigkillMs.push(await round(r, "SIGKILL"));
    const sigtermRounds = o.sigterm === false ? 0 : o.samples;
    for (let i = 0; i < sigtermRounds; i++) sigtermMs.push(await round(r, "SIGTERM"));
    await assertControllersRun(world, (await r.leader()).proc);
    return { timing: o.timing, sigkillMs, sigtermMs };
  } finally {
    await r.dispose();
  }
}

/** The short timings the quick run uses (tests/process.ts `FAST_LEASE`). */
export const QUICK_LEASE: LeaseTiming = FAST_LEASE;

/** Formats takeover times as a Markdown table row set, with the SIGKILL bound of lease duration + 1 s. */
export function takeoverTable(r: TakeoverResult): string {
  const boundMs = r.timing.leaseDurationMs + 1000;
  const line = (name: string, values: number[], bound: string) => {
    const sorted = [...values].sort((a, b) => a - b);
    const ok = bound === "" || (sorted.at(-1) ?? Infinity) <= boundMs;
    const cells = [
      name,
      String(values.length),
      `${((sorted[0] ?? NaN) / 1000).toFixed(2)} s`,
      `${((sorted[Math.floor(sorted.length / 2)] ?? NaN) / 1000).toFixed(2)} s`,
      `${((sorted.at(-1) ?? NaN) / 1000).toFixed(2)} s`,
      bound,
      bound === "" ? "" : ok ? "met" : "MISSED",
    ];
    return `| ${cells.join(" | ")} |`;
  };
  const t = r.timing;
  const lines = [
    `Leader takeover (lease ${t.leaseDurationMs / 1000} s, renew deadline ${t.renewDeadlineMs / 1000} s, ` +
    `retry ${t.retryPeriodMs / 1000} s)`,
    "",
    "| signal | takeovers | min | median | max | bound | result |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    line("SIGKILL", r.sigkillMs, `max <= ${boundMs / 1000} s`),
  ];
  if (r.sigtermMs.length > 0) lines.push(line("SIGTERM", r.sigtermMs, ""));
  return lines.join("\n");
}

/**
 * The takeover row alone: `deno run -P=dev bench/ccm_takeover.ts [--kills=10] [--quick] [--sigterm]`. Default
 * timings unless `--quick` (tests/process.ts `FAST_LEASE`); SIGTERM rounds only with `--sigterm`.
 */
if (import.meta.main) {
  const arg = (name: string) => Deno.args.find((a) => a.startsWith(`--${name}`));
  const kills = Number(arg("kills=")?.split("=")[1] ?? 10);
  const timing = arg("quick") ? QUICK_LEASE : DEFAULT_LEASE;
  const result = await benchTakeover({ samples: kills, timing, sigterm: arg("sigterm") !== undefined });
  console.log(takeoverTable(result));
  console.log(`\nSIGKILL takeovers (ms): ${result.sigkillMs.map((v) => Math.round(v)).join(", ")}`);
}
