/**
 * core/v1 Events as client-go's recorder writes them: a per-object token bucket drops spam, a repeat of the same
 * event PATCHes `count` and `lastTimestamp` instead of creating another, and nothing ever throws into the caller.
 */
import {
  type CoreV1Api,
  type CoreV1Event,
  PatchStrategy,
  setHeaderOptions,
  type V1ObjectReference,
} from "@kubernetes/client-node";
import { type Clock, systemClock } from "../common/clock.ts";
import { LeaseLostError } from "../common/write_guard.ts";
import { type Logger, redactSecrets } from "../common/log.ts";
import { isNotFound } from "./requests.ts";

/** The object an Event is about. */
export interface ObjectRef {
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
}

/** Event severity, as Kubernetes spells it. */
export type EventType = "Normal" | "Warning";

/** What controllers need to report outcomes; `EventRecorder` implements it. */
export interface EventSink {
  /** Records an Event in the background; never throws. */
  event(ref: ObjectRef, type: EventType, reason: string, message: string): void;
}

/** Options of an `EventRecorder`. */
export interface EventRecorderOptions {
  log: Logger;
  clock?: Clock;
  /** `source.component` and `reportingComponent` (default `cloud-controller-manager`). */
  component?: string;
  /** `source.host` and `reportingInstance`. */
  host?: string;
  /** Secrets to redact from every message (asked per Event, so rotated tokens are covered). */
  secrets?: () => readonly string[];
  /** Token bucket per object, like client-go's spam filter: burst (default 25) … */
  burst?: number;
  /** … and one token back per this many ms (default 300 000: client-go's 1/300 qps). */
  refillEveryMs?: number;
  /** Recently written Events remembered for aggregation, and objects' buckets kept, each (default 4096). */
  maxCached?: number;
  /** Events waiting to be written beyond this are dropped (default 1000). */
  maxPending?: number;
  /**
   * `--dry-run`: no Event is written (the helpers that record one also log it). Dropped here rather than
   * refused by the client's guard, which reports every write it sees as a bug.
   */
  dryRun?: boolean;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** An Event waiting in the queue, its message already redacted and cut. */
interface PendingEvent {
  ref: ObjectRef;
  type: EventType;
  reason: string;
  message: string;
  component: string;
}

interface Written {
  name: string;
  namespace: string;
  count: number;
}

/** Kubernetes caps Event messages at 1 KiB. */
const MAX_MESSAGE_CHARS = 1024;

/** The reference an Event should carry for `obj` (Node: `refFor(node, "Node")`). */
export function refFor(
  obj: { metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string } },
  kind: string,
  apiVersion = "v1",
): ObjectRef {
  const m = obj.metadata ?? {};
  return {
    kind,
    apiVersion,
    name: m.name ?? "",
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
  };
}

/**
 * Writes core/v1 Events with client-go's spam filter and aggregation; see `flush()` for shutdown and tests.
 * Leadership is the client's business: `core` from `makeKubeClients` with a fence refuses every write.
 */
export class EventRecorder implements EventSink {
  readonly #core: CoreV1Api;
  readonly #options: EventRecorderOptions;
  readonly #clock: Clock;
  readonly #component: string;
  readonly #buckets = new Map<string, Bucket>();
  readonly #written = new Map<string, Written>();
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;
  #seq = 0;

  constructor(core: CoreV1Api, options: EventRecorderOptions) {
    this.#core = core;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#component = options.component ?? "cloud-controller-manager";
  }

  event(ref: ObjectRef, type: EventType, reason: string, message: string): void {
    this.#record(this.#component, { ref, type, reason, message });
  }

