/**
 * What the CCM-process benchmarks measured and the table built from it: the shapes `ccm_report.ts` and its
 * row builders (`ccm_rows.ts`) share, apart from both so that neither imports the other.
 */
import type { CcmLatencyResult } from "./ccm_latency.ts";
import type { ChurnResult } from "./ccm_churn.ts";
import type { WindowResult } from "./ccm_steady.ts";
import type { TakeoverResult } from "./ccm_takeover.ts";
import type { ImportFloor } from "./import_floor.ts";

/** Start-up and steady state of one cluster size. */
export interface SteadyRun {
  readonly nodes: number;
  /** Spawn → `/readyz` 200. */
  readonly readyMs: number;
  /** Spawn → every Node initialised and routed. */
  readonly nodesDoneMs: number;
  /** Services created (after that) → every NodeBalancer complete. */
  readonly servicesDoneMs: number;
  /** Highest resident memory from spawn until the Services were done (absent in runs before it was kept). */
  readonly startPeakRssMiB?: number;
  readonly window: WindowResult;
}

/** Everything the CCM-process benchmarks measured. */
export interface CcmResults {
  readonly startedAt: string;
  readonly deno: string;
  readonly quick: boolean;
  readonly services: number;
  readonly churnFraction: number;
  readonly steady: readonly SteadyRun[];
  readonly churn: readonly { readonly nodes: number; readonly window: ChurnResult }[];
  readonly latency: CcmLatencyResult;
  readonly takeover: TakeoverResult;
  /** The process before any CCM code: runtime, then each client library imported (absent in older runs). */
  readonly importFloor?: ImportFloor;
}

/** One row of the table, with the numbers behind its text. */
export interface ReportRow {
  readonly what: string;
  readonly nodes: number | null;
  readonly ours: string;
  readonly oursValue: number | null;
  readonly go: string;
  readonly goValue: number | null;
  readonly target: string;
  readonly result: "met" | "MISSED" | "";
}

/** The table and its numbered derivation lines. */
export interface CcmReport {
  readonly rows: ReportRow[];
  readonly notes: string[];
}
