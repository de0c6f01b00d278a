/**
 * A list+watch cache of one resource that never stays dead. client-node's own informer stops for good on any
 * error but 410; this one re-lists with backoff after every failure, reports `healthy`, and after a re-list
 * delivers what changed while it was disconnected as synthetic add/update/delete events.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { Backoff, type BackoffOptions } from "../common/backoff.ts";
import { type Clock, isAbort, systemClock } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import type { Counter, Gauge, Registry } from "../common/metrics.ts";
import { fromWire, InformerWatch, type WatchEnd } from "./informer_watch.ts";
import { objectKey } from "./keys.ts";
import { KubeApiError, kubeRequestsCounter, type PermissionObserver } from "./requests.ts";

/** The metadata an informer needs from every object. */
export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** What happened to an object. */
export type ChangeKind = "add" | "update" | "delete";

/** Called for every change; `old` is set for updates. Handlers should only enqueue keys. */
export type ChangeHandler<T> = (kind: ChangeKind, obj: T, old?: T) => void;

/** A list result: items plus the resourceVersion to watch from. */
export interface ListResult<T> {
  items: T[];
  metadata?: { resourceVersion?: string };
}

/** Selectors applied to both list and watch. */
export interface Selectors {
  labelSelector?: string;
  fieldSelector?: string;
}

/** How to list and watch one resource (see `nodeSource`, `serviceSource`). */
export interface ResourceSource<T> {
  /** Resource name for logs and metrics (`nodes`). */
  resource: string;
  /** Collection path to watch (`/api/v1/nodes`). */
  path: string;
  /** apiVersion and kind, so watched objects are deserialised into the same models as listed ones. */
  apiVersion: string;
  kind: string;
  /** Lists with `selectors`; `signal` aborts the request (a stop must not wait for a slow list). */
  list(selectors: Selectors, signal?: AbortSignal): Promise<ListResult<T>>;
}

/** Options of an `Informer`. */
export interface InformerOptions extends Selectors {
  log: Logger;
  metrics: Registry;
  clock?: Clock;
  /** Delay between restarts after failures (default 500 ms doubling to 30 s). */
  backoff?: BackoffOptions;
  /** Reconnect a watch that has been silent this long (default 30 s, client-node's default). */
  watchIdleTimeoutMs?: number;
  /** A watch that ends sooner than this without events counts as a failure for backoff (default 1 s). */
  minWatchMs?: number;
  /** Told of the watches' permission (the lists' go through the clients' own). */
  permissions?: PermissionObserver;
}

/** Options of an `Informer` of `T`: what it keeps of each object. */
export interface TransformOptions<T> {
  /**
   * What is stored (and handed to handlers) of each listed or watched object, like client-go's
   * `TransformFunc`: drop what no reader needs. Default: the object as decoded. A watched object is given
   * to it as wire JSON (timestamps as text) before it is decoded, so what it drops is never decoded: it
   * must only select fields, never read a model's types.
   */
  transform?: (obj: T) => T;
}

/** A self-restarting list+watch cache of one resource, keyed by `objectKey`. */
export class Informer<T extends KubeObject> {
  readonly #source: ResourceSource<T>;
  readonly #options: InformerOptions & TransformOptions<T>;
  readonly #items = new Map<string, T>();
  readonly #handlers = new Set<ChangeHandler<T>>();
  readonly #sync = Promise.withResolvers<void>();
  readonly #restart: RestartPolicy;
  readonly #healthyGauge: Gauge;
  readonly #watch: InformerWatch;
  #resourceVersion = "";
  #synced = false;
  #healthy = false;

