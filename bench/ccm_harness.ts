/**
 * Runs the wired CCM in this process against a benchmark world, and times Node initialisation from the
 * Kubernetes emulator's own commit stream (no polling): creation of a Node → removal of its taint.
 */
import { runCcm, type RunningCcm } from "../ccm.ts";
import { systemClock } from "../common/clock.ts";
import { parseConfig } from "../config/config.ts";
import { Registry } from "../common/metrics.ts";
import { type DemoWorld, UNINITIALIZED_TAINT } from "../sim/mod.ts";

/** A running CCM and what the scenarios read from it. */
export interface CcmHarness extends AsyncDisposable {
  readonly ccm: RunningCcm;
  readonly metrics: Registry;
  /** Stops the CCM and waits for it to finish. */
  stop(): Promise<void>;
}

/** Options of `startCcm`. */
export interface CcmRunOptions {
  /** Extra Go CCM flags (`--node-status-update-frequency=1s`). */
  flags?: string[];
  /** Extra environment (`LINODE_INSTANCE_CACHE_TTL`). */
  env?: Record<string, string>;
}

/** Starts the CCM with leader election and the health server off; resolves once it is wired. */
export async function startCcm(world: DemoWorld, options: CcmRunOptions = {}): Promise<CcmHarness> {
  const args = [...(options.flags ?? []), "--secure-port=0", "--leader-elect=false"];
  const parsed = parseConfig(args, { ...world.env, ...options.env });
  if (parsed.kind !== "run") throw new TypeError(`Cannot run the CCM: parseConfig gave "${parsed.kind}"`);
  const metrics = new Registry();
  const stopper = new AbortController();
  const started = Promise.withResolvers<RunningCcm>();
  const run = runCcm(parsed.config, {
    clock: systemClock,
    metrics,
    hostname: "bench",
    onStarted: (ccm) => started.resolve(ccm),
  }, stopper.signal);
  run.catch((e: unknown) => started.reject(e));
  const ccm = await started.promise;
  await ccm.nodes.waitForSync(stopper.signal);
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      stopper.abort();
      await run.catch(() => {});
    })();
    return stopped;
  };
  return { ccm, metrics, stop, [Symbol.asyncDispose]: stop };
}

function isTainted(obj: unknown): boolean {
  const spec = (obj as { spec?: { taints?: { key?: string }[] } } | undefined)?.spec;
  return spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT.key) ?? false;
}

/** Records when each tracked Node was created and when the CCM removed its uninitialised taint. */
export class InitTimer implements Disposable {
  readonly #created = new Map<string, number>();
  readonly #done = new Map<string, number>();
  readonly #waiters = new Map<string, () => void>();
  readonly #unsubscribe: () => void;

  constructor(world: DemoWorld) {
    this.#unsubscribe = world.kube.store.subscribe((event) => {
      if (event.def.key !== "nodes" || event.type !== "MODIFIED") return;
      const name = event.object.metadata.name ?? "";
      if (!this.#created.has(name) || this.#done.has(name)) return;
      if (isTainted(event.prev) && !isTainted(event.object)) {
        this.#done.set(name, performance.now());
        this.#waiters.get(name)?.();
      }
    });
  }

  /** Calls `create` (which must create the Node `name`) and starts its clock just before. */
  create(name: string, create: () => void): void {
    this.#created.set(name, performance.now());
    create();
  }

  /** Resolves once `name` is initialised; rejects after `timeoutMs`. */
  async initialised(name: string, timeoutMs = 60_000): Promise<void> {
    if (this.#done.has(name)) return;
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const timer = setTimeout(
      () => reject(new Error(`Timed out waiting for node ${name} to initialise`)),
      timeoutMs,
    );
    this.#waiters.set(name, resolve);
    try {
      await promise;
    } finally {
      clearTimeout(timer);
      this.#waiters.delete(name);
    }
  }

  /** Milliseconds from creation to initialisation of each named Node. */
  latenciesMs(names: readonly string[]): number[] {
    return names.map((n) => (this.#done.get(n) ?? NaN) - (this.#created.get(n) ?? NaN));
  }

  /** Stops listening to the store. */
  [Symbol.dispose](): void {
    this.#unsubscribe();
  }
}
