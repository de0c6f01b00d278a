/**
 * Shadow mode in one place: the shadow record of what the controllers would do (`--dry-run`, served on `/plan`)
 * or just did (a normal run), and the executors every write goes through. A controller decides a write (a
 * `Write`: its API, how it shows on `/plan`, how it is sent and written through to the cache) and hands it to
 * its API's executor, which records it in the reconcile's scope, holds it in dry run (nothing sent and nothing
 * written through, so the next reconcile still sees the drift), or sends it, writes it through and counts it.
 * No other code holds a write.
 *
 * A reconcile runs `within` a scope (a Node's name, a Service's key, the route pass): the actions it held
 * replace the scope's previous ones when it succeeds, so an action that is no longer needed (someone else
 * fixed the drift) leaves the record, and one that persists is logged once, when it first appears, not at
 * every resync. A reconcile that fails leaves the scope's actions as they were: on doubt the record stays.
 */
import type { Clock } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Counter, Gauge, Registry } from "../../common/metrics.ts";

/** A value shown in a change (never secret material). */
export type PlanValue = string | number | boolean | null | readonly string[];

/** One field an action changes, old and new. */
export interface PlanChange {
  readonly field: string;
  readonly old: PlanValue;
  readonly new: PlanValue;
}

/** An action as a write path names it: what, on which object (`node-4`, `default/web`), which fields. */
export interface ActionSpec {
  /** Kebab case verb and noun: `initialise-node`, `add-ranges`, `update-nodebalancer`. */
  readonly action: string;
  /** `node-4`, `default/web`, `linode 123 interface 7`. */
  readonly object: string;
  /** What is written when it is not the object itself: `nodebalancer 55` for a Service's action. */
  readonly target?: string;
  readonly changes?: readonly PlanChange[];
}

/** An action in the plan (or in the history of a normal run). */
export interface PlannedAction {
  readonly controller: string;
  readonly action: string;
  readonly object: string;
  readonly target?: string;
  readonly changes: readonly PlanChange[];
  /** When it was first decided (RFC 3339). */
  readonly since: string;
}

/** One reconcile's part of the shadow record; only executors ask it. */
export interface ShadowScope {
  /** True in shadow mode. */
  readonly dryRun: boolean;
  /** Names an action about to be taken; true when it must not be taken (dry run). */
  hold(action: ActionSpec): boolean;
}

/** What `GET /plan` answers (before orphaned NodeBalancers are added). */
export interface PlanReport {
  readonly dryRun: boolean;
  /** Dry run: what the controllers would do now. Empty in a normal run. */
  readonly pending: readonly PlannedAction[];
  /** Normal run: the latest actions started (a write that then failed included), oldest first. */
  readonly carriedOut: readonly PlannedAction[];
}

/** Options of `ShadowRecorder`. */
export interface ShadowRecorderOptions {
  dryRun: boolean;
  log: Logger;
  metrics: Registry;
  clock: Clock;
  /** Actions carried out kept for `/plan` in a normal run (default 200). */
  historySize?: number;
}

const DEFAULT_HISTORY = 200;

function identity(a: Omit<PlannedAction, "since">): string {
  return JSON.stringify([a.controller, a.action, a.object, a.target ?? null, a.changes]);
}

function sameWrite(a: PlannedAction, b: PlannedAction): boolean {
  return a.controller === b.controller && a.action === b.action && a.object === b.object &&
    a.target === b.target;
}

function byControllerThenObject(a: PlannedAction, b: PlannedAction): number {
  return a.controller.localeCompare(b.controller) || a.object.localeCompare(b.object) ||
    a.action.localeCompare(b.action);
}

/** The shadow record of one process: pending actions by scope, the history of a normal run, the gauge. */
export class ShadowRecorder {
  readonly dryRun: boolean;
  readonly #o: ShadowRecorderOptions;
  /** `controller\0scope` → action identity → action. */
  readonly #scopes = new Map<string, Map<string, PlannedAction>>();
  readonly #history: PlannedAction[] = [];
  readonly #gauge: Gauge;
  /** Gauge series set so far, so one that empties is set to 0 instead of lingering. */
  readonly #series = new Set<string>();

