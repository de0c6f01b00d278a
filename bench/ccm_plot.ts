/**
 * The plot in docs/measurements.md: Linode calls per minute against cluster size, ours measured beside the Go
 * CCM's model.
 */
import type { CcmResults } from "./ccm_results.ts";
import { LB_POOL } from "./ccm_world.ts";
import { goChurnCallsPerMin, goSteadyCallsPerMin } from "./go_model.ts";
import { renderLogLogSvg } from "./svg_plot.ts";

/** Sizes the model lines are drawn through (the measured sizes are added). */
const MODEL_SIZES = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000];

/** Calls per minute never measured as 0 on a log axis: zero is drawn at this floor instead. */
const FLOOR = 0.01;

function sizes(measured: readonly number[]): number[] {
  const all = new Set([...MODEL_SIZES, ...measured]);
  const [lo, hi] = [Math.min(...measured), Math.max(...measured)];
  return [...all].filter((n) => n >= lo && n <= hi).sort((a, b) => a - b);
}

/** Measured points, zero drawn at `FLOOR`; the name says so when it happened. */
function measured(
  name: string,
  points: (readonly [number, number])[],
): { name: string; points: [number, number][] } {
  const zero = points.some(([, y]) => y <= 0);
  return {
    name: zero ? `${name} (0 drawn at ${FLOOR})` : name,
    points: points.map(([x, y]) => [x, Math.max(FLOOR, y)]),
  };
}

/** The SVG document of `calls_per_minute.svg`. */
export function plotCallsPerMinute(r: CcmResults): string {
  const steadySizes = r.steady.map((s) => s.nodes);
  const churnSizes = r.churn.map((c) => c.nodes);
  const churnModel = (n: number) =>
    goChurnCallsPerMin(n, {
      services: r.services,
      backends: Math.min(n, LB_POOL),
      fraction: r.churnFraction,
    });
  const churnLabel = `churn ${r.churnFraction * 100} %/min`;
  return renderLogLogSvg({
    title: `Linode API calls per minute, 1 VPC with routes, ${r.services} LoadBalancer Services`,
    xLabel: "Nodes",
    yLabel: "Linode calls per minute",
    series: [
      {
        ...measured("ours, steady (measured)", r.steady.map((s) => [s.nodes, s.window.callsPerMin])),
        color: "#1f77b4",
      },
      {
        name: "Go CCM, steady (model)",
        color: "#1f77b4",
        dashed: true,
        points: sizes(steadySizes).map((n) => [n, goSteadyCallsPerMin(n, r.services)]),
      },
      {
        ...measured(`ours, ${churnLabel} (measured)`, r.churn.map((c) => [c.nodes, c.window.callsPerMin])),
        color: "#d62728",
      },
      {
        name: `Go CCM, ${churnLabel} (model)`,
        color: "#d62728",
        dashed: true,
        points: churnSizes.length ? sizes(churnSizes).map((n) => [n, churnModel(n)]) : [],
      },
    ],
  });
}
