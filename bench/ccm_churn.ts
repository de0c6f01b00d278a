/**
 * Churn: a fraction of the Nodes replaced every minute (a Node and its Linode deleted, a new Linode and Node
 * in the same pool registered at once), evenly spaced, in a seeded random order, while the window counts the
 * CCM's Linode calls. Afterwards the cluster must converge: every new Node initialised and routed, every
 * NodeBalancer over the current pool.
 */
import { isAbort, systemClock } from "../common/clock.ts";
import { type Cluster, measureWindow, waitConverged, type WindowResult } from "./ccm_steady.ts";
import type { CcmWorld } from "./ccm_world.ts";

/** What a churn window measured. */
export interface ChurnResult extends WindowResult {
  /** Nodes replaced during the window. */
  readonly replaced: number;
  /** Of those, Nodes in the load-balancer pool. */
  readonly poolReplaced: number;
}

/** A small deterministic PRNG (mulberry32), so every run replaces the same Nodes. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Replaces `fraction` of the Nodes per minute until `signal` aborts; returns how many (and of the pool). */
async function drive(world: CcmWorld, fraction: number, signal: AbortSignal) {
  const rand = random(20);
  const intervalMs = 60_000 / (fraction * world.nodes.size);
  const start = performance.now();
  let replaced = 0;
  let poolReplaced = 0;
  while (!signal.aborted) {
    const due = start + (replaced + 1) * intervalMs;
    try {
      await systemClock.sleep(Math.max(0, due - performance.now()), signal);
    } catch (e) {
      if (isAbort(e, signal)) break;
      throw e;
    }
    const names = [...world.nodes.keys()];
    const name = names[Math.floor(rand() * names.length)] ?? "";
    if (world.replaceNode(name).eligible) poolReplaced++;
    replaced++;
  }
  return { replaced, poolReplaced };
}

/** Measures a converged cluster over `windowSec` while `fraction` of its Nodes are replaced per minute. */
export async function measureChurn(
  cluster: Cluster,
  windowSec: number,
  fraction: number,
): Promise<ChurnResult> {
  let counts = { replaced: 0, poolReplaced: 0 };
  const result = await measureWindow(cluster, windowSec, async (signal) => {
    counts = await drive(cluster.world, fraction, signal);
  });
  await waitConverged(cluster.world, cluster.ccm, 120_000);
  return { ...result, ...counts };
}
