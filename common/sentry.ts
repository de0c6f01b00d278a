/**
 * Error reports to Sentry (`SENTRY_DSN`, `SENTRY_ENVIRONMENT`, `SENTRY_RELEASE`), through Sentry's own Deno SDK,
 * for the errors the Go CCM reports: failed Service and Node syncs (its LoadBalancer and instance calls capture
 * every error they return) and the errors that stop the process. It is a log sink: a record at level `error`
 * or above, or a loop failure marked `reportable`, becomes one event. Every string of an event is scrubbed of
 * the secrets (Linode token, kube credentials) and of bearer tokens before it leaves; no default integration
 * runs (no global handlers, breadcrumbs or request data), so nothing else is collected.
 * Loaded only when `SENTRY_DSN` is set (`main.ts`), so a normal start does not pay for the SDK.
 */
import { type ErrorEvent, init, Scope, type SeverityLevel } from "@sentry/deno";
import type { LogRecord, Sink } from "@logtape/logtape";
import { redactSecrets } from "./log.ts";

/** What `startSentry` needs. */
export interface SentryOptions {
  dsn: string;
  environment: string;
  release: string;
  /** Tags on every event (the Go CCM tags `cluster_name`). */
  tags?: Readonly<Record<string, string>>;
  /** The secrets to scrub, asked per event (so a rotated token is covered). */
  secrets: () => readonly string[];
}

/** A running reporter: its log sink, and a flush for before the process exits. */
export interface ErrorReporter {
  readonly sink: Sink;
  /** Sends what is queued; resolves `false` when `timeoutMs` passed first. */
  flush(timeoutMs: number): Promise<boolean>;
  /** Flushes, then stops sending. */
  close(timeoutMs: number): Promise<boolean>;
}

/** Loop queues whose failures are reported, with the tag the Go CCM sets for their object. */
const REPORTED_QUEUES: Readonly<Record<string, string>> = { service: "service", "cloud-node": "node_name" };

const BEARER = /\b(Bearer|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi;

/** `text` without the secrets and without anything that looks like a bearer token. */
export function scrub(text: string, secrets: readonly string[]): string {
  return redactSecrets(text, secrets).replace(BEARER, "$1 ***");
}

/** A copy of `value` with every string scrubbed (keys included). */
function scrubDeep<T>(value: T, secrets: readonly string[]): T {
  return JSON.parse(JSON.stringify(value), (_k, v) => typeof v === "string" ? scrub(v, secrets) : v);
}

function render(record: LogRecord): string {
  return record.message.map((part, i) =>
    i % 2 === 0 || typeof part === "string" ? String(part) : JSON.stringify(part)
  )
    .join("");
}

/** True for the records the Go CCM would have reported. */
export function isReportable(record: LogRecord): boolean {
  if (record.level === "error" || record.level === "fatal") return true;
  const p = record.properties;
  return p.reportable === true && typeof p.queue === "string" && p.queue in REPORTED_QUEUES;
}

function tagsOf(record: LogRecord): Record<string, string> {
  const tags: Record<string, string> = {};
  const p = record.properties;
  for (const name of ["component", "queue"]) if (typeof p[name] === "string") tags[name] = p[name];
  const objectTag = typeof p.queue === "string" ? REPORTED_QUEUES[p.queue] : undefined;
  if (objectTag && typeof p.key === "string") tags[objectTag] = p.key.split("/").pop() ?? p.key;
  return tags;
}

/** The exception of a record: the type from its `error` property (`Name: message`), the rendered line. */
function exceptionOf(record: LogRecord): { type: string; value: string } {
  const error = record.properties.error;
  const type = typeof error === "string" && /^[A-Za-z]+Error:/.test(error)
    ? error.split(":")[0] ?? "Error"
    : "Error";
  return { type, value: render(record) };
}

/** Starts the SDK's client (no default integrations) and returns the sink that feeds it. */
export function startSentry(options: SentryOptions): ErrorReporter {
  const client = init({
    dsn: options.dsn,
    environment: options.environment,
    release: options.release,
    defaultIntegrations: false,
    skipOpenTelemetrySetup: true,
    sendDefaultPii: false,
    beforeSend: (event: ErrorEvent) => scrubDeep(event, options.secrets()),
  });
  if (!client) throw new TypeError("Cannot start Sentry: the SDK returned no client");
  const sink: Sink = (record) => {
    if (!isReportable(record)) return;
    const scope = new Scope();
    scope.setTags({ ...options.tags, ...tagsOf(record) });
    const level: SeverityLevel = record.level === "fatal" ? "fatal" : "error";
    client.captureEvent({ level, exception: { values: [exceptionOf(record)] } }, undefined, scope);
  };
  return {
    sink,
    flush: async (timeoutMs) => await client.flush(timeoutMs),
    close: async (timeoutMs) => await client.close(timeoutMs),
  };
}
