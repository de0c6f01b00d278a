/**
 * The controller runtime: a controller declares its keys, event sources, resync, per-term memory, side loops,
 * what a key's pass reads and `reconcile`; this runtime owns the rest for one leadership term, the same way
 * for every controller (karpenter's `Reconcile` + `Register` over controller-runtime; upstream's
 * `processNextWorkItem`):
 * - the work queue (`work_queue.ts`) and its workers, the outcome of each reconcile turned into the queue's
 *   next step (success forgets the key's backoff; `RetryAfterError` waits as asked; a bad input waits for a
 *   change; anything else backs off per key), its metrics and its log lines;
 * - the resync, which enqueues every key each period as a safety net, and **idle skipping**: a resync leaves a
 *   key alone when what its pass reads (`inputs`) is what the key's last settled pass read, and counts it;
 * - side loops (periodic jobs of the term) and the shut-down: sources unsubscribed, queue shut down, every
 *   task awaited;
 * - shadow mode: each reconcile runs inside its key's scope of the shadow record (`shadow.ts`), and its writes
 *   go through the executors there, which hold them in `--dry-run`.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { type Clock, isAbort, systemClock } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Registry } from "../../common/metrics.ts";
import { LeaseLostError } from "../../common/write_guard.ts";
import type { Applied, Executors, ShadowRecorder, ShadowScope, Write } from "./shadow.ts";
import { WorkQueue } from "./work_queue.ts";

// ---------------------------------------------------------------------------------------------------------
// Errors a reconcile throws, and what the worker loop does with them.

/** Thrown by a reconcile that must wait a known time before retrying (Linode's `Retry-After`). */
export class RetryAfterError extends Error {
  override name = "RetryAfterError";
  constructor(message: string, readonly retryAfterMs: number, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * Thrown for a bad user input (an invalid annotation): retrying cannot help, so the key is not requeued until
 * its object changes. Other error classes opt in with `permanent = true`.
 */
export class InvalidInputError extends Error {
  override name = "InvalidInputError";
  readonly permanent = true;
}

/** What the worker loop did with a key after its reconcile returned or threw. */
export type Outcome = "success" | "retry-after" | "rate-limited" | "permanent" | "aborted";

/**
 * True for errors that say retrying will not help (`InvalidInputError` or `permanent: true`), also as the
 * `cause` of the error thrown (a Namespace that cannot be read for want of a permission, under the cluster
 * identity's error).
 */
export function isPermanentError(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === "object" && e !== null && depth < 8; depth++) {
    if (e instanceof InvalidInputError || (e as { permanent?: unknown }).permanent === true) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The wait an error asks for (`RetryAfterError`, or any error with a numeric `retryAfterMs`), if any. */
export function retryAfterMsOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const ms = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** An error as `Name: message` for logs (a thrown non-Error as its string). */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

// ---------------------------------------------------------------------------------------------------------
// Metrics every controller records.

/** Records one reconcile: `ccm_reconciles_total{controller,result}` and `ccm_reconcile_duration_seconds`. */
function recordReconcile(metrics: Registry, controller: string, result: Outcome, seconds: number): void {
  metrics.counter("ccm_reconciles_total", "Reconciles by controller and result", ["controller", "result"])
    .inc({ controller, result });
  metrics.histogram("ccm_reconcile_duration_seconds", "Time spent in one reconcile", ["controller"])
    .observe({ controller }, seconds);
}

/** The gauge of keys whose reconciles keep failing, valued with the time the streak began (epoch seconds). */
function failingSince(metrics: Registry) {
  return metrics.gauge(
    "ccm_reconcile_failing_since_timestamp_seconds",
    "Keys whose last reconcile failed, by controller and key, valued with the start of the failures (Unix time)",
    ["controller", "key"],
  );
}

/**
 * Tracks a key's failure streak for alerting (a Service or Node that stays broken past the retry cap): the
 * first failure starts the series at `nowMs`, later failures keep that start, a success removes the series.
 * A quiet wait (the next cache refresh) and an abort neither start nor end a streak.
 */
function recordKeyOutcome(
  metrics: Registry,
  controller: string,
  key: string,
  outcome: { failed: boolean; nowMs: number },
): void {
  const gauge = failingSince(metrics);
  const labels = { controller, key };
  if (!outcome.failed) gauge.remove(labels);
  else if (gauge.get(labels) === 0) gauge.set(labels, outcome.nowMs / 1000);
}

/** True for an expected wait that is not worth a warning (`quiet: true`, e.g. for the next cache refresh). */
function isQuiet(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { quiet?: unknown }).quiet === true;
}

/**
 * Counts resyncs that left a key alone because nothing its pass reads changed since a pass that settled
 * (`ccm_passes_skipped_total{controller}`, one per key): what keeps an idle big cluster cheap
 * (docs/measurements.md, "Idle skipping").
 */
function recordSkipped(metrics: Registry, controller: string): void {
  metrics.counter(
    "ccm_passes_skipped_total",
    "Periodic passes skipped: nothing they read changed since a pass that settled",
    ["controller"],
  ).inc({ controller });
}

// ---------------------------------------------------------------------------------------------------------
// The worker loop.

/** Options of `runWorkers`. */
export interface RunWorkersOptions<T> {
  /** Number of keys handled at once (distinct keys only: a key never runs twice at once). */
  concurrency: number;
  /** Stops taking keys when aborted; running handlers finish first. */
  signal: AbortSignal;
  /** Reconciles one key; throws to be requeued. Receives the loop's signal to cut waits short. */
  handle: (key: T, signal: AbortSignal) => Promise<void>;
  log: Logger;
  /** Receives `ccm_reconciles_total` and `ccm_reconcile_duration_seconds`, labelled with the queue's name. */
  metrics?: Registry;
  /** Times reconciles and failure streaks (default: the system's clock). */
  clock?: Clock;
  /** Called after a handler throws, unless aborted (e.g. to record a Warning Event); its errors are logged. */
  onError?: (key: T, error: unknown, outcome: Outcome) => void | Promise<void>;
}

/** Applies one handler failure to the queue; returns what was done. */
function requeue<T>(queue: WorkQueue<T>, key: T, error: unknown, options: RunWorkersOptions<T>): Outcome {
  const { log, signal } = options;
  const props = { queue: queue.name, key: String(key), error: describeError(error) };
  // A stopping leader closes its fence before it tells the controllers to stop: a write refused then is part
  // of the stop, not a failure worth a warning or an Event.
  if (signal.aborted && (isAbort(error, signal) || error instanceof LeaseLostError)) {
    // Cut short by the end of this run (e.g. lost leadership): the next run picks it up again.
    queue.add(key);
    log.debug("{queue} {key} aborted", props);
    return "aborted";
  }
  // `reportable`: a failed sync, which the Go CCM reports to Sentry (common/sentry.ts picks the queues).
  if (isPermanentError(error)) {
    queue.forget(key);
    log.warning("{queue} {key} not retried until it changes: {error}", { ...props, reportable: true });
    return "permanent";
  }
  const retryAfterMs = retryAfterMsOf(error);
  if (retryAfterMs !== undefined) {
    queue.addAfter(key, retryAfterMs);
    // An expected wait (`quiet: true`, e.g. for the next cache refresh) is not worth a warning.
    const level = isQuiet(error) ? "debug" : "warning";
    log[level]("{queue} {key} retrying in {delayMs} ms as asked: {error}", {
      ...props,
      delayMs: retryAfterMs,
      reportable: level === "warning",
    });
    return "retry-after";
  }
  const delayMs = queue.addRateLimited(key);
  const attempt = queue.numRequeues(key);
  log.warning("{queue} {key} failed (attempt {attempt}), retrying in {delayMs} ms: {error}", {
    ...props,
    attempt,
    delayMs,
    reportable: true,
  });
  return "rate-limited";
}

async function notify<T>(options: RunWorkersOptions<T>, key: T, error: unknown, outcome: Outcome) {
  try {
    await options.onError?.(key, error, outcome);
  } catch (e) {
    options.log.error("error hook failed for {key}: {error}", { key: String(key), error: describeError(e) });
  }
}

async function processKey<T>(queue: WorkQueue<T>, key: T, options: RunWorkersOptions<T>): Promise<void> {
  const clock = options.clock ?? systemClock;
  const started = clock.monotonic();
  let result: Outcome = "success";
  // A failure streak is an error the loop retries or gives up on; not an abort, nor a quiet, expected wait.
  let failed = false;
  try {
    await options.handle(key, options.signal);
    queue.forget(key);
    return;
  } catch (error) {
    result = requeue(queue, key, error, options);
    failed = result !== "aborted" && !(result === "retry-after" && isQuiet(error));
    if (options.onError && result !== "aborted") await notify(options, key, error, result);
  } finally {
    queue.done(key);
    if (options.metrics) {
      recordReconcile(options.metrics, queue.name, result, (clock.monotonic() - started) / 1000);
      if (result === "success" || failed) {
        recordKeyOutcome(options.metrics, queue.name, String(key), { failed, nowMs: clock.now() });
      }
    }
  }
}

/**
 * Runs `concurrency` workers on `queue` until `signal` aborts (or the queue shuts down and empties), then
 * waits for running handlers. The queue stays usable for a later run.
 */
export async function runWorkers<T>(queue: WorkQueue<T>, options: RunWorkersOptions<T>): Promise<void> {
  const worker = async () => {
    for (;;) {
      const key = await queue.get(options.signal);
      if (key === undefined) return;
      await processKey(queue, key, options);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.floor(options.concurrency)) }, worker));
}