  /**
   * The same recorder (spam filter, aggregation, queue) writing as another `source.component`, as each
   * upstream controller has its own (`cloud-node-lifecycle-controller`).
   */
  forComponent(component: string): EventSink {
    return { event: (ref, type, reason, message) => this.#record(component, { ref, type, reason, message }) };
  }

  #record(
    component: string,
    e: { ref: ObjectRef; type: EventType; reason: string; message: string },
  ): void {
    const { ref, type, reason, message } = e;
    if (this.#options.dryRun) {
      this.#options.log.debug("dry run: event {reason} for {kind} {name} not written", {
        reason,
        ...names(ref),
      });
      return;
    }
    const text = redactSecrets(message, this.#options.secrets?.() ?? []).slice(0, MAX_MESSAGE_CHARS);
    if (!this.#takeToken(ref)) {
      this.#options.log.debug("dropped event {reason} for {kind} {name}: rate limited", {
        reason,
        ...names(ref),
      });
      return;
    }
    if (this.#pending >= (this.#options.maxPending ?? 1000)) {
      this.#options.log.warning("dropped event {reason} for {kind} {name}: queue full", {
        reason,
        ...names(ref),
      });
      return;
    }
    this.#pending++;
    const event = { ref, type, reason, message: text, component };
    this.#tail = this.#tail.then(() => this.#write(event)).finally(() => this.#pending--);
  }

  /**
   * Forgets the spam-filter bucket and aggregation entries of a deleted object (by UID): no Event can be
   * aggregated with them again (a re-created object has a new UID), and an operator that creates and deletes
   * Services for ever must not fill the recorder up to its bound.
   */
  forget(uid: string | undefined): void {
    if (!uid) return;
    // Keys are JSON arrays holding the UID as one string element.
    const needle = `,${JSON.stringify(uid)},`;
    const drop = () => {
      for (const map of [this.#buckets, this.#written]) {
        for (const key of map.keys()) if (key.includes(needle)) map.delete(key);
      }
    };
    drop();
    // After the Events still queued (a Service's `DeletedLoadBalancer`, recorded just before it went).
    this.#tail = this.#tail.then(drop);
  }

  /** Resolves when every Event recorded so far has been written (or given up on). */
  flush(): Promise<void> {
    return this.#tail;
  }

  #takeToken(ref: ObjectRef): boolean {
    const key = JSON.stringify([ref.kind, ref.namespace, ref.name, ref.uid, ref.apiVersion]);
    const burst = this.#options.burst ?? 25;
    const refillMs = this.#options.refillEveryMs ?? 300_000;
    const now = this.#clock.monotonic();
    const bucket = this.#buckets.get(key) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) / refillMs);
    bucket.at = now;
    // Like client-go's LRU spam filter: an object not heard of for long starts again with a full bucket.
    keepRecent(this.#buckets, key, bucket, this.#maxCached);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  async #write(e: PendingEvent): Promise<void> {
    const { ref, reason } = e;
    const key = JSON.stringify([
      ref.kind,
      ref.namespace,
      ref.name,
      ref.uid,
      e.type,
      reason,
      e.message,
      e.component,
    ]);
    try {
      const seen = this.#written.get(key);
      if (seen) {
        try {
          await this.#bump(seen);
          this.#remember(key, seen);
          return;
        } catch (e) {
          // The Event expired or was deleted: start a new one, as client-go does.
          if (!isNotFound(e)) throw e;
        }
      }
      this.#remember(key, await this.#create(e));
    } catch (e) {
      const level = e instanceof LeaseLostError ? "debug" : "warning";
      this.#options.log[level]("cannot write event {reason} for {kind} {name}: {error}", {
        reason,
        ...names(ref),
        error: e instanceof Error ? e.message : String(e),
      });
    }
  }

  async #bump(seen: Written): Promise<void> {
    const body = { count: seen.count + 1, lastTimestamp: new Date(this.#clock.now()).toISOString() };
    await this.#core.patchNamespacedEvent(
      { name: seen.name, namespace: seen.namespace, body },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    seen.count += 1;
  }

  async #create(e: PendingEvent): Promise<Written> {
    const { ref, type, reason, message, component } = e;
    const now = new Date(this.#clock.now());
    const namespace = ref.namespace || "default";
    // client-go names Events `<object>.<unix nanoseconds in hex>`; the sequence keeps names unique per ms.
    const suffix = (BigInt(this.#clock.now()) * 1_000_000n + BigInt(this.#seq++ % 1_000_000)).toString(16);
    const involvedObject: V1ObjectReference = { ...ref, namespace: ref.namespace };
    const body: CoreV1Event = {
      metadata: { name: `${ref.name}.${suffix}`, namespace },
      involvedObject,
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component, host: this.#options.host },
      reportingComponent: component,
      reportingInstance: this.#options.host,
    };
    const created = await this.#core.createNamespacedEvent({ namespace, body });
    return { name: created.metadata?.name ?? body.metadata.name ?? "", namespace, count: 1 };
  }

  #remember(key: string, written: Written): void {
    keepRecent(this.#written, key, written, this.#maxCached);
  }

  get #maxCached(): number {
    return this.#options.maxCached ?? 4096;
  }
}

/** Sets `key` as the most recent entry of `map`, dropping the least recent ones beyond `max`. */
function keepRecent<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= max) break;
    map.delete(oldest);
  }
}

function names(ref: ObjectRef): { kind: string; name: string; namespace?: string } {
  return { kind: ref.kind, name: ref.name, namespace: ref.namespace };
}

/** Where `warnEvent` and `normalEvent` report: the component's logger and the Event sink. */
export interface EventOutput {
  log: Logger;
  events: EventSink;
}

/** An outcome to report: `message` is a LogTape template (`"cannot create {label}: {error}"`) over `props`. */
export interface Outcome {
  ref: ObjectRef;
  reason: string;
  message: string;
  props?: Record<string, unknown>;
}

/** Fills `{name}` placeholders from `props`, as LogTape renders the same template. */
export function renderMessage(template: string, props: Record<string, unknown> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => (key in props ? String(props[key]) : whole));
}

/** Writes a Warning Event and the matching `warning` log line together. */
export function warnEvent(out: EventOutput, outcome: Outcome): void {
  out.log.warning(outcome.message, { ...outcome.props, reason: outcome.reason, ...names(outcome.ref) });
  out.events.event(outcome.ref, "Warning", outcome.reason, renderMessage(outcome.message, outcome.props));
}

/** Writes a Normal Event and the matching `info` log line together. */
export function normalEvent(out: EventOutput, outcome: Outcome): void {
  out.log.info(outcome.message, { ...outcome.props, reason: outcome.reason, ...names(outcome.ref) });
  out.events.event(outcome.ref, "Normal", outcome.reason, renderMessage(outcome.message, outcome.props));
}
