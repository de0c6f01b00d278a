/**
 * Scenario fixture: both emulators, and the CCM started through `runCcm` (what `main.ts` runs) with a Config
 * parsed from flags and environment that point at them, and a `FakeClock`. Time moves only when a test
 * says so (`tick`, `advanceUntil`), so periods, TTLs and backoffs are the production defaults unless a test
 * sets them through configuration, and a loaded machine cannot change what a test observes.
 */
import { join } from "node:path";
import type { CoreV1Event, V1Node } from "@kubernetes/client-node";
import { type CcmOutcome, runCcm, type RunningCcm } from "../ccm.ts";
import { FakeClock } from "../common/clock.ts";
import { type Config, parseConfig } from "../config/config.ts";
import { Registry } from "../common/metrics.ts";
import { type KubeSim, startKubeSim } from "../sim/kube/server.ts";
import { kubeletNode, registerNode, UNINITIALIZED_TAINT } from "../sim/kubelet.ts";
import type { RateLimitRule } from "../sim/linode/rate_limit.ts";
import { type LinodeSim, startLinodeSim } from "../sim/linode/server.ts";
import { buildParts, type CcmParts, waitForInformers } from "../wiring/parts.ts";

export { kubeletNode };

/** Taint kubelet sets with `--cloud-provider=external`. */
export const UNINITIALIZED = UNINITIALIZED_TAINT;

/** The region of the world's cluster (`LINODE_REGION`). */
export const REGION = "us-east";

/** Options of `startWorld`. */
export interface WorldOptions {
  /** Go CCM flags, after `--leader-elect=false --secure-port=0` (e.g. `--vpc-names=cluster`). */
  flags?: readonly string[];
  /** Variables added to the emulators' `LINODE_URL`, `LINODE_API_TOKEN`, `LINODE_REGION`, `KUBECONFIG`. */
  env?: Readonly<Record<string, string>>;
  /** Emulators seeded elsewhere (e.g. `startGoCcmWorld`), closed with the world; default new empty ones. */
  sims?: SeededSims;
  /** The fake clock, when the seeded world runs on it too (default a new one). */
  clock?: FakeClock;
  /**
   * Rate limits of a new Linode emulator (e.g. `DOCUMENTED_RATE_LIMITS`), which then counts its windows on
   * the world's fake clock; default generous, on the system clock.
   */
  rateLimits?: readonly RateLimitRule[];
}

/** Emulators that already hold a world, with the kubeconfig that reaches them. */
export interface SeededSims {
  readonly linode: LinodeSim;
  readonly kube: KubeSim;
  readonly env: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

/** Options of waits on real time (`waitFor`) and on the fake clock (`advanceUntil`). */
export interface WaitOptions {
  /** For the timeout message: what was awaited. */
  what: string;
  /** Real milliseconds before giving up (default 15 s). */
  timeoutMs?: number;
}

/** Both emulators and a CCM wired to them through `runCcm`. */
export interface CcmWorld extends AsyncDisposable {
  readonly linode: LinodeSim;
  readonly kube: KubeSim;
  readonly clock: FakeClock;
  readonly metrics: Registry;
  /** The Config the CCM runs with, parsed like `main.ts` parses the command line and environment. */
  readonly config: Config;
  /**
   * Runs the CCM (`runCcm`); resolves once it is wired and, unless `waitForSync` is false (a test of what
   * happens before), the informers the controllers need have synced.
   */
  start(options?: { waitForSync?: boolean }): Promise<RunningCcm>;
  /** Stops the running CCM as SIGTERM would and awaits its end; `start()` then runs a new process. */
  stop(): Promise<CcmOutcome>;
  /** The running CCM's parts (after `start`). */
  readonly ccm: RunningCcm;
  /** The same wiring, built but not started (for tests of one part, e.g. the cache). */
  parts(): CcmParts;
  node(name: string): V1Node | undefined;
  /** Events with this reason, of the object named `name` when given. */
  events(reason: string, name?: string): CoreV1Event[];
  /** Linode calls by route key, e.g. `GET /v4/linode/instances`. */
  calls(key: string): number;
  /** Kubernetes writes (PATCH, PUT, DELETE, POST) of one Node, failed ones included. */
  nodeWrites(name: string): number;
  /** Waits in real time for `condition`; the fake clock only wakes sleeps already due. */
  waitFor(condition: () => boolean, options: WaitOptions): Promise<void>;
  /** Waits until the CCM has nothing in flight: no emulator request pending, none started for a while. */
  settle(): Promise<void>;
  /** Moves the fake clock `ms` forward in steps of `stepMs` (default all at once), settling after each. */
  tick(ms: number, stepMs?: number): Promise<void>;
  /** Moves the fake clock in steps of `stepMs` until `condition` holds; returns the fake time it took. */
  advanceUntil(condition: () => boolean, options: WaitOptions & { stepMs: number }): Promise<number>;
}

/** Registers Nodes in the Kubernetes emulator as kubelets would. */
export function addNodes(world: CcmWorld, ...nodes: V1Node[]): void {
  for (const n of nodes) registerNode(world.kube, n);
}

/** True when the Node exists and no longer carries the uninitialised taint. */
export function isInitialised(n: V1Node | undefined): boolean {
  return n !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED.key);
}

