/**
 * One informer's watch requests, each run to its end: closed by the server, failed, aborted, or ended by a
 * watchdog after a silence that client-node under Deno never notices. Every watch is counted in
 * `ccm_kube_requests_total`.
 *
 * Watch events into client-node models: a watch delivers wire JSON (timestamps as strings); a list delivers
 * models (timestamps as Dates): an informer holds both, so it decodes watched objects into the same models.
 * client-node's public way, `loadYaml`, wants text: the informer used to turn each parsed event back into
 * JSON text and parse that as YAML, which cost 10 times the decoding itself (bench/informer_decode.ts). The
 * serializer `loadYaml` ends with is not exported from the package's index, so it is imported from its file;
 * informer_watch_test.ts fails, naming this file, if an upgrade moves or changes it.
 */
import { type KubeConfig, Watch } from "@kubernetes/client-node";
import { ObjectSerializer } from "@kubernetes/client-node/dist/serializer.js";
import { getSerializationType } from "@kubernetes/client-node/dist/util.js";
import type { Clock } from "../common/clock.ts";
import type { Counter } from "../common/metrics.ts";
import type { PermissionObserver } from "./requests.ts";

/** How a watch ended. Ends for silence or a client timeout report `closed` with one event: not a failure. */
export type WatchEnd =
  | { kind: "aborted" }
  | { kind: "gone" }
  | { kind: "closed"; events: number; startedAt: number }
  | { kind: "error"; error: unknown };

/** Options of an `InformerWatch`. */
export interface InformerWatchOptions {
  clock: Clock;
  /** `ccm_kube_requests_total` (`verb`, `resource`, `code`). */
  requests: Counter;
  /** Resource name for metrics (`nodes`). */
  resource: string;
  /** Collection path to watch (`/api/v1/nodes`). */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** End a watch that has been silent this long (BOOKMARKs count as activity). */
  idleTimeoutMs: number;
  /** Applies one event; returns how the watch ends when the event ends it. */
  apply(type: string, obj: unknown): WatchEnd | undefined;
  /** Called once a watch is established. */
  opened(): void;
  /** Told of each watch's permission: a 403 becomes its refusal error, an opened watch proves `watch`. */
  permissions?: PermissionObserver;
}

/** Opens watches of one resource for an informer. */
export class InformerWatch {
  readonly #options: InformerWatchOptions;
  readonly #watch: Watch;

  constructor(kc: KubeConfig, options: InformerWatchOptions) {
    this.#options = options;
    this.#watch = new Watch(kc);
    // Typed private in client-node, but it is the only knob for the watch's silence timeout.
    Reflect.set(this.#watch, "requestTimeoutMs", options.idleTimeoutMs);
  }

  /**
   * One watch from `resourceVersion`, ended by the server, an error, `signal`, or silence: under Deno,
   * client-node's watch never notices a connection reset (nor its own timeout), so a watchdog ends a watch
   * that has been silent for `idleTimeoutMs` and the caller resumes it from the same resourceVersion.
   */
  async run(resourceVersion: string, signal: AbortSignal): Promise<WatchEnd> {
    if (signal.aborted) return { kind: "aborted" };
    const clock = this.#options.clock;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    let lastActivity = clock.monotonic();
    const watching = this.#open(resourceVersion, stop.signal, () => (lastActivity = clock.monotonic()));
    const watchdog = this.#watchdog(stop.signal, () => lastActivity);
    const end = await Promise.race([watching, watchdog]);
    stop.abort();
    signal.removeEventListener("abort", onAbort);
    await Promise.all([watching, watchdog]);
    return end;
  }

  async #watchdog(stop: AbortSignal, lastActivity: () => number): Promise<WatchEnd> {
    const { clock, idleTimeoutMs } = this.#options;
    try {
      for (;;) {
        const silentMs = clock.monotonic() - lastActivity();
        if (silentMs >= idleTimeoutMs) return { kind: "closed", events: 1, startedAt: 0 };
        await clock.sleep(idleTimeoutMs - silentMs, stop);
      }
    } catch {
      return { kind: "aborted" };
    }
  }

  #open(resourceVersion: string, stop: AbortSignal, onActivity: () => void): Promise<WatchEnd> {
    const startedAt = this.#options.clock.monotonic();
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
        const end = this.#options.apply(type, obj);
        if (end) finish(end);
      };
      const onDone = (err: unknown) => {
        this.#count(err);
        if (!err) finish({ kind: "closed", events, startedAt });
        else if (err instanceof Error && err.name === "TimeoutError") {
          finish({ kind: "closed", events: 1, startedAt });
        } else if (statusCode(err) === 410) finish({ kind: "gone" });
        else if (statusCode(err) === 403) {
          finish({ kind: "error", error: this.#options.permissions?.denied("GET", this.#url()) ?? err });
        } else finish({ kind: "error", error: err });
      };
      const params = this.#params(resourceVersion);
      this.#watch.watch(this.#options.path, params, onEvent, onDone).then((c) => {
        controller = c;
        if (settled) c.abort();
        else {
          onActivity();
          this.#options.permissions?.allowed("GET", this.#url());
          this.#options.opened();
        }
      }, (e: unknown) => finish({ kind: "error", error: e }));
    });
  }

  #params(resourceVersion: string): Record<string, string | boolean | number> {
    const params: Record<string, string | boolean | number> = {
      resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: watchTimeoutSeconds(this.#options.idleTimeoutMs),
    };
    if (this.#options.labelSelector) params.labelSelector = this.#options.labelSelector;
    if (this.#options.fieldSelector) params.fieldSelector = this.#options.fieldSelector;
    return params;
  }

  /** The watch's URL as far as its permission goes (path, `watch`, selectors), for `permissions`. */
  #url(): string {
    const url = new URL(this.#options.path, "https://kubernetes.default.svc");
    url.searchParams.set("watch", "true");
    if (this.#options.fieldSelector) url.searchParams.set("fieldSelector", this.#options.fieldSelector);
    return url.toString();
  }

  #count(err: unknown): void {
    const code = err ? String(statusCode(err) ?? "error") : "200";
    this.#options.requests.inc({ verb: "watch", resource: this.#options.resource, code });
  }
}

function statusCode(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const { statusCode, code } = err as { statusCode?: unknown; code?: unknown };
  if (typeof statusCode === "number") return statusCode;
  return typeof code === "number" ? code : undefined;
}

/**
 * The server-side timeout of a watch: 60-80 % of the silence watchdog, randomised to spread reconnects. The
 * apiserver sends a bookmark just before a watch's timeout (and otherwise only about once a minute), so each
 * watch ends cleanly with the current resourceVersion before the watchdog could take it for dead, and the next
 * one resumes from there. Client-go's 5-10 min timeout would leave an idle watch silent past the watchdog
 * (which catches resets client-node does not see under Deno): restarted before any bookmark, it kept the
 * resourceVersion of the last real event, and once the apiserver's history no longer held that version every
 * restart was answered 410 and every object listed again, every few minutes on an idle cluster
 * (docs/measurements.md, "Watch timeouts").
 */
export function watchTimeoutSeconds(idleTimeoutMs: number, random: () => number = Math.random): number {
  return Math.max(1, Math.floor((idleTimeoutMs / 1000) * (0.6 + 0.2 * random())));
}

/** The model of a parsed wire object of `apiVersion`/`kind`, as `loadYaml` would build it from its text. */
export function fromWire<T>(raw: unknown, apiVersion: string, kind: string): T {
  const obj = { ...(raw as object), apiVersion, kind };
  return ObjectSerializer.deserialize(obj, getSerializationType(apiVersion, kind)) as T;
}
