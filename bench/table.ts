/** Result tables: one shape for the printed text and the `--json` file, plus the statistics they show. */

/** A cell: numbers are right-aligned and rounded for display, kept exact in JSON. */
export type Cell = string | number;

/** One benchmark's results: a title, column headers with units, rows and footnotes. */
export interface Table {
  title: string;
  columns: string[];
  rows: Cell[][];
  notes?: string[];
}

/** p50, p95 and max of a sample, in its own unit. */
export interface Summary {
  p50: number;
  p95: number;
  max: number;
}

/** The `q`-quantile (0..1) of `values` by nearest rank; NaN for an empty sample. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] ?? NaN;
}

/** p50, p95 and max of `values`. */
export function summarize(values: readonly number[]): Summary {
  return { p50: quantile(values, 0.5), p95: quantile(values, 0.95), max: quantile(values, 1) };
}

/** Rounds for display: 3 significant digits below 100, whole numbers above. */
function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return "-";
  if (Number.isInteger(n) || Math.abs(n) >= 100) return Math.round(n).toLocaleString("en-US");
  return Number(n.toPrecision(3)).toString();
}

function cellText(cell: Cell): string {
  return typeof cell === "number" ? formatNumber(cell) : cell;
}

/** Renders a table as column-aligned plain text: title, header, rule, rows, then notes. */
export function renderTable(table: Table): string {
  const texts = table.rows.map((row) => table.columns.map((_, i) => cellText(row[i] ?? "")));
  const widths = table.columns.map((c, i) => Math.max(c.length, ...texts.map((row) => row[i]?.length ?? 0)));
  const numeric = table.columns.map((_, i) => table.rows.some((r) => typeof r[i] === "number"));
  const line = (cells: string[]) =>
    cells.map((c, i) => numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)).join("  ")
      .trimEnd();
  const out = [
    table.title,
    "",
    line(table.columns),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...texts.map(line),
  ];
  for (const note of table.notes ?? []) out.push(`  * ${note}`);
  return out.join("\n") + "\n";
}
