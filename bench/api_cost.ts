/**
 * Benchmark 3: Linode API calls of an idle cluster (every Node Ready and initialised), measured with a
 * shortened status period and scaled to an hour at default settings, next to the Go CCM's cost as modelled
 * from its measured behaviour (`/work/shared/reference/route-controller-pr.txt`).
 */
import { systemClock } from "../common/clock.ts";
import { PAGE_SIZE } from "../linode/caller.ts";
import type { DemoWorld } from "../sim/mod.ts";
import { startCcm } from "./ccm_harness.ts";
import type { Cell, Table } from "./table.ts";
import { BENCH_VPC, startBenchWorld } from "./world.ts";

/** Options of `benchApiCost`. */
export interface ApiCostOptions {
  /** Cluster sizes to measure. */
  sizes: readonly number[];
  /** Shortened `--node-status-update-frequency` (and cache TTLs), whole seconds. */
  periodSec: number;
  /** Steady-state window measured per size and mode. */
  windowSec: number;
  /** Called while the largest cluster is still running (the memory benchmark samples here). */
  atLargest?: () => void;
}

/** Default `--node-status-update-frequency`: one steady-state refresh per 5 minutes. */
const DEFAULT_PERIOD_SEC = 300;
const INSTANCE_LIST = "GET /v4/linode/instances";

/**
 * The Go CCM's Linode calls per hour, a model of its documented behaviour, not a measurement. In a VPC its
 * route controller runs every 10 s against a 15 s instance cache, so every 20 s it makes one instance
 * listing, one `GET /vpcs/{id}` and one `GET /linode/instances/{id}/configs` per Node (6 Nodes: 8 calls);
 * outside a VPC it lists instances once per 5-minute node status update.
 */
export function goCcmCallsPerHour(nodes: number, vpc: boolean): number {
  const pages = Math.ceil(nodes / PAGE_SIZE);
  return vpc ? (3600 / 20) * (pages + 1 + nodes) : (3600 / DEFAULT_PERIOD_SEC) * pages;
}

function shortRoute(key: string): string {
  return key.replace(/^GET \/v4(beta)?\//, "").replaceAll("/{id}", "/:id");
}

async function waitUntil(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await systemClock.sleep(20);
  }
}

async function measureMode(
  world: DemoWorld,
  nodes: number,
  vpc: boolean,
  o: ApiCostOptions,
): Promise<Cell[]> {
  const flags = [`--node-status-update-frequency=${o.periodSec}s`, "--concurrent-node-syncs=8"];
  if (vpc) flags.push(`--vpc-names=${BENCH_VPC}`);
  const env = {
    LINODE_INSTANCE_CACHE_TTL: String(o.periodSec),
    LINODE_ROUTES_CACHE_TTL_SECONDS: String(o.periodSec),
  };
  await using h = await startCcm(world, { flags, env });
  const initialised = () =>
    h.ccm.nodes.list().filter((n) => n.spec?.providerID && !n.spec.taints?.length).length === nodes;
  await waitUntil(initialised, `${nodes} nodes initialised`, 120_000);
  // Let the first period's re-sync (addresses from the VPC, if any) settle before counting.
  await systemClock.sleep(o.periodSec * 1000 + 200);
  world.linode.calls.reset();
  await systemClock.sleep(o.windowSec * 1000);
  const snap = world.linode.calls.snapshot();
  if (vpc && nodes === Math.max(...o.sizes)) o.atLargest?.();
  const pages = Math.ceil(nodes / PAGE_SIZE);
  const listings = (snap.counts[INSTANCE_LIST] ?? 0) +
    (snap.counts[INSTANCE_LIST.replace("v4", "v4beta")] ?? 0);
  const refreshes = listings / pages;
  const perRefresh = refreshes > 0 ? snap.total / refreshes : NaN;
  const routes = Object.entries(snap.counts).map(([k, n]) => `${shortRoute(k)} ${n}`).join(", ");
  return [
    nodes,
    vpc ? "yes" : "no",
    refreshes,
    snap.total,
    perRefresh,
    pages,
    (snap.total * 60) / o.windowSec,
    perRefresh * (3600 / DEFAULT_PERIOD_SEC),
    goCcmCallsPerHour(nodes, vpc),
    routes || "-",
  ];
}

async function measureSize(nodes: number, o: ApiCostOptions): Promise<Cell[][]> {
  await using world = await startBenchWorld();
  for (let i = 0; i < nodes; i++) world.addLinode(`node-${i}`);
  for (let i = 0; i < nodes; i++) world.registerNode(`node-${i}`);
  return [await measureMode(world, nodes, false, o), await measureMode(world, nodes, true, o)];
}

/** Measures each size with and without `--vpc-names`; returns the cost table. */
export async function benchApiCost(o: ApiCostOptions): Promise<Table> {
  const rows: Cell[][] = [];
  for (const nodes of o.sizes) rows.push(...await measureSize(nodes, o));
  return {
    title: "Linode API cost in steady state (all Nodes Ready and initialised)",
    columns: [
      "nodes",
      "VPC",
      "refreshes",
      "Linode calls",
      "calls/refresh",
      "ceil(N/500)",
      `calls/min @${o.periodSec}s (measured)`,
      "calls/h @defaults (scaled)",
      "Go CCM calls/h (MODEL)",
      "calls in window by route",
    ],
    rows,
    notes: [
      `measured over ${o.windowSec} s with --node-status-update-frequency=${o.periodSec}s and both cache TTLs ` +
      `${o.periodSec} s; "refreshes" = instance listings / ceil(N/500)`,
      `calls/h @defaults = calls/refresh x 12: one refresh per default 5 m status period (every TTL is shorter)`,
      "VPC yes: --vpc-names=" + BENCH_VPC + " (InternalIPs from the VPC's IP listing), without " +
      "--enable-route-controller: our rows hold no route programming; the Go model's VPC figure is mostly its " +
      "route controller's per-Node config GETs",
      "a listing in flight at the window's edge counts partly (fractional refreshes and calls/refresh)",
      "Go CCM column is a MODEL from its documented behaviour, not a measurement: VPC (route controller on): " +
      "180/h x (ceil(N/500) + 1 GET vpc + N GET configs); no VPC: 12/h x ceil(N/500)",
    ],
  };
}