/** Sleeps `ms` on the clock; false once `signal` aborted (quietly), a throw for anything else. */
async function sleepUnlessAborted(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await clock.sleep(ms, signal);
    return !signal.aborted;
  } catch (error) {
    if (isAbort(error, signal) || signal.aborted) return false;
    throw error;
  }
}

/** What `runResync` enqueues, and when. */
export interface ResyncOptions {
  /** Waits `periodMs` between passes (the FakeClock in tests). */
  clock: Clock;
  /** Time from the start (and from each pass) to the next pass; the first pass is one period in. */
  periodMs: number;
  /** Ends the loop; an abort while waiting or while reading keys returns quietly. */
  signal: AbortSignal;
  /** The keys of one pass, read at that pass. A throw other than an abort ends the loop with that error. */
  keys: () => Iterable<string> | Promise<Iterable<string>>;
  /** Leaves a key that waits for its retry backoff alone, so the resync does not cut that backoff short. */
  keepBackoff?: boolean;
  /** Leaves a key alone when this answers true (idle skipping); awaited per key. */
  skip?: (key: string) => boolean | Promise<boolean>;
}

/** Enqueues `keys()` every `periodMs` until the signal aborts. */
export async function runResync(queue: WorkQueue<string>, options: ResyncOptions): Promise<void> {
  const { clock, periodMs, signal } = options;
  while (await sleepUnlessAborted(clock, periodMs, signal)) {
    let keys: Iterable<string>;
    try {
      keys = await options.keys();
    } catch (error) {
      if (isAbort(error, signal) || signal.aborted) return;
      throw error;
    }
    for (const key of keys) {
      if (signal.aborted) return;
      if (options.keepBackoff && queue.numRequeues(key) > 0) continue;
      // A synchronous answer is taken as it is: a resync over 5,000 settled Nodes awaits nothing.
      const skip = options.skip?.(key) ?? false;
      if (skip === true || (skip !== false && await skip)) continue;
      queue.add(key);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Declared controllers.

/** What one pass over a key reported to the runtime. */
export interface PassResult {
  /**
   * True when the pass left nothing to do: a resync over the same `inputs` is then skipped. Default false (a
   * controller without `inputs` is never skipped).
   */
  readonly settled?: boolean;
  /** Run the key again after this long (a backed-off write, a paused API), whatever else happens. */
  readonly requeueAfterMs?: number;
}

/** What a term's parts see of the runtime. */
export interface TermContext<M> {
  /** This term's memory (`ControllerSpec.memory`). */
  readonly memory: M;
  /** Ends with the term. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  /** Queues a key (an event: never skipped). */
  enqueue(key: string): void;
  /** Forgets a key whose object is gone: its settled inputs and its part of the shadow record. */
  forget(key: string): void;
  /** Runs `work` inside a scope of the shadow record (a side loop's writes: `scope` names them on `/plan`). */
  within<T>(scope: string, work: (ctx: WriteContext) => Promise<T>): Promise<T>;
}

/** The writes of one reconcile (or side loop pass): each goes through its API's executor. */
export interface WriteContext {
  /** True in `--dry-run`: writes are held. */
  readonly dryRun: boolean;
  /** Hands a decided write to its executor: held in dry run, else sent, written through and counted. */
  apply<T>(write: Write<T>): Promise<Applied<T>>;
}

/** What `reconcile` gets: the term, and the executors bound to this pass's scope. */
export interface ReconcileContext<M> extends TermContext<M>, WriteContext {}

/** A periodic job of a term (the service controller's orphan check and Secret refresh). */
export interface SideLoop<M> {
  readonly name: string;
  readonly periodMs: number;
  /** Runs once at the start of the term too (default: first run one period in). */
  readonly atStart?: (ctx: TermContext<M>) => boolean;
  /** One run; a throw is logged as a warning and the loop goes on. */
  run(ctx: TermContext<M>): Promise<void>;
}

/** A controller, as declared: the runtime runs it for one leadership term at a time. */
export interface ControllerSpec<M> {
  /** The `--controllers` name: label of its queue, metrics, log lines and shadow record. */
  readonly name: string;
  /** Keys reconciled at once (distinct keys only). */
  readonly workers: number;
  /** Per-key backoff after a failure (default 1 s doubling to 5 min). */
  readonly retry?: { readonly baseMs: number; readonly maxMs: number };
  /** Least time between two starts of one key: adds within it coalesce (a whole-cluster key). */
  readonly minIntervalMs?: number | (() => number);
  /** The term's memory, built before anything is enqueued (may read, and wait, first). */
  memory(ctx: Omit<TermContext<undefined>, "memory">): M | Promise<M>;
  /** Subscribes to the events that enqueue keys; returns the unsubscribers. */
  sources(ctx: TermContext<M>): readonly (() => void)[];
  /** The keys to reconcile as the term starts. */
  initialKeys(ctx: TermContext<M>): Iterable<string>;
  /** The safety net: every `periodMs`, `keys()` again (read at each pass); `keepBackoff` leaves retries be. */
  readonly resync?: {
    readonly periodMs: number;
    keys(ctx: TermContext<M>): Iterable<string> | Promise<Iterable<string>>;
    readonly keepBackoff?: boolean;
  };
  /**
   * What a pass of `key` reads (informer versions, cache generations, a fingerprint), as text; read when a pass
   * starts and when the resync comes. A resync leaves the key alone when it equals what the key's last settled
   * pass read. Undefined: the key is never skipped.
   */
  inputs?(key: string, ctx: TermContext<M>): string | undefined | Promise<string | undefined>;
  /** Brings one key in line; throws to be retried. */
  reconcile(key: string, ctx: ReconcileContext<M>): Promise<PassResult | void>;
  /** After a failed reconcile (not an abort), e.g. a Warning Event. */
  onError?(key: string, error: unknown, outcome: Outcome, ctx: TermContext<M>): void | Promise<void>;
  /** Periodic jobs of the term. */
  readonly loops?: readonly SideLoop<M>[];
}

/** What the runtime takes from the process. */
export interface RuntimeDeps {
  readonly clock: Clock;
  readonly metrics: Registry;
  readonly log: Logger;
  /** The shadow record and the executors every write goes through. */
  readonly shadow: ShadowRecorder;
  readonly executors: Executors;
}

/** One side loop until the term ends. */
async function runLoop<M>(loop: SideLoop<M>, ctx: TermContext<M>): Promise<void> {
  let due = loop.atStart?.(ctx) ?? false;
  for (;;) {
    if (due) {
      try {
        await loop.run(ctx);
      } catch (error) {
        if (ctx.signal.aborted) return;
        ctx.log.warning("{loop} failed: {error}", { loop: loop.name, error: describeError(error) });
      }
    }
    due = true;
    if (!await sleepUnlessAborted(ctx.clock, loop.periodMs, ctx.signal)) return;
  }
}

/** The inputs of each key's last settled pass, and the skip decision of the resync. */
class SettledKeys {
  readonly #settled = new Map<string, string>();

  record(key: string, inputs: string | undefined, result: PassResult | void): void {
    if (inputs !== undefined && result?.settled === true) this.#settled.set(key, inputs);
    else this.#settled.delete(key);
  }

  isSettled(key: string, inputs: string | undefined): boolean {
    return inputs !== undefined && this.#settled.get(key) === inputs;
  }

  forget(key: string): void {
    this.#settled.delete(key);
  }
}

/** A scope's executors: the one place writes are held, sent and counted. */
function writeContext(deps: RuntimeDeps, controller: string, scope: ShadowScope): WriteContext {
  return {
    dryRun: scope.dryRun,
    apply: (write) => deps.executors[write.api].apply(controller, scope, write),
  };
}

/** Runs `spec` for one term: until `signal` aborts, then stops everything it started. */
export async function runController<M>(
  spec: ControllerSpec<M>,
  deps: RuntimeDeps,
  signal: AbortSignal,
): Promise<void> {
  const { clock, metrics, log, shadow } = deps;
  const queue = new WorkQueue<string>({
    name: spec.name,
    clock,
    metrics,
    baseDelayMs: spec.retry?.baseMs,
    maxDelayMs: spec.retry?.maxMs,
    minIntervalMs: spec.minIntervalMs,
  });
  const settled = new SettledKeys();
  const base = {
    signal,
    log,
    clock,
    metrics,
    enqueue: (key: string) => queue.add(key),
    forget: (key: string) => {
      settled.forget(key);
      shadow.forget(spec.name, key);
    },
    within: <T>(scope: string, work: (ctx: WriteContext) => Promise<T>) =>
      shadow.within(spec.name, scope, (s) => work(writeContext(deps, spec.name, s))),
  };
  const memory = await spec.memory(base);
  if (signal.aborted) return;
  const ctx: TermContext<M> = { ...base, memory };
  const unsubscribe = spec.sources(ctx);
  try {
    for (const key of spec.initialKeys(ctx)) queue.add(key);
    const tasks = [
      runWorkers(queue, {
        concurrency: spec.workers,
        signal,
        log,
        metrics,
        clock,
        handle: (key) => pass(spec, ctx, { key, deps, queue, settled }),
        onError: spec.onError && ((key, error, outcome) => spec.onError?.(key, error, outcome, ctx)),
      }),
      ...(spec.loops ?? []).map((loop) => runLoop(loop, ctx)),
    ];
    const resync = spec.resync;
    if (resync) {
      tasks.push(runResync(queue, {
        clock,
        periodMs: resync.periodMs,
        signal,
        keepBackoff: resync.keepBackoff,
        keys: () => resync.keys(ctx),
        skip: spec.inputs && ((key) => {
          const decide = (inputs: string | undefined) => {
            const skip = settled.isSettled(key, inputs);
            if (skip) recordSkipped(metrics, spec.name);
            return skip;
          };
          const inputs = inputsOf(spec, key, ctx);
          return inputs instanceof Promise ? inputs.then(decide) : decide(inputs);
        }),
      }));
    }
    await Promise.all(tasks);
  } finally {
    for (const off of unsubscribe) off();
    queue.shutDown();
  }
}

/**
 * What a pass of `key` reads, or undefined when that cannot be told (a failed read): such a key is never
 * skipped, and its pass meets the failure itself.
 */
function inputsOf<M>(
  spec: ControllerSpec<M>,
  key: string,
  ctx: TermContext<M>,
): string | undefined | Promise<string | undefined> {
  const unknown = (error: unknown): undefined => {
    if (ctx.signal.aborted) throw error;
    ctx.log.debug("{controller} {key}: inputs unknown, not skipped: {error}", {
      controller: spec.name,
      key,
      error: describeError(error),
    });
    return undefined;
  };
  try {
    const inputs = spec.inputs?.(key, ctx);
    // A synchronous answer stays synchronous (the resync asks once per key).
    return inputs instanceof Promise ? inputs.catch(unknown) : inputs;
  } catch (error) {
    return unknown(error);
  }
}

/** Which controller's reconcile of which key the calling code runs in. */
export interface ReconcileInProgress {
  readonly controller: string;
  readonly key: string;
}

const reconciling = new AsyncLocalStorage<ReconcileInProgress>();

/**
 * The reconcile the calling code runs in (through every await), if any: what a report made deep down (a
 * missing permission's Event) is about.
 */
export function currentReconcile(): ReconcileInProgress | undefined {
  return reconciling.getStore();
}

/** One pass over `key`: its inputs read first, then `reconcile` inside its shadow scope. */
function pass<M>(
  spec: ControllerSpec<M>,
  ctx: TermContext<M>,
  run: { key: string; deps: RuntimeDeps; queue: WorkQueue<string>; settled: SettledKeys },
): Promise<void> {
  return reconciling.run({ controller: spec.name, key: run.key }, () => passInScope(spec, ctx, run));
}

async function passInScope<M>(
  spec: ControllerSpec<M>,
  ctx: TermContext<M>,
  run: { key: string; deps: RuntimeDeps; queue: WorkQueue<string>; settled: SettledKeys },
): Promise<void> {
  const { key, deps, queue, settled } = run;
  const inputs = await inputsOf(spec, key, ctx);
  const result = await deps.shadow.within(
    spec.name,
    key,
    (scope) => spec.reconcile(key, { ...ctx, ...writeContext(deps, spec.name, scope) }),
  );
  settled.record(key, inputs, result);
  if (result?.requeueAfterMs !== undefined) queue.addAfter(key, Math.max(1, result.requeueAfterMs));
}

/** What a periodic pass reads of many objects, as one version: it moves whenever a fingerprint changes. */
export class Fingerprints {
  #version = 0;
  readonly #seen = new Map<string, string>();

  /** Records what a pass reads of `name` (undefined once it is gone); a change moves the version. */
  see(name: string, fingerprint: string | undefined): void {
    if (this.#seen.get(name) === fingerprint) return;
    if (fingerprint === undefined) this.#seen.delete(name);
    else this.#seen.set(name, fingerprint);
    this.#version++;
  }

  /** The version of what `see` tracks: read it when a pass starts, so changes during the pass count. */
  get version(): number {
    return this.#version;
  }
}