  constructor(kc: KubeConfig, source: ResourceSource<T>, options: InformerOptions & TransformOptions<T>) {
    this.#source = source;
    this.#options = options;
    const { log, metrics, backoff, minWatchMs, labelSelector, fieldSelector } = options;
    const clock = options.clock ?? systemClock;
    const resource = source.resource;
    this.#restart = new RestartPolicy({ resource, log, metrics, clock, backoff, minWatchMs });
    const healthyHelp = "1 while the informer's watch is established";
    this.#healthyGauge = metrics.gauge("ccm_informer_healthy", healthyHelp, ["resource"]);
    this.#watch = new InformerWatch(kc, {
      clock,
      requests: kubeRequestsCounter(metrics),
      resource,
      path: source.path,
      labelSelector,
      fieldSelector,
      idleTimeoutMs: options.watchIdleTimeoutMs ?? 30_000,
      apply: (type, raw) => this.#apply(type, raw),
      opened: () => this.#setHealthy(true),
      permissions: options.permissions,
    });
  }

  /** The resource it caches (`nodes`), for messages. */
  get resource(): string {
    return this.#source.resource;
  }

  /** True once the first full list has been stored. */
  get synced(): boolean {
    return this.#synced;
  }

  /** True while a watch is established; false after a failure until a restart succeeds. */
  get healthy(): boolean {
    return this.#healthy;
  }

  /** Every cached object. Read-only: `structuredClone` before changing one. */
  list(): readonly T[] {
    return [...this.#items.values()];
  }

  /** The cached object with this key (`ns/name` or `name`). */
  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  /** Registers a change handler; returns a function that removes it. */
  onChange(handler: ChangeHandler<T>): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  /** Resolves once synced; rejects when `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#sync.promise.then(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }

  /** Lists and watches until `signal` aborts, restarting with backoff after every failure. */
  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        if (!this.#resourceVersion) await this.#relist(signal);
        const end = await this.#watch.run(this.#resourceVersion, signal);
        if (end.kind === "error") throw end.error;
        if (end.kind === "gone") this.#resourceVersion = "";
        if (end.kind === "closed") await this.#restart.waitAfterClose(end, signal);
      } catch (e) {
        if (signal.aborted || isAbort(e, signal)) break;
        this.#setHealthy(false);
        this.#resourceVersion = "";
        if (!(await this.#restart.waitAfterFailure(e, signal))) break;
      }
    }
    // Stopped on purpose (a leader's Lease watch, a shutdown): not watching, but not failing either, so its
    // series goes instead of reading 0 (an alert on unhealthy informers would page for every leader).
    this.#healthy = false;
    this.#healthyGauge.remove({ resource: this.#source.resource });
  }

  async #relist(signal: AbortSignal): Promise<void> {
    const { labelSelector, fieldSelector } = this.#options;
    let result: ListResult<T> | undefined = await this.#source.list({ labelSelector, fieldSelector }, signal);
    const resourceVersion = result.metadata?.resourceVersion ?? "";
    const fresh = new Map<string, T>();
    const keep = this.#options.transform;
    // Trimmed one by one and the list dropped before the changes are worked out: a relist's peak holds the
    // decoded list only until every item is trimmed, never beside a second full copy.
    for (const item of result.items) fresh.set(objectKey(item), keep ? keep(item) : item);
    result = undefined;
    const changes: [ChangeKind, T, T?][] = [];
    for (const [key, old] of this.#items) if (!fresh.has(key)) changes.push(["delete", old]);
    for (const [key, obj] of fresh) {
      const old = this.#items.get(key);
      if (!old) changes.push(["add", obj]);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        changes.push(["update", obj, old]);
      }
    }
    this.#items.clear();
    for (const [key, obj] of fresh) this.#items.set(key, obj);
    this.#resourceVersion = resourceVersion;
    for (const [kind, obj, old] of changes) this.#emit(kind, obj, old);
    if (!this.#synced) {
      this.#synced = true;
      this.#sync.resolve();
    }
  }

  /** Applies one watch event; returns how the watch ends when the event ends it. */
  #apply(type: string, raw: unknown): WatchEnd | undefined {
    if (type === "ERROR") {
      const status = (raw ?? {}) as { code?: number; reason?: string; message?: string };
      if (status.code === 410) return { kind: "gone" };
      const reason = status.reason ?? "WatchError";
      return { kind: "error", error: new KubeApiError(status.code ?? 0, reason, `Watch failed: ${reason}`) };
    }
    const obj = this.#deserialize(raw);
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.#resourceVersion = rv;
    if (type === "BOOKMARK") return undefined;
    const key = objectKey(obj);
    const old = this.#items.get(key);
    if (type === "DELETED") {
      if (!old) return undefined;
      this.#items.delete(key);
      this.#emit("delete", obj);
    } else if (type === "ADDED" || type === "MODIFIED") {
      this.#items.set(key, obj);
      if (!old) this.#emit("add", obj);
      else if (old.metadata?.resourceVersion !== rv) this.#emit("update", obj, old);
    }
    return undefined;
  }

  /**
   * Watch events carry wire JSON; list results are client-node models (Dates and all): make them alike.
   * Trimmed first: a kubelet's status update carries the Node's image list, which is then never decoded.
   */
  #deserialize(raw: unknown): T {
    const transform = this.#options.transform;
    const kept = transform && raw !== null && typeof raw === "object" ? transform(raw as T) : raw;
    return fromWire<T>(kept, this.#source.apiVersion, this.#source.kind);
  }

  #emit(kind: ChangeKind, obj: T, old?: T): void {
    for (const handler of this.#handlers) {
      try {
        handler(kind, obj, old);
      } catch (e) {
        this.#options.log.error("{resource} change handler threw: {error}", {
          resource: this.#source.resource,
          error: e instanceof Error ? e.message : String(e),
        });
      }
    }
  }

  #setHealthy(healthy: boolean): void {
    if (healthy && !this.#healthy && this.#restart.failures > 0) {
      this.#options.log.info("{resource} informer recovered", { resource: this.#source.resource });
    }
    this.#healthy = healthy;
    this.#healthyGauge.set({ resource: this.#source.resource }, healthy ? 1 : 0);
  }
}