function configOf(flags: readonly string[], env: Record<string, string>): Config {
  const parsed = parseConfig(["--leader-elect=false", "--secure-port=0", ...flags], env);
  if (parsed.kind !== "run") throw new TypeError(`Cannot run the CCM: parseConfig gave "${parsed.kind}"`);
  return parsed.config;
}

function pendingRequests(linode: LinodeSim, kube: KubeSim): number {
  return linode.calls.log.filter((c) => c.status === 0).length +
    kube.calls.log.filter((c) => c.status === 0).length;
}

/** Awaits `run`, moving the fake clock a second at a time while it has not ended (at most 10 min). */
async function runToEnd(run: Promise<CcmOutcome>, clock: FakeClock): Promise<CcmOutcome> {
  let ended = false;
  const watched = run.finally(() => (ended = true));
  for (let ms = 0; !ended && ms < 600_000; ms += 1_000) {
    await Promise.race([watched.catch(() => {}), new Promise((r) => setTimeout(r, 5))]);
    if (!ended) await clock.advance(1_000);
  }
  if (!ended) throw new Error("The CCM did not stop within 10 minutes of fake time after its stop signal");
  return await watched;
}

const WRITE_VERBS = ["PATCH", "PUT", "DELETE", "POST"];

/** Fails the scenario when the CCM sent a body Linode's own schemas refuse (tests' own calls are not judged). */
export function assertContractKept(linode: LinodeSim): void {
  const mine = (linode.contract?.violations() ?? []).filter((f) =>
    f.userAgent.startsWith("linode-cloud-controller-manager/")
  );
  if (mine.length === 0) return;
  const lines = mine.map((f) => `${f.route} ${f.path}: ${f.message}`);
  throw new Error(`The CCM sent bodies @linode/validation refuses:\n${[...new Set(lines)].join("\n")}`);
}

