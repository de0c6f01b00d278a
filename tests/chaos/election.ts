/**
 * Two CCM replicas in this process (two `runCcm`, leader election on, client-go's default timings) on a chaos
 * world's emulators and fake clock: the fault suite's short form of hand-overs, where 15 s of Lease time is a
 * few hundred milliseconds of ours. Each replica's writes carry its Lease identity (`WriteLedger`).
 */
import { type CcmOutcome, runCcm, type RunningCcm } from "../../ccm.ts";
import type { Config } from "../../config/config.ts";
import { Registry } from "../../common/metrics.ts";
import type { ChaosWorld } from "./world.ts";

/** One in-process replica. */
export interface Replica {
  readonly name: string;
  readonly ccm: RunningCcm;
  readonly run: Promise<CcmOutcome>;
  /** SIGTERM: the replica stops and hands the Lease back. */
  stop(): void;
  /** True while its fence is open. */
  leading(): boolean;
}

/** `world.config` with leader election on (the Go CCM's default timings), as `main.ts` would run it. */
function electedConfig(world: ChaosWorld): Config {
  return { ...world.config, leaderElection: { ...world.config.leaderElection, enabled: true } };
}

/** Starts a replica named `name` (its hostname: the first half of its Lease identity). */
export async function startReplica(world: ChaosWorld, name: string): Promise<Replica> {
  const stop = new AbortController();
  const started = Promise.withResolvers<RunningCcm>();
  const deps = { clock: world.clock, metrics: new Registry(), hostname: name, onStarted: started.resolve };
  const run = runCcm(electedConfig(world), deps, stop.signal);
  run.catch((e: unknown) => started.reject(e));
  const ccm = await started.promise;
  await world.settle();
  return { name, ccm, run, stop: () => stop.abort(), leading: () => ccm.fence.leading };
}

/** How many of `replicas` lead at once. */
export function leadersOf(replicas: readonly Replica[]): Replica[] {
  return replicas.filter((r) => r.leading());
}

/**
 * Moves the fake clock `ms` in `stepMs` steps, settling after each, and returns the most replicas seen leading
 * at once at any step.
 */
export async function tickWatching(
  world: ChaosWorld,
  replicas: readonly Replica[],
  ms: number,
  stepMs: number,
): Promise<number> {
  let most = leadersOf(replicas).length;
  for (let left = ms; left > 0; left -= stepMs) {
    await world.tick(Math.min(stepMs, left));
    most = Math.max(most, leadersOf(replicas).length);
  }
  return most;
}

/** Stops every replica still running and awaits them, moving the fake clock while they drain. */
export async function stopAll(world: ChaosWorld, replicas: readonly Replica[]): Promise<void> {
  for (const r of replicas) r.stop();
  let ended = 0;
  for (const r of replicas) r.run.finally(() => ended++).catch(() => {});
  for (let i = 0; i < 60 && ended < replicas.length; i++) await world.tick(1_000);
  await Promise.allSettled(replicas.map((r) => r.run));
}
