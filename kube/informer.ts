/**
 * A list+watch cache of one resource that never stays dead. client-node's own informer stops for good on any
 * error but 410; this one re-lists with backoff after every failure, reports `healthy`, and after a re-list
 * delivers what changed while it was disconnected as synthetic add/update/delete events.
 */
import { type KubeConfig, loadYaml, Watch } from "@kubernetes/client-node";
import { Backoff, type BackoffOptions } from "../backoff.ts";
import { type Clock, isAbort, systemClock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { Counter, Gauge, Registry } from "../metrics.ts";
import { objectKey } from "./keys.ts";
import { KubeApiError, kubeRequestsCounter } from "./requests.ts";

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

/** How to list and watch one resource (see `nodeSource`, `serviceSource`, `leaseSource`). */
export interface ResourceSource<T> {
  /** Resource name for logs and metrics (`nodes`). */
  resource: string;
  /** Collection path to watch (`/api/v1/nodes`). */
  path: string;
  /** apiVersion and kind, so watched objects are deserialised into the same models as listed ones. */
  apiVersion: string;
  kind: string;
  list(selectors: Selectors): Promise<ListResult<T>>;
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
}

type WatchEnd =
  | { kind: "aborted" }
  | { kind: "gone" }
  | { kind: "closed"; events: number; startedAt: number }
  | { kind: "error"; error: unknown };

const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 30_000 };

/** A self-restarting list+watch cache of one resource, keyed by `objectKey`. */
export class Informer<T extends KubeObject> {
  readonly #source: ResourceSource<T>;
  readonly #options: InformerOptions;
  readonly #clock: Clock;
  readonly #watch: Watch;
  readonly #backoff: Backoff;
  readonly #items = new Map<string, T>();
  readonly #handlers = new Set<ChangeHandler<T>>();
  readonly #sync = Promise.withResolvers<void>();
  readonly #restarts: Counter;
  readonly #healthyGauge: Gauge;
  readonly #requests: Counter;
  #resourceVersion = "";
  #synced = false;
  #healthy = false;

