/** What the `cloud-node-lifecycle` controller is given and keeps between passes. */
import type { V1Node } from "@kubernetes/client-node";
import type { InstanceIndex } from "../../cache/instance_index.ts";
import type { LinodeInstance, Snapshot } from "../../cache/types.ts";
import type { Clock } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { EventSink } from "../../kube/events.ts";
import type { Registry } from "../../common/metrics.ts";
import type { PlanRecorder } from "../loop/plan.ts";
import type { NodePatch } from "./addresses.ts";
import type { SettledInputs } from "../loop/settled.ts";

/** Nodes as the informer holds them. `Informer<V1Node>` implements it. */
export interface LifecycleNodeLister {
  list(): readonly V1Node[];
  /** Node events; with it, the controller skips passes over Nodes and Linodes that did not change. */
  onChange?(handler: (kind: "add" | "update" | "delete", node: V1Node) => void): () => void;
}

/** The cached Linodes. `InstanceCache` implements it. */
export interface LifecycleInstances {
  view(options?: { maxAgeMs?: number }): Promise<Snapshot<InstanceIndex>>;
  recordInstance(instance: LinodeInstance): void;
  /** Write-through after a direct GET answered 404. */
  forgetInstance(id: number): void;
}

/** A direct read of one Linode; rejects with a `LinodeApiError` of kind `not_found` when it does not exist. */
export interface InstanceGetter {
  get(linodeId: number): Promise<LinodeInstance>;
}

/** Fenced Node writes. */
export interface LifecycleNodeWriter {
  /** Merge patch; includes `metadata.resourceVersion` when given so a concurrent change answers 409. */
  patchNode(name: string, patch: NodePatch): Promise<unknown>;
  /** Deletes with uid and resourceVersion preconditions. */
  deleteNode(name: string, preconditions: { uid: string; resourceVersion: string }): Promise<unknown>;
}

/** What the lifecycle controller needs. */
export interface LifecycleDeps {
  nodes: LifecycleNodeLister;
  instances: LifecycleInstances;
  linode: InstanceGetter;
  writer: LifecycleNodeWriter;
  events: EventSink;
  log: Logger;
  metrics: Registry;
  clock: Clock;
  /** Where each pass names its writes (`--dry-run` holds them); default: every write goes ahead. */
  plan?: PlanRecorder;
}

/** Options of the lifecycle controller. */
export interface LifecycleOptions {
  /** `--node-monitor-period` (default 5 s). */
  monitorPeriodMs?: number;
  /** Share of Linode Nodes that may look gone in one pass before deletions are blocked (default 0.5). */
  maxDeletionShare?: number;
  /** Oldest cache data that may justify a taint or a deletion (default 60 s). */
  maxCacheAgeMs?: number;
}

/** State kept between passes (so a blocked mass deletion is reported once, not every 5 s). */
export interface LifecycleState {
  lastBlocked?: string;
  /**
   * Linodes a direct GET answered 404 for: an id is never reused, so a Node whose deletion is held (dry run)
   * or failed costs no second GET.
   */
  gone?: Set<number>;
  /** What a pass reads of each Node, and the inputs of the last pass that settled (kept from Node events). */
  inputs?: SettledInputs;
}
