/** Watch streams: newline-delimited JSON events replayed from a resourceVersion, then live, with bookmarks. */
import { type Clock, systemClock } from "../../common/clock.ts";
import type { EventType, StoreEvent } from "./history.ts";
import { apiVersionOf, type KubeObject, type ResourceDef } from "./resources.ts";
import type { Selector } from "./selectors.ts";
import { badRequest, expired } from "./status.ts";
import type { KubeStore } from "./store.ts";

/** One watch request, parsed. */
export interface WatchRequest {
  def: ResourceDef;
  namespace: string | undefined;
  selector: Selector;
  resourceVersion: string | undefined;
  allowBookmarks: boolean;
  sendInitialEvents: boolean;
  /** From `timeoutSeconds`; otherwise the server picks a randomised lifetime up to `maxMs`. */
  timeoutMs: number | undefined;
  /** Replaces each event's object (a Table row, PartialObjectMetadata); plain objects when absent. */
  render?: (obj: KubeObject) => unknown;
}

/** Server-wide watch settings. */
export interface WatchSettings {
  maxMs: number;
  bookmarkIntervalMs: number;
  /** Clock of bookmarks and watch lifetimes (the server's: a test's fake clock moves them too). */
  clock?: Clock;
}

/** Watch events held back: from the first event `match` accepts on, each is sent `ms` after it happened. */
export interface WatchLag {
  ms: number;
  match: (obj: KubeObject) => boolean;
}

/** A watcher whose client fell this far behind (queued chunks) is dropped, as the apiserver drops slow watchers. */
const MAX_QUEUED_CHUNKS = 10_000;

const encoder = new TextEncoder();

class Watcher {
  readonly #req: WatchRequest;
  readonly #hub: WatchHub;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** Ends the bookmark and lifetime sleeps. */
  readonly #stop = new AbortController();
  #timers: Promise<void>[] = [];
  #unsubscribe: (() => void) | undefined;
  #closed = false;
  /** Lines held back by a lag, oldest first, each with the time it is due; later lines queue behind them. */
  #held: { line: string; dueAt: number }[] = [];
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  readonly stream: ReadableStream<Uint8Array>;

