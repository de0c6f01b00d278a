/**
 * A log-log line plot as SVG text, with no dependency: decade grid lines, labelled axes, one polyline with
 * markers per series and a legend. The bench draws Linode calls per minute against cluster size with it.
 */

/** One line of the plot. */
export interface Series {
  readonly name: string;
  readonly color: string;
  /** Dashed line (the Go CCM's model lines). */
  readonly dashed?: boolean;
  /** Points with x, y > 0; others are left out (a log axis has no zero). */
  readonly points: readonly (readonly [number, number])[];
}

/** What to draw. */
export interface LogLogPlot {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
}

const W = 720;
const H = 440;
const M = { left: 70, right: 20, top: 40, bottom: 120 };

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The decades covering `values`: [10^lo, 10^hi]. */
function decades(values: readonly number[]): [number, number] {
  const logs = values.map(Math.log10);
  const lo = Math.floor(Math.min(...logs));
  const hi = Math.ceil(Math.max(...logs));
  return [lo, hi > lo ? hi : lo + 1];
}

function tickLabel(exp: number): string {
  const v = 10 ** exp;
  return v >= 1 ? v.toLocaleString("en-US") : String(Number(v.toPrecision(1)));
}

/** Renders the plot as a standalone SVG document. */
export function renderLogLogSvg(plot: LogLogPlot): string {
  const usable = plot.series.map((s) => ({ ...s, points: s.points.filter(([x, y]) => x > 0 && y > 0) }));
  const all = usable.flatMap((s) => s.points);
  if (all.length === 0) throw new RangeError("Cannot plot: no point above zero");
  const [x0, x1] = decades(all.map(([x]) => x));
  const [y0, y1] = decades(all.map(([, y]) => y));
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const sx = (x: number) => M.left + ((Math.log10(x) - x0) / (x1 - x0)) * pw;
  const sy = (y: number) => M.top + ph - ((Math.log10(y) - y0) / (y1 - y0)) * ph;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
    `font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${escape(plot.title)}</text>`,
  ];
  for (let e = x0; e <= x1; e++) {
    const x = sx(10 ** e).toFixed(1);
    out.push(`<line x1="${x}" y1="${M.top}" x2="${x}" y2="${M.top + ph}" stroke="#ddd"/>`);
    out.push(`<text x="${x}" y="${M.top + ph + 16}" text-anchor="middle">${tickLabel(e)}</text>`);
  }
  for (let e = y0; e <= y1; e++) {
    const y = sy(10 ** e).toFixed(1);
    out.push(`<line x1="${M.left}" y1="${y}" x2="${M.left + pw}" y2="${y}" stroke="#ddd"/>`);
    out.push(
      `<text x="${M.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${tickLabel(e)}</text>`,
    );
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#444"/>`);
  out.push(
    `<text x="${M.left + pw / 2}" y="${M.top + ph + 36}" text-anchor="middle">${escape(plot.xLabel)}</text>`,
  );
  const yMid = M.top + ph / 2;
  out.push(
    `<text x="18" y="${yMid}" text-anchor="middle" transform="rotate(-90 18 ${yMid})">${
      escape(plot.yLabel)
    }</text>`,
  );
  usable.forEach((s, i) => {
    const coords = s.points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`);
    const dash = s.dashed ? ` stroke-dasharray="6 4"` : "";
    out.push(
      `<polyline points="${coords.join(" ")}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`,
    );
    for (const c of coords) {
      const [cx, cy] = c.split(",");
      out.push(`<circle cx="${cx}" cy="${cy}" r="3.5" fill="${s.color}"/>`);
    }
    const ly = M.top + ph + 58 + 18 * Math.floor(i / 2);
    const lx = M.left + (i % 2) * (pw / 2);
    out.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 28}" y2="${ly}" stroke="${s.color}" stroke-width="2"${dash}/>`,
    );
    out.push(`<text x="${lx + 34}" y="${ly}" dominant-baseline="middle">${escape(s.name)}</text>`);
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}
