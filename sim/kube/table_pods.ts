/** Pod rows as kube-apiserver prints them: READY, STATUS (phase refined by container states), RESTARTS. */
import type { KubeObject } from "./resources.ts";
import {
  age,
  AGE_COLUMN,
  arr,
  column,
  NAME_COLUMN,
  num,
  parseTime,
  type Printer,
  rec,
  since,
  str,
} from "./table_cells.ts";

const WIDE = { priority: 1 } as const;

type Json = Record<string, unknown>;

interface PodSummary {
  reason: string;
  ready: number;
  total: number;
  restarts: number;
  lastRestartMs: number | undefined;
}

function later(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.max(a, b);
}

function lastTermination(status: Json): number | undefined {
  return parseTime(rec(rec(status.lastState).terminated).finishedAt);
}

function terminatedReason(terminated: Json, prefix: string): string {
  if (str(terminated.reason) !== "") return prefix + str(terminated.reason);
  const signal = num(terminated.signal);
  return signal !== 0 ? `${prefix}Signal:${signal}` : `${prefix}ExitCode:${num(terminated.exitCode)}`;
}

interface InitWalk {
  /** An init container still blocks the pod; its Init:… reason. */
  blockedReason: string | undefined;
  restarts: number;
  lastRestartMs: number | undefined;
  restartableRestarts: number;
  restartableLastMs: number | undefined;
}

function blockedInitReason(state: Json, index: number, total: number): string {
  if (state.terminated !== undefined) return terminatedReason(rec(state.terminated), "Init:");
  const why = str(rec(state.waiting).reason);
  return why !== "" && why !== "PodInitializing" ? `Init:${why}` : `Init:${index}/${total}`;
}

/** Walks init containers up to the first one that blocks, as upstream does (it stops counting there). */
function walkInit(pod: KubeObject, sum: PodSummary, restartable: Set<string>): InitWalk {
  const walk: InitWalk = {
    blockedReason: undefined,
    restarts: 0,
    lastRestartMs: undefined,
    restartableRestarts: 0,
    restartableLastMs: undefined,
  };
  const total = arr(rec(pod.spec).initContainers).length;
  for (const [i, c] of arr(rec(pod.status).initContainerStatuses).map(rec).entries()) {
    const isRestartable = restartable.has(str(c.name));
    walk.restarts += num(c.restartCount);
    walk.lastRestartMs = later(walk.lastRestartMs, lastTermination(c));
    if (isRestartable) {
      walk.restartableRestarts += num(c.restartCount);
      walk.restartableLastMs = later(walk.restartableLastMs, lastTermination(c));
    }
    const state = rec(c.state);
    if (state.terminated !== undefined && num(rec(state.terminated).exitCode) === 0) continue;
    if (isRestartable && c.started === true) {
      if (c.ready === true) sum.ready++;
      continue;
    }
    walk.blockedReason = blockedInitReason(state, i, total);
    break;
  }
  return walk;
}

function summarize(pod: KubeObject): PodSummary {
  const status = rec(pod.status);
  const spec = rec(pod.spec);
  const restartable = new Set(
    arr(spec.initContainers).map(rec).filter((c) => c.restartPolicy === "Always").map((c) => str(c.name)),
  );
  const sum: PodSummary = {
    reason: str(status.reason) || str(status.phase),
    ready: 0,
    total: arr(spec.containers).length + restartable.size,
    restarts: 0,
    lastRestartMs: undefined,
  };
  const conditions = arr(status.conditions).map(rec);
  if (conditions.some((c) => c.type === "PodScheduled" && c.reason === "SchedulingGated")) {
    sum.reason = "SchedulingGated";
  }
  const init = walkInit(pod, sum, restartable);
  if (init.blockedReason !== undefined) sum.reason = init.blockedReason;
  const initialized = conditions.some((c) => c.type === "Initialized" && c.status === "True");
  if (init.blockedReason !== undefined && !initialized) {
    sum.restarts = init.restarts;
    sum.lastRestartMs = init.lastRestartMs;
    return sum;
  }
  sum.restarts = init.restartableRestarts;
  sum.lastRestartMs = init.restartableLastMs;
  summarizeContainers(status, conditions, sum);
  return sum;
}

function summarizeContainers(status: Json, conditions: Json[], sum: PodSummary): void {
  let hasRunning = false;
  for (const c of arr(status.containerStatuses).map(rec).reverse()) {
    sum.restarts += num(c.restartCount);
    sum.lastRestartMs = later(sum.lastRestartMs, lastTermination(c));
    const state = rec(c.state);
    const waiting = str(rec(state.waiting).reason);
    if (waiting !== "") sum.reason = waiting;
    else if (state.terminated !== undefined) sum.reason = terminatedReason(rec(state.terminated), "");
    else if (c.ready === true && state.running !== undefined) {
      hasRunning = true;
      sum.ready++;
    }
  }
  if (sum.reason === "Completed" && hasRunning) {
    const ready = conditions.some((c) => c.type === "Ready" && c.status === "True");
    sum.reason = ready ? "Running" : "NotReady";
  }
}

function podStatus(pod: KubeObject, sum: PodSummary): string {
  const phase = str(rec(pod.status).phase);
  if (pod.metadata.deletionTimestamp === undefined) return sum.reason;
  if (str(rec(pod.status).reason) === "NodeLost") return "Unknown";
  return phase === "Succeeded" || phase === "Failed" ? sum.reason : "Terminating";
}

function readinessGates(pod: KubeObject): string {
  const gates = arr(rec(pod.spec).readinessGates).map(rec);
  if (gates.length === 0) return "<none>";
  const conditions = arr(rec(pod.status).conditions).map(rec);
  const met = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === "True");
  return `${met.length}/${gates.length}`;
}

/** Pods. */
export const POD_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column("Ready", "Ready containers out of all containers."),
    column("Status", "Aggregate status of the pod's containers."),
    column("Restarts", "Container restarts, and how long ago the last one was."),
    AGE_COLUMN,
    column("IP", "First IP address of the pod.", WIDE),
    column("Node", "Node the pod is bound to.", WIDE),
    column("Nominated Node", "Node the scheduler nominated for preemption.", WIDE),
    column("Readiness Gates", "Readiness gates that are met out of all of them.", WIDE),
  ],
  cells(pod, nowMs) {
    const sum = summarize(pod);
    const status = rec(pod.status);
    const restarts = sum.restarts !== 0 && sum.lastRestartMs !== undefined
      ? `${sum.restarts} (${since(new Date(sum.lastRestartMs).toISOString(), nowMs)} ago)`
      : String(sum.restarts);
    return [
      pod.metadata.name ?? "",
      `${sum.ready}/${sum.total}`,
      podStatus(pod, sum),
      restarts,
      age(pod, nowMs),
      str(rec(arr(status.podIPs)[0]).ip) || "<none>",
      str(rec(pod.spec).nodeName) || "<none>",
      str(status.nominatedNodeName) || "<none>",
      readinessGates(pod),
    ];
  },
  conditions(pod) {
    const phase = str(rec(pod.status).phase);
    if (phase !== "Succeeded" && phase !== "Failed") return undefined;
    const message = phase === "Succeeded" ? "The pod completed successfully." : "The pod failed.";
    return [{ type: "Completed", status: "True", reason: phase, message }];
  },
};