async function emptySims(
  limited?: { clock: FakeClock; rateLimits: readonly RateLimitRule[] },
): Promise<SeededSims> {
  const linode = await startLinodeSim({ ...limited, contract: true });
  const kube = await startKubeSim();
  const dir = await Deno.makeTempDir({ prefix: "ccm_world_" });
  const kubeconfig = join(dir, "kubeconfig");
  await kube.writeKubeconfig(kubeconfig);
  return {
    linode,
    kube,
    env: {
      LINODE_URL: linode.url,
      LINODE_API_TOKEN: linode.token,
      LINODE_REGION: REGION,
      KUBECONFIG: kubeconfig,
    },
    async close() {
      await linode.close();
      await kube.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Starts both emulators; `start()` then runs the CCM against them. */
export async function startWorld(options: WorldOptions = {}): Promise<CcmWorld> {
  const clock = options.clock ?? new FakeClock();
  const limited = options.rateLimits && { clock, rateLimits: options.rateLimits };
  const sims = options.sims ?? await emptySims(limited);
  const { linode, kube } = sims;
  const env = { ...sims.env, ...options.env };
  const config = configOf(options.flags ?? [], env);
  const metrics = new Registry();
  const deps = { clock, metrics, hostname: "scenario" };
  let running: { ccm: RunningCcm; run: Promise<CcmOutcome>; stop: AbortController } | undefined;

  const waitFor = async (condition: () => boolean, o: WaitOptions) => {
    const deadline = Date.now() + (o.timeoutMs ?? 15_000);
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${o.what}`);
      await clock.advance(0);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const settle = async () => {
    // The emulators run in this process's event loop: work the CCM has started (CPU or loopback I/O) keeps
    // sending requests between these checks. Quiet for 4 checks in a row: no request pending (one pending for
    // 200 ms is hung by a fault, not work in flight), none sent since the last check. Sleeps on the fake clock
    // are not work: they wait for the test to move time.
    // A check whose 5 ms wait came back late (a starved event loop on a loaded machine: a response still on its
    // way through loopback, a callback not yet run) is not quiet either.
    let quiet = 0;
    let last = -1;
    let pendingSince = Date.now();
    for (const deadline = Date.now() + 5_000; quiet < 4 && Date.now() < deadline;) {
      await clock.advance(0);
      const waitStart = Date.now();
      await new Promise((r) => setTimeout(r, 5));
      const starved = Date.now() - waitStart > 25;
      const total = linode.calls.total() + kube.calls.total();
      const pending = pendingRequests(linode, kube);
      if (pending === 0) pendingSince = Date.now();
      const idle = pending === 0 || Date.now() - pendingSince > 200;
      quiet = total === last && idle && !starved ? quiet + 1 : 0;
      last = total;
    }
  };
  const world: CcmWorld = {
    linode,
    kube,
    clock,
    metrics,
    config,
    async start({ waitForSync = true } = {}) {
      if (running) throw new TypeError("The CCM is running: call stop() first");
      const stop = new AbortController();
      const started = Promise.withResolvers<RunningCcm>();
      const run = runCcm(config, { ...deps, onStarted: (ccm) => started.resolve(ccm) }, stop.signal);
      run.catch((e: unknown) => started.reject(e));
      const ccm = await started.promise;
      running = { ccm, run, stop };
      if (waitForSync) await waitForInformers(ccm, stop.signal);
      // What the controllers do at once (the first pass over every object) happens before any time passes.
      await settle();
      return ccm;
    },
    async stop() {
      if (!running) throw new TypeError("The CCM is not running");
      const { run, stop } = running;
      running = undefined;
      stop.abort();
      return await runToEnd(run, clock);
    },
    get ccm() {
      if (!running) throw new TypeError("The CCM is not started: call start() first");
      return running.ccm;
    },
    parts: () => buildParts(config, deps),
    node: (name) => kube.store.get("nodes", name) as unknown as V1Node | undefined,
    events: (reason, name) =>
      (kube.store.list("events") as unknown as CoreV1Event[]).filter((e) =>
        e.reason === reason && (name === undefined || e.involvedObject.name === name)
      ),
    calls: (key) => linode.calls.count(key),
    nodeWrites: (name) =>
      kube.calls.log.filter((c) =>
        WRITE_VERBS.some((v) => c.key.startsWith(`${v} /api/v1/nodes/`)) &&
        c.path.replace(/\/status$/, "") === `/api/v1/nodes/${name}`
      ).length,
    waitFor,
    settle,
    async tick(ms, stepMs = ms) {
      for (let left = ms; left > 0; left -= stepMs) {
        await clock.advance(Math.min(stepMs, left));
        await settle();
      }
    },
    async advanceUntil(condition, o) {
      const deadline = Date.now() + (o.timeoutMs ?? 30_000);
      const startedAt = clock.monotonic();
      await settle();
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`Timed out waiting for ${o.what}`);
        await clock.advance(o.stepMs);
        await settle();
      }
      return clock.monotonic() - startedAt;
    },
    async [Symbol.asyncDispose]() {
      try {
        // A CCM that failed fails the test. Time goes on while it stops (a Linode retry may be sleeping).
        if (running) await world.stop();
        assertContractKept(linode);
      } finally {
        await sims.close();
      }
    },
  };
  return world;
}
