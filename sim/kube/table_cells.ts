/** Building blocks of server-side printing: column definitions, ages, label lists, narrowing of stored JSON. */
import { isRecord, type KubeObject } from "./resources.ts";

/** One `meta.k8s.io` `TableColumnDefinition`; the apiserver always writes all five fields. */
export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** How one resource prints: its columns and the cells of one object's row. */
export interface Printer {
  readonly columns: readonly ColumnDefinition[];
  /** Every column's cell, wide ones included: the apiserver always prints wide and kubectl hides priority > 0. */
  cells(obj: KubeObject, nowMs: number): unknown[];
  /** Row conditions (only pods have them). */
  conditions?(obj: KubeObject): unknown[] | undefined;
  /** The generic convertor leaves `rows` null for an empty list; typed printers send `[]`. */
  readonly nullRowsWhenEmpty?: boolean;
}

/** A column definition; `priority: 1` columns are the ones kubectl shows only with `-o wide`. */
export function column(
  name: string,
  description: string,
  options: { type?: string; format?: string; priority?: number } = {},
): ColumnDefinition {
  return {
    name,
    type: options.type ?? "string",
    format: options.format ?? "",
    description,
    priority: options.priority ?? 0,
  };
}

/** The NAME column every printer starts with. */
export const NAME_COLUMN = column("Name", "Name of the object, unique within its namespace.", {
  format: "name",
});
/** The AGE column. */
export const AGE_COLUMN = column("Age", "Time since the object's creationTimestamp.");

/** A record field of stored JSON, or an empty record. */
export function rec(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

/** An array field of stored JSON, or an empty array. */
export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A string field of stored JSON, or "" (Go's zero value). */
export function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A numeric field of stored JSON, or 0. */
export function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Epoch ms of an RFC 3339 timestamp, or undefined for an absent or zero time. */
export function parseTime(value: unknown): number | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) || value.startsWith("0001-01-01") ? undefined : ms;
}

/**
 * apimachinery's `HumanDuration`: about two significant figures, `<invalid>` when more than a second in
 * the future (clock skew of up to two seconds reads as `0s`).
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** Time since a timestamp as the printers show it; `<unknown>` for an absent one. */
export function since(timestamp: unknown, nowMs: number): string {
  const at = parseTime(timestamp);
  return at === undefined ? "<unknown>" : humanDuration(nowMs - at);
}

/** The AGE cell of an object. */
export function age(obj: KubeObject, nowMs: number): string {
  return since(obj.metadata.creationTimestamp, nowMs);
}

/** `labels.FormatLabels`: `k=v` pairs sorted by key, or `<none>`. */
export function formatLabels(labels: unknown): string {
  const entries = Object.entries(rec(labels)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? "<none>" : entries.map(([k, v]) => `${k}=${str(v)}`).join(",");
}

/** A Go `sets.String` listing: unique and sorted. */
export function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

/** `net.JoinHostPort`: brackets around IPv6 hosts. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
