/** CCM replicas running in this process against the demo world, each with its own stop switch. */
import { type CcmOutcome, runCcm, type RunningCcm } from "../ccm.ts";
import type { Clock } from "../common/clock.ts";
import type { Config } from "../config/config.ts";
import { Registry } from "../common/metrics.ts";
import type { Replica } from "./collect.ts";

/** A replica that has wired itself up; `done` settles when `runCcm` returns. */
export interface RunningReplica extends Replica {
  readonly done: Promise<CcmOutcome>;
  /** Asks the replica to stop (it releases the Lease if it holds it). */
  stop(): void;
}

/** Starts `runCcm` as host `demo-<label>` and resolves once it is wired (or rejects if it fails first). */
export async function startReplica(config: Config, label: string, clock: Clock): Promise<RunningReplica> {
  const controller = new AbortController();
  const started = Promise.withResolvers<RunningCcm>();
  const done = runCcm(config, {
    clock,
    metrics: new Registry(),
    hostname: `demo-${label.toLowerCase()}`,
    onStarted: (ccm) => started.resolve(ccm),
  }, controller.signal);
  let running = true;
  // A failure before onStarted rejects `started`; after it, the caller sees it through `done`.
  done.then(() => running = false, (e) => {
    running = false;
    started.reject(e);
  });
  const ccm = await started.promise;
  return {
    label,
    ccm,
    done,
    get running() {
      return running;
    },
    stop: () => controller.abort(),
  };
}

/** Polls until `replica` holds the Lease or `timeoutMs` passes; true when it leads. */
export async function waitUntilLeading(
  replica: Replica,
  clock: Clock,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  const deadline = clock.monotonic() + timeoutMs;
  while (!replica.ccm.fence.leading && clock.monotonic() < deadline && !signal.aborted) {
    await clock.sleep(50, signal).catch(() => {});
  }
  return replica.ccm.fence.leading;
}
