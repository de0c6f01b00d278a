/** Keeps the CCM's most recent log lines in memory, so they show in the view's panel and not on the terminal. */
import type { LogRow } from "./snapshot.ts";

const LEVELS: Readonly<Record<string, string>> = {
  TRACE: "TRC",
  DEBUG: "DBG",
  INFO: "INF",
  WARNING: "WRN",
  WARN: "WRN",
  ERROR: "ERR",
  FATAL: "FTL",
};

/** Parses one JSON log line written by `log.ts`; undefined when it is not one. */
export function parseLogLine(line: string): LogRow | undefined {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof record !== "object" || record === null) return undefined;
  const r = record as Record<string, unknown>;
  const message = typeof r.message === "string" ? r.message : undefined;
  if (message === undefined) return undefined;
  const level = typeof r.level === "string" ? r.level : "INFO";
  const logger = typeof r.logger === "string" ? r.logger : "";
  return {
    atMs: typeof r["@timestamp"] === "string" ? Date.parse(r["@timestamp"]) : 0,
    level: LEVELS[level] ?? level.slice(0, 3),
    component: typeof r.component === "string" ? r.component : logger.replace(/^ccm\./, ""),
    // LogTape quotes string properties; a terminal panel reads better without them.
    message: message.replace(/"([^"\s]*)"/g, "$1"),
  };
}

/** A bounded list of parsed log lines, newest last. */
export class LogRing {
  readonly #max: number;
  #rows: LogRow[] = [];

  constructor(max = 200) {
    this.#max = max;
  }

  /** Takes one formatted line (the `write` option of `setupLogging`). */
  write(line: string): void {
    const row = parseLogLine(line.trim());
    if (!row) return;
    this.#rows.push(row);
    if (this.#rows.length > this.#max) this.#rows.splice(0, this.#rows.length - this.#max);
  }

  /** Copy of the kept lines, oldest first. */
  lines(): LogRow[] {
    return [...this.#rows];
  }
}