  constructor(hub: WatchHub, req: WatchRequest) {
    this.#hub = hub;
    this.#req = req;
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => this.#cleanup(),
    });
  }

  /** Replays what the client missed, then follows the store. */
  start(store: KubeStore, settings: WatchSettings): void {
    const req = this.#req;
    const lines: string[] = [];
    if (req.resourceVersion === undefined || req.resourceVersion === "" || req.resourceVersion === "0") {
      for (const obj of store.select(req.def, req.namespace, req.selector)) {
        lines.push(this.#line("ADDED", obj));
      }
      if (req.sendInitialEvents && req.allowBookmarks) lines.push(this.#bookmark(store, true));
    } else {
      const rv = Number(req.resourceVersion);
      const oldest = store.compactedRv();
      if (rv < oldest) {
        const status = expired(`too old resource version: ${rv} (${oldest})`).toStatus();
        this.#write(`${JSON.stringify({ type: "ERROR", object: status })}\n`);
        this.close(false);
        return;
      }
      for (const ev of store.eventsSince(rv)) {
        const line = this.#translate(ev);
        if (line) lines.push(line);
      }
    }
    if (lines.length > 0) this.#write(lines.join(""));
    this.#unsubscribe = store.subscribe((ev) => {
      const line = this.#translate(ev);
      if (line) this.#send(line, ev.object);
    });
    const clock = settings.clock ?? systemClock;
    if (req.allowBookmarks) {
      this.#timers.push(
        this.#every(clock, settings.bookmarkIntervalMs, () => this.#send(this.#bookmark(store, false))),
      );
    }
    const lifetime = req.timeoutMs ?? settings.maxMs * (0.5 + Math.random() / 2);
    this.#timers.push(this.#after(clock, lifetime, () => {
      if (req.allowBookmarks) this.#write(this.#bookmark(store, false));
      this.close(false);
    }));
  }

  /** Runs `fn` every `ms` on `clock` until the watch ends. */
  async #every(clock: Clock, ms: number, fn: () => void): Promise<void> {
    while (await this.#slept(clock, ms)) fn();
  }

  /** Runs `fn` once after `ms` on `clock`, unless the watch ends first. */
  async #after(clock: Clock, ms: number, fn: () => void): Promise<void> {
    if (await this.#slept(clock, ms)) fn();
  }

  async #slept(clock: Clock, ms: number): Promise<boolean> {
    try {
      await clock.sleep(ms, this.#stop.signal);
      return !this.#closed;
    } catch {
      return false;
    }
  }

  /** Maps a store change to what this watcher sees: selector transitions become ADDED/DELETED. */
  #translate(ev: StoreEvent): string | undefined {
    const req = this.#req;
    if (ev.def !== req.def) return undefined;
    if (req.namespace !== undefined && ev.object.metadata.namespace !== req.namespace) return undefined;
    if (req.selector.empty) return this.#line(ev.type, ev.object);
    if (ev.type === "ADDED") {
      return req.selector.matches(ev.object) ? this.#line("ADDED", ev.object) : undefined;
    }
    if (ev.type === "DELETED") {
      return req.selector.matches(ev.prev ?? ev.object) ? this.#line("DELETED", ev.object) : undefined;
    }
    const was = ev.prev !== undefined && req.selector.matches(ev.prev);
    const is = req.selector.matches(ev.object);
    if (was && is) return this.#line("MODIFIED", ev.object);
    if (is) return this.#line("ADDED", ev.object);
    if (was) return this.#line("DELETED", ev.object);
    return undefined;
  }

  #line(type: EventType, obj: KubeObject): string {
    const render = this.#req.render;
    if (!render) return this.#hub.line(type, obj);
    return `${JSON.stringify({ type, object: render(obj) })}\n`;
  }

  #bookmark(store: KubeStore, initialEnd: boolean): string {
    const metadata: Record<string, unknown> = { resourceVersion: store.resourceVersion };
    if (initialEnd) metadata.annotations = { "k8s.io/initial-events-end": "true" };
    const object = { kind: this.#req.def.kind, apiVersion: apiVersionOf(this.#req.def), metadata };
    return `${JSON.stringify({ type: "BOOKMARK", object })}\n`;
  }

  /** Sends a live line, after the lines held back before it; holds it too when the hub's lag matches `obj`. */
  #send(line: string, obj?: KubeObject): void {
    const lag = this.#hub.lag;
    const lagged = lag !== undefined && obj !== undefined && lag.match(obj);
    if (this.#held.length === 0 && !lagged) {
      this.#write(line);
      return;
    }
    const last = this.#held[this.#held.length - 1]?.dueAt ?? 0;
    this.#held.push({ line, dueAt: Math.max(last, Date.now() + (lagged ? lag.ms : 0)) });
    this.#armFlush();
  }

  #armFlush(): void {
    const first = this.#held[0];
    if (this.#flushTimer !== undefined || first === undefined) return;
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = undefined;
      while ((this.#held[0]?.dueAt ?? Infinity) <= Date.now()) this.#write(this.#held.shift()!.line);
      this.#armFlush();
    }, Math.max(0, first.dueAt - Date.now()));
  }

  #write(text: string): void {
    if (this.#closed || !this.#controller) return;
    if ((this.#controller.desiredSize ?? 0) < -MAX_QUEUED_CHUNKS) {
      this.close(false);
      return;
    }
    this.#controller.enqueue(encoder.encode(text));
  }

  /** Ends the stream: cleanly (the client sees the end and re-watches) or with a reset. */
  close(reset: boolean): void {
    if (this.#closed) return;
    const controller = this.#controller;
    this.#cleanup();
    try {
      if (reset) controller?.error(new Error("watch connection reset"));
      else controller?.close();
    } catch {
      // Already closed by the client side: nothing left to end.
    }
  }

  #cleanup(): void {
    this.#closed = true;
    this.#stop.abort();
    this.#timers = [];
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#held = [];
    this.#unsubscribe?.();
    this.#hub.forget(this);
  }
}

/** All open watches of one server. */
export class WatchHub {
  readonly #store: KubeStore;
  readonly #settings: WatchSettings;
  readonly #watchers = new Set<Watcher>();
  readonly #json = new WeakMap<KubeObject, string>();
  /** Set by `Faults.lagWatchEvents`: how live events are held back. */
  lag: WatchLag | undefined;

  constructor(store: KubeStore, settings: WatchSettings) {
    this.#store = store;
    this.#settings = settings;
  }

  /** Number of open watches. */
  get size(): number {
    return this.#watchers.size;
  }

  /** Opens a watch; a malformed resourceVersion is a 400 before any streaming starts. */
  open(req: WatchRequest): ReadableStream<Uint8Array> {
    const rv = req.resourceVersion;
    if (rv !== undefined && rv !== "" && !/^[0-9]+$/.test(rv)) {
      throw badRequest(
        `resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": invalid syntax`,
      );
    }
    const watcher = new Watcher(this, req);
    this.#watchers.add(watcher);
    watcher.start(this.#store, this.#settings);
    return watcher.stream;
  }

  /** One event line; each stored object is serialised once however many watchers receive it. */
  line(type: EventType, obj: KubeObject): string {
    let json = this.#json.get(obj);
    if (json === undefined) {
      json = JSON.stringify(obj);
      this.#json.set(obj, json);
    }
    return `{"type":"${type}","object":${json}}\n`;
  }

  /** Ends every open watch; returns how many were open. */
  closeAll(reset = false): number {
    const all = [...this.#watchers];
    for (const w of all) w.close(reset);
    return all.length;
  }

  /** Called by a watcher when it ends. */
  forget(watcher: Watcher): void {
    this.#watchers.delete(watcher);
  }
}
