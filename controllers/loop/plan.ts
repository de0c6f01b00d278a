/**
 * The plan: what the controllers would do (`--dry-run`) or just did (a normal run). Every write path names its
 * action to the reconcile's `PlanScope` before writing: in dry-run `hold` answers true and the caller skips
 * the write (and its write-through, so the next reconcile still sees the drift); in a normal run it answers
 * false and the action is kept in a short history of what was carried out.
 *
 * A reconcile runs `within` a scope (a Node's name, a Service's key, the route pass): the actions it held
 * replace the scope's previous ones when it succeeds, so an action that is no longer needed (someone else
 * fixed the drift) leaves the plan, and one that persists is logged once, when it first appears, not at
 * every resync. A reconcile that fails leaves the scope's actions as they were: on doubt the plan stays.
 */
import type { Clock } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Gauge, Registry } from "../../common/metrics.ts";

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

/** One reconcile's part of the plan. */
export interface PlanScope {
  /** True in shadow mode. */
  readonly dryRun: boolean;
  /** Names an action about to be taken; true when the caller must not take it (dry run). */
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

/** The scope of a run without a recorder (unit tests of one controller): every write goes ahead. */
export const LIVE_SCOPE: PlanScope = { dryRun: false, hold: () => false };

/** Options of `PlanRecorder`. */
export interface PlanRecorderOptions {
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

/** The plan of one process: pending actions by scope, the history of a normal run, the gauge. */
export class PlanRecorder {
  readonly dryRun: boolean;
  readonly #o: PlanRecorderOptions;
  /** `controller\0scope` → action identity → action. */
  readonly #scopes = new Map<string, Map<string, PlannedAction>>();
  readonly #history: PlannedAction[] = [];
  readonly #gauge: Gauge;
  /** Gauge series set so far, so one that empties is set to 0 instead of lingering. */
  readonly #series = new Set<string>();

  constructor(options: PlanRecorderOptions) {
    this.dryRun = options.dryRun;
    this.#o = options;
    this.#gauge = options.metrics.gauge(
      "ccm_plan_pending_actions",
      "Actions the controllers would take (--dry-run), by controller and action",
      ["controller", "action"],
    );
  }

  /** Runs one reconcile of `scope`; what it holds replaces the scope's actions once it resolves. */
  async within<T>(controller: string, scope: string, run: (plan: PlanScope) => Promise<T>): Promise<T> {
    const held = new Map<string, PlannedAction>();
    const previous = this.#scopes.get(`${controller}\0${scope}`);
    const plan: PlanScope = {
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
    const result = await run(plan);
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

/** `recorder.within(…)`, or `run(LIVE_SCOPE)` for a controller wired without a recorder. */
export function runWithin<T>(
  recorder: PlanRecorder | undefined,
  where: { controller: string; scope: string },
  run: (plan: PlanScope) => Promise<T>,
): Promise<T> {
  return recorder ? recorder.within(where.controller, where.scope, run) : run(LIVE_SCOPE);
}
