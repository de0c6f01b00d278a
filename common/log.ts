/**
 * Logging setup: LogTape with a synchronous stderr sink, JSON lines by default or readable text
 * for terminals. Every component gets `getLogger(["ccm", "<component>"])`, passed in as a dependency.
 */
import {
  configure,
  getJsonLinesFormatter,
  getLogger,
  getTextFormatter,
  type Logger,
  type LogLevel,
  type LogRecord,
  type Sink,
} from "@logtape/logtape";

export type { Logger, LogLevel, LogRecord };

/** How log lines look: `json` (one object per line) or `text` (for people at a terminal). */
export type LogFormat = "json" | "text";

/** Options for `setupLogging`. */
export interface LoggingOptions {
  format: LogFormat;
  level: LogLevel;
  /** Returns the secrets that must never be printed (re-asked per line, so rotated tokens are covered). */
  secrets?: () => readonly string[];
  /** Where formatted lines go; defaults to a synchronous write to stderr so nothing is lost on exit. */
  write?: (line: string) => void;
  /** A second sink for every `ccm` record at `level` or above, e.g. the Sentry reporter (it picks its own). */
  report?: Sink;
}

const REDACTED = "***";

/**
 * A PEM private key block of any kind (`PRIVATE KEY`, `RSA`, `EC`, `ENCRYPTED`, `OPENSSH` …), its newlines real
 * or JSON-escaped (`\n`), up to its END line; a block cut short (no END line) up to where its base64 stops.
 */
const PEM_PRIVATE_KEY =
  /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|(?:[A-Za-z0-9+/=:,.\s-]|\\+[nrt])*)/g;

/** Where every PEM block starts: a text without it holds no private key block. */
const PEM_BEGIN = "-----BEGIN ";

/** What a PEM private key block becomes in logs and error reports. */
export const REDACTED_PRIVATE_KEY = "[private key redacted]";

/**
 * Replaces every occurrence of each secret (of at least 4 characters) in `text` with `***`, and every PEM
 * private key block with `REDACTED_PRIVATE_KEY` (a TLS key never needs to be named to be redacted).
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  // Every log line passes here: the checks first, so a line without a key or a secret is not copied.
  let out = text.includes(PEM_BEGIN) ? text.replace(PEM_PRIVATE_KEY, REDACTED_PRIVATE_KEY) : text;
  for (const s of secrets) if (s.length >= 4 && out.includes(s)) out = out.replaceAll(s, REDACTED);
  return out;
}

/** Maps klog's `--v` verbosity to a LogTape level: 0–3 info, 4–5 debug, 6+ trace. */
export function levelForVerbosity(v: number): LogLevel {
  if (v >= 6) return "trace";
  if (v >= 4) return "debug";
  return "info";
}

const encoder = new TextEncoder();

/** Writes all of `text` synchronously, so nothing is lost when the process exits right after. */
export function writeAllSync(stream: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  let written = 0;
  while (written < bytes.length) written += stream.writeSync(bytes.subarray(written));
}

/**
 * `value` with every string in it redacted: errors always copied, arrays and plain objects copied when they
 * hold something to redact (the value itself is never changed), anything else returned as it is.
 */
function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") return redactSecrets(value, secrets);
  if (Array.isArray(value)) {
    const out = value.map((v) => redactValue(v, secrets));
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  if (value instanceof Error) {
    // Always a copy: an error's other own properties (a request's headers) must not reach the formatter.
    const copy = new Error(redactSecrets(value.message, secrets));
    copy.name = value.name;
    copy.stack = value.stack === undefined ? undefined : redactSecrets(value.stack, secrets);
    return copy;
  }
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value);
    const redacted = entries.map(([k, v]) => [k, redactValue(v, secrets)] as const);
    return redacted.some(([, v], i) => v !== entries[i]?.[1]) ? Object.fromEntries(redacted) : value;
  }
  return value;
}

/**
 * A copy of `record` whose message values and properties are redacted before any formatter sees them: the
 * text formatter splits a long or multi-line string over several quoted pieces, which no redaction of the
 * finished line could find whole.
 */
function redactRecord(record: LogRecord, secrets: readonly string[]): LogRecord {
  return {
    ...record,
    message: record.message.map((part) => redactValue(part, secrets)),
    rawMessage: typeof record.rawMessage === "string"
      ? redactSecrets(record.rawMessage, secrets)
      : record.rawMessage,
    properties: redactValue(record.properties, secrets) as Record<string, unknown>,
  };
}

/** A sink that formats, redacts secrets and private keys (in the record, then in the line) and writes synchronously. */
export function makeSink(options: LoggingOptions): Sink {
  const format = options.format === "json"
    ? getJsonLinesFormatter({ categorySeparator: ".", message: "rendered", properties: "flatten" })
    : getTextFormatter({ timestamp: "date-time-tz", category: "." });
  const write = options.write ?? ((line: string) => writeAllSync(Deno.stderr, line));
  return (record: LogRecord) => {
    const secrets = options.secrets?.() ?? [];
    let line = format(redactRecord(record, secrets));
    if (!line.endsWith("\n")) line += "\n";
    write(redactSecrets(line, secrets));
  };
}

/** Configures LogTape for the whole process. Call once from `main.ts` (tests may call it again). */
export async function setupLogging(options: LoggingOptions): Promise<void> {
  // Without a reporter the "report" sink drops every record.
  const report = options.report ?? (() => {});
  await configure({
    reset: true,
    sinks: { out: makeSink(options), report },
    loggers: [
      { category: ["ccm"], lowestLevel: options.level, sinks: ["out", "report"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["out"] },
    ],
  });
}

/** The logger of one component, with a `component` property on every record. */
export function componentLogger(component: string): Logger {
  return getLogger(["ccm", component]).with({ component });
}

/** Records captured by `captureLogs`, for tests that assert on log output. */
export interface CapturedLogs {
  readonly lines: string[];
  text(): string;
}

/** Routes all `ccm` logs (JSON format, given level) into memory; returns the captured lines. */
export async function captureLogs(
  level: LogLevel = "debug",
  secrets?: () => readonly string[],
): Promise<CapturedLogs> {
  const lines: string[] = [];
  await setupLogging({ format: "json", level, secrets, write: (l) => lines.push(l) });
  return { lines, text: () => lines.join("") };
}