  constructor(options: ShadowRecorderOptions) {
    this.dryRun = options.dryRun;
    this.#o = options;
    this.#gauge = options.metrics.gauge(
      "ccm_plan_pending_actions",
      "Actions the controllers would take (--dry-run), by controller and action",
      ["controller", "action"],
    );
  }

  /** Runs one reconcile of `scope`; what it holds replaces the scope's actions once it resolves. */
  async within<T>(controller: string, scope: string, run: (scope: ShadowScope) => Promise<T>): Promise<T> {
    const held = new Map<string, PlannedAction>();
    const previous = this.#scopes.get(`${controller}\0${scope}`);
    const shadow: ShadowScope = {
      dryRun: this.dryRun,
      hold: (spec) => {
        const { action: name, object, target } = spec;
        const draft = {
          controller,
          action: name,
          object,
          ...(target ? { target } : {}),
          changes: spec.changes ?? [],
        };
        const id = identity(draft);
        const action = previous?.get(id) ?? held.get(id) ??
          { ...draft, since: new Date(this.#o.clock.now()).toISOString() };
        held.set(id, action);
        if (!this.dryRun) this.#remember(action);
        return this.dryRun;
      },
    };
    const result = await run(shadow);
    if (this.dryRun) this.#commit(controller, scope, held);
    return result;
  }

  /** Drops a scope whose object is gone (a deleted Node): its actions leave the plan. */
  forget(controller: string, scope: string): void {
    if (this.dryRun) this.#commit(controller, scope, new Map());
  }

  /** Pending actions (dry run), sorted by controller and object. */
  pending(): PlannedAction[] {
    const all = [...this.#scopes.values()].flatMap((m) => [...m.values()]);
    return all.sort(byControllerThenObject);
  }

  /** The plan as `GET /plan` shows it. */
  report(): PlanReport {
    return { dryRun: this.dryRun, pending: this.pending(), carriedOut: this.carriedOut() };
  }

  /** The latest actions carried out (normal run), oldest first. */
  carriedOut(): PlannedAction[] {
    return [...this.#history];
  }

  #remember(action: PlannedAction): void {
    this.#history.push(action);
    const max = this.#o.historySize ?? DEFAULT_HISTORY;
    if (this.#history.length > max) this.#history.splice(0, this.#history.length - max);
  }

  #commit(controller: string, scope: string, held: Map<string, PlannedAction>): void {
    const key = `${controller}\0${scope}`;
    const previous = this.#scopes.get(key) ?? new Map<string, PlannedAction>();
    const left = [...previous].filter(([id]) => !held.has(id)).map(([, a]) => a);
    for (const [id, a] of held) {
      if (previous.has(id)) continue;
      // The same write with other fields (a Node more to add): one line saying what it is now.
      const i = left.findIndex((l) => sameWrite(l, a));
      this.#log(i >= 0 ? "changed" : "appeared", a);
      if (i >= 0) left.splice(i, 1);
    }
    for (const a of left) this.#log("left", a);
    if (held.size) this.#scopes.set(key, held);
    else this.#scopes.delete(key);
    this.#updateGauge();
  }

  #log(what: "appeared" | "changed" | "left", a: PlannedAction): void {
    const props = { ...a, target: a.target ?? null };
    const on = a.target ? " ({target})" : "";
    const verb = { appeared: "would", changed: "would now", left: "no longer needs to" }[what];
    this.#o.log.info(`plan: {controller} ${verb} {action} {object}${on}`, props);
  }

  #updateGauge(): void {
    const counts = new Map<string, number>();
    for (const a of this.pending()) {
      const series = JSON.stringify([a.controller, a.action]);
      counts.set(series, (counts.get(series) ?? 0) + 1);
    }
    for (const series of new Set([...this.#series, ...counts.keys()])) {
      const [controller = "", action = ""] = JSON.parse(series) as string[];
      this.#gauge.set({ controller, action }, counts.get(series) ?? 0);
      this.#series.add(series);
    }
  }
}

/** A write a controller decided, as its API's executor takes it. */
export interface Write<T> {
  /** The executor that carries it out. */
  readonly api: "linode" | "kubernetes";
  /** How it shows on `/plan` and in the history (never secret material). */
  readonly action: ActionSpec;
  /** Sends it through the fenced client; resolves to what the API answered. */
  send(): Promise<T>;
  /** Records the answer where later reconciles read (the cache, the controller's own writes). */
  record?(answer: T): void;
}

/** What became of a write: sent (with the answer), or held in dry run. */
export type Applied<T> = { readonly sent: true; readonly answer: T } | { readonly sent: false };

/** The executor of one API: the one place a write is held, sent, written through and counted. */
export class Executor {
  readonly #writes: Counter;

  constructor(readonly api: Write<unknown>["api"], metrics: Registry) {
    this.#writes = metrics.counter(
      "ccm_writes_total",
      "Writes the controllers decided, by API, controller, action and result (held: --dry-run)",
      ["api", "controller", "action", "result"],
    );
  }

  /** Holds `write` when the scope says so (dry run); else sends it, records the answer and counts it. */
  async apply<T>(controller: string, scope: ShadowScope, write: Write<T>): Promise<Applied<T>> {
    const labels = { api: this.api, controller, action: write.action.action };
    if (scope.hold(write.action)) {
      this.#writes.inc({ ...labels, result: "held" });
      return { sent: false };
    }
    let answer: T;
    try {
      answer = await write.send();
    } catch (error) {
      this.#writes.inc({ ...labels, result: "failed" });
      throw error;
    }
    write.record?.(answer);
    this.#writes.inc({ ...labels, result: "sent" });
    return { sent: true, answer };
  }
}

/** One executor per API, shared by every controller of the process. */
export interface Executors {
  readonly linode: Executor;
  readonly kubernetes: Executor;
}

/** The executors of a process, counting into `metrics`. */
export function newExecutors(metrics: Registry): Executors {
  return { linode: new Executor("linode", metrics), kubernetes: new Executor("kubernetes", metrics) };
}

/** A scope where every write goes ahead (a controller's unit tests without a shadow record). */
export const LIVE_SCOPE: ShadowScope = { dryRun: false, hold: () => false };
