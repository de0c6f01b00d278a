/**
 * Event rows. core/v1 and events.k8s.io/v1 Events share one storage upstream and so one printer; the
 * events.k8s.io fields are mapped onto the core names first, as the apiserver's conversion does.
 */
import type { KubeObject } from "./resources.ts";
import { column, NAME_COLUMN, num, parseTime, type Printer, rec, since, str } from "./table_cells.ts";

const WIDE = { priority: 1 } as const;

/** The core/v1 fields the printer reads. */
interface CoreEventView {
  name: string;
  type: string;
  reason: string;
  message: string;
  involvedObject: Record<string, unknown>;
  source: Record<string, unknown>;
  reportingController: string;
  reportingInstance: string;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  eventTime: unknown;
  count: number;
  series: Record<string, unknown> | undefined;
}

/** Where each printed field lives in one API's Event. */
type FieldNames = Record<
  | "message"
  | "involvedObject"
  | "source"
  | "reportingController"
  | "firstTimestamp"
  | "lastTimestamp"
  | "count",
  string
>;

const CORE_FIELDS: FieldNames = {
  message: "message",
  involvedObject: "involvedObject",
  source: "source",
  // The JSON name of core/v1's ReportingController.
  reportingController: "reportingComponent",
  firstTimestamp: "firstTimestamp",
  lastTimestamp: "lastTimestamp",
  count: "count",
};

const V1_FIELDS: FieldNames = {
  message: "note",
  involvedObject: "regarding",
  source: "deprecatedSource",
  reportingController: "reportingController",
  firstTimestamp: "deprecatedFirstTimestamp",
  lastTimestamp: "deprecatedLastTimestamp",
  count: "deprecatedCount",
};

function view(ev: KubeObject, names: FieldNames): CoreEventView {
  return {
    name: ev.metadata.name ?? "",
    type: str(ev.type),
    reason: str(ev.reason),
    message: str(ev[names.message]),
    involvedObject: rec(ev[names.involvedObject]),
    source: rec(ev[names.source]),
    reportingController: str(ev[names.reportingController]),
    reportingInstance: str(ev.reportingInstance),
    firstTimestamp: ev[names.firstTimestamp],
    lastTimestamp: ev[names.lastTimestamp],
    eventTime: ev.eventTime,
    count: num(ev[names.count]),
    series: ev.series === undefined || ev.series === null ? undefined : rec(ev.series),
  };
}

/** SOURCE: component (or reporting controller), then `, host` (or reporting instance) when known. */
function eventSource(ev: CoreEventView): string {
  const component = str(ev.source.component) || ev.reportingController;
  const instance = str(ev.source.host) || ev.reportingInstance;
  return instance === "" ? component : `${component}, ${instance}`;
}

/** OBJECT: `kind/name` in lower-case kind, or just the kind. */
function eventTarget(ev: CoreEventView): string {
  const kind = str(ev.involvedObject.kind).toLowerCase();
  const name = str(ev.involvedObject.name);
  return name === "" ? kind : `${kind}/${name}`;
}

function eventCells(ev: CoreEventView, nowMs: number): unknown[] {
  const first = parseTime(ev.firstTimestamp) === undefined
    ? since(ev.eventTime, nowMs)
    : since(ev.firstTimestamp, nowMs);
  let last = parseTime(ev.lastTimestamp) === undefined ? first : since(ev.lastTimestamp, nowMs);
  let count = ev.count;
  if (ev.series) {
    last = since(ev.series.lastObservedTime, nowMs);
    count = num(ev.series.count);
  } else if (count === 0) {
    // Singleton events of the new API carry no count.
    count = 1;
  }
  return [
    last,
    ev.type,
    ev.reason,
    eventTarget(ev),
    str(ev.involvedObject.fieldPath),
    eventSource(ev),
    ev.message.trim(),
    first,
    count,
    ev.name,
  ];
}

const EVENT_COLUMNS = [
  column("Last Seen", "Time since the event was last observed."),
  column("Type", "Type of the event (Normal or Warning)."),
  column("Reason", "Short machine-readable reason for the event."),
  column("Object", "The object the event is about."),
  column("Subobject", "Field path within the object.", WIDE),
  column("Source", "Component that reported the event.", WIDE),
  column("Message", "Human-readable description of the event."),
  column("First Seen", "Time since the event was first observed.", WIDE),
  column("Count", "Number of times the event occurred.", WIDE),
  { ...NAME_COLUMN, priority: 1 },
];

/** core/v1 Events. */
export const EVENT_PRINTER: Printer = {
  columns: EVENT_COLUMNS,
  cells: (ev, nowMs) => eventCells(view(ev, CORE_FIELDS), nowMs),
};

/** events.k8s.io/v1 Events. */
export const EVENTS_V1_PRINTER: Printer = {
  columns: EVENT_COLUMNS,
  cells: (ev, nowMs) => eventCells(view(ev, V1_FIELDS), nowMs),
};