  constructor(kc: KubeConfig, source: ResourceSource<T>, options: InformerOptions) {
    this.#source = source;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#watch = new Watch(kc);
    // Typed private in client-node, but it is the only knob for the watch's silence timeout.
    Reflect.set(this.#watch, "requestTimeoutMs", options.watchIdleTimeoutMs ?? 30_000);
    this.#backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
    const m = options.metrics;
    this.#restarts = m.counter("ccm_informer_restarts_total", "Informer restarts after failures", [
      "resource",
    ]);
    this.#healthyGauge = m.gauge("ccm_informer_healthy", "1 while the informer's watch is established", [
      "resource",
    ]);
    this.#requests = kubeRequestsCounter(m);
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
        if (!this.#resourceVersion) await this.#relist();
        const end = await this.#watchOnce(signal);
        if (end.kind === "error") throw end.error;
        if (end.kind === "gone") this.#resourceVersion = "";
        if (end.kind === "closed") await this.#afterClose(end, signal);
      } catch (e) {
        if (signal.aborted || isAbort(e, signal)) break;
        if (!(await this.#afterFailure(e, signal))) break;
      }
    }
    this.#setHealthy(false);
  }

  async #afterClose(end: { events: number; startedAt: number }, signal: AbortSignal): Promise<void> {
    const lived = this.#clock.monotonic() - end.startedAt;
    if (end.events > 0 || lived >= (this.#options.minWatchMs ?? 1000)) {
      this.#backoff.reset();
      return;
    }
    // The server keeps closing watches at once: resume from the same version, but not in a hot loop.
    await this.#clock.sleep(this.#backoff.next(), signal);
  }

  /** Records a failure and sleeps; false when aborted while sleeping. */
  async #afterFailure(e: unknown, signal: AbortSignal): Promise<boolean> {
    this.#setHealthy(false);
    this.#resourceVersion = "";
    this.#restarts.inc({ resource: this.#source.resource });
    const delayMs = this.#backoff.next();
    this.#options.log.warning("{resource} informer failed, re-listing in {delayMs} ms: {error}", {
      resource: this.#source.resource,
      delayMs,
      error: e instanceof Error ? e.message : String(e),
    });
    try {
      await this.#clock.sleep(delayMs, signal);
      return true;
    } catch {
      return false;
    }
  }

  async #relist(): Promise<void> {
    const { labelSelector, fieldSelector } = this.#options;
    const result = await this.#source.list({ labelSelector, fieldSelector });
    const fresh = new Map<string, T>();
    for (const item of result.items) fresh.set(objectKey(item), item);
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
    this.#resourceVersion = result.metadata?.resourceVersion ?? "";
    for (const [kind, obj, old] of changes) this.#emit(kind, obj, old);
    if (!this.#synced) {
      this.#synced = true;
      this.#sync.resolve();
    }
  }

  /**
   * One watch, ended by the server, an error, `signal`, or silence: under Deno, client-node's watch never
   * notices a connection reset (nor its own timeout), so a watchdog ends a watch that has been silent for
   * `watchIdleTimeoutMs` (BOOKMARKs count as activity) and it is resumed from the same resourceVersion.
   */
  async #watchOnce(signal: AbortSignal): Promise<WatchEnd> {
    if (signal.aborted) return { kind: "aborted" };
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    let lastActivity = this.#clock.monotonic();
    const watching = this.#openWatch(stop.signal, () => (lastActivity = this.#clock.monotonic()));
    const watchdog = this.#watchdog(stop.signal, () => lastActivity);
    const end = await Promise.race([watching, watchdog]);
    stop.abort();
    signal.removeEventListener("abort", onAbort);
    await Promise.all([watching, watchdog]);
    return end;
  }

  async #watchdog(stop: AbortSignal, lastActivity: () => number): Promise<WatchEnd> {
    const idleMs = this.#options.watchIdleTimeoutMs ?? 30_000;
    try {
      for (;;) {
        const silentMs = this.#clock.monotonic() - lastActivity();
        if (silentMs >= idleMs) return { kind: "closed", events: 1, startedAt: 0 };
        await this.#clock.sleep(idleMs - silentMs, stop);
      }
    } catch {
      return { kind: "aborted" };
    }
  }

  #openWatch(stop: AbortSignal, onActivity: () => void): Promise<WatchEnd> {
    const startedAt = this.#clock.monotonic();
    let events = 0;
    return new Promise((resolve) => {
      let settled = false;
      let controller: AbortController | undefined;
      const finish = (end: WatchEnd) => {
        if (settled) return;
        settled = true;
        stop.removeEventListener("abort", onAbort);
        controller?.abort();
        resolve(end);
      };
      const onAbort = () => finish({ kind: "aborted" });
      stop.addEventListener("abort", onAbort, { once: true });
      const onEvent = (type: string, obj: unknown) => {
        if (settled) return;
        events++;
        onActivity();
        const end = this.#apply(type, obj);
        if (end) finish(end);
      };
      const onDone = (err: unknown) => {
        this.#countWatch(err);
        if (!err) finish({ kind: "closed", events, startedAt });
        else if (err instanceof Error && err.name === "TimeoutError") {
          finish({ kind: "closed", events: 1, startedAt });
        } else if (statusCode(err) === 410) finish({ kind: "gone" });
        else finish({ kind: "error", error: err });
      };
      this.#watch.watch(this.#source.path, this.#watchParams(), onEvent, onDone).then((c) => {
        controller = c;
        if (settled) c.abort();
        else {
          onActivity();
          this.#setHealthy(true);
        }
      }, (e: unknown) => finish({ kind: "error", error: e }));
    });
  }

  #watchParams(): Record<string, string | boolean | number> {
    const params: Record<string, string | boolean | number> = {
      resourceVersion: this.#resourceVersion,
      allowWatchBookmarks: true,
      // Like client-go: a server-side timeout of 5–10 min spreads reconnects of many clients.
      timeoutSeconds: 300 + Math.floor(Math.random() * 300),
    };
    if (this.#options.labelSelector) params.labelSelector = this.#options.labelSelector;
    if (this.#options.fieldSelector) params.fieldSelector = this.#options.fieldSelector;
    return params;
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

  /** Watch events carry wire JSON; list results are client-node models (Dates and all): make them alike. */
  #deserialize(raw: unknown): T {
    const { apiVersion, kind } = this.#source;
    return loadYaml<T>(JSON.stringify({ ...(raw as object), apiVersion, kind }));
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

  #countWatch(err: unknown): void {
    const code = err ? String(statusCode(err) ?? "error") : "200";
    this.#requests.inc({ verb: "watch", resource: this.#source.resource, code });
  }

  #setHealthy(healthy: boolean): void {
    if (healthy && !this.#healthy && this.#backoff.failures > 0) {
      this.#options.log.info("{resource} informer recovered", { resource: this.#source.resource });
    }
    this.#healthy = healthy;
    this.#healthyGauge.set({ resource: this.#source.resource }, healthy ? 1 : 0);
  }
}

function statusCode(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const { statusCode, code } = err as { statusCode?: unknown; code?: unknown };
  if (typeof statusCode === "number") return statusCode;
  return typeof code === "number" ? code : undefined;
}