// ---- When to list or watch again: backoff after failures (counted in `ccm_informer_restarts_total` and
// logged), and a pause when the server keeps closing new watches at once.

const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 30_000 };
const DEFAULT_MIN_WATCH_MS = 1000;

/** Options of a `RestartPolicy`. */
export interface RestartPolicyOptions {
  /** Resource name for logs and metrics (`nodes`). */
  resource: string;
  log: Logger;
  metrics: Registry;
  clock: Clock;
  /** Delay between restarts after failures (default 500 ms doubling to 30 s). */
  backoff?: BackoffOptions;
  /** A watch that ends sooner than this without events counts as a failure for backoff (default 1 s). */
  minWatchMs?: number;
}

/** True for errors marked `permanent` (a missing RBAC permission, `KubeForbiddenError`). */
function isPermanent(e: unknown): boolean {
  return typeof e === "object" && e !== null && (e as { permanent?: unknown }).permanent === true;
}

/** The informer's restart backoff: reset by a watch that lived or saw events, grown by every failure. */
export class RestartPolicy {
  readonly #options: RestartPolicyOptions;
  readonly #backoff: Backoff;
  readonly #restarts: Counter;

  constructor(options: RestartPolicyOptions) {
    this.#options = options;
    this.#backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
    const restartsHelp = "Informer restarts after failures";
    this.#restarts = options.metrics.counter("ccm_informer_restarts_total", restartsHelp, ["resource"]);
    // Shown from 0: Prometheus's increase() cannot count the first restart of a series born at 1.
    this.#restarts.inc({ resource: options.resource }, 0);
  }

  /** Failures since the last watch that counted as a success. */
  get failures(): number {
    return this.#backoff.failures;
  }

  /** After a watch closed by the server: resets the backoff, or sleeps when the watch died young and silent. */
  async waitAfterClose(end: { events: number; startedAt: number }, signal: AbortSignal): Promise<void> {
    const lived = this.#options.clock.monotonic() - end.startedAt;
    if (end.events > 0 || lived >= (this.#options.minWatchMs ?? DEFAULT_MIN_WATCH_MS)) {
      this.#backoff.reset();
      return;
    }
    // The server keeps closing watches at once: resume from the same version, but not in a hot loop.
    await this.#options.clock.sleep(this.#backoff.next(), signal);
  }

  /** Records a failure and sleeps; false when aborted while sleeping. */
  async waitAfterFailure(e: unknown, signal: AbortSignal): Promise<boolean> {
    const { resource, log, clock } = this.#options;
    this.#restarts.inc({ resource });
    // A permission the CCM lacks stays missing until someone grants it (reported once, by `kube/permissions.ts`):
    // retried at the longest interval, never in a hot loop.
    const delayMs = isPermanent(e) ? this.#backoff.options.maxMs : this.#backoff.next();
    log.warning("{resource} informer failed, re-listing in {delayMs} ms: {error}", {
      resource,
      delayMs,
      error: e instanceof Error ? e.message : String(e),
    });
    try {
      await clock.sleep(delayMs, signal);
      return true;
    } catch {
      return false;
    }
  }
}
