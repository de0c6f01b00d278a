/** Kubernetes `Status` failures, shaped like the apiserver's `k8s.io/apimachinery/pkg/api/errors`. */
import type { ResourceDef } from "./resources.ts";

/** A `Status.reason` the emulator produces. */
export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Expired"
  | "UnsupportedMediaType"
  | "Invalid"
  | "TooManyRequests"
  | "InternalError"
  | "ServiceUnavailable"
  | "Timeout";

/** One field problem in an `Invalid` status. */
export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

/** `Status.details`. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A failed request, carried as an exception until it is written out as a `Status` object. */
export class StatusError extends Error {
  readonly code: number;
  readonly reason: StatusReason;
  readonly details: StatusDetails | undefined;

  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.name = "StatusError";
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  /** The `Status` object the apiserver would send. */
  toStatus(): Record<string, unknown> {
    return failureStatus(this.code, this.reason, this.message, this.details);
  }
}

/** A `Status` object with `status: Failure`. */
export function failureStatus(
  code: number,
  reason: StatusReason,
  message: string,
  details?: StatusDetails,
): Record<string, unknown> {
  const status: Record<string, unknown> = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
  };
  if (details) status.details = details;
  status.code = code;
  return status;
}

function qualified(def: ResourceDef): string {
  return def.group === "" ? def.plural : `${def.plural}.${def.group}`;
}

function groupKind(def: ResourceDef, name: string): StatusDetails {
  return def.group === "" ? { name, kind: def.plural } : { name, group: def.group, kind: def.plural };
}

/** 404 `<resource> "<name>" not found`. */
export function notFound(def: ResourceDef, name: string): StatusError {
  return new StatusError(404, "NotFound", `${qualified(def)} "${name}" not found`, groupKind(def, name));
}

/** 409 `<resource> "<name>" already exists`. */
export function alreadyExists(def: ResourceDef, name: string): StatusError {
  return new StatusError(
    409,
    "AlreadyExists",
    `${qualified(def)} "${name}" already exists`,
    groupKind(def, name),
  );
}

/** 409 Conflict on a stale resourceVersion (or another failed precondition). */
export function conflict(def: ResourceDef, name: string, why?: string): StatusError {
  const reason = why ??
    "the object has been modified; please apply your changes to the latest version and try again";
  return new StatusError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(def)} "${name}": ${reason}`,
    groupKind(def, name),
  );
}

/** 400 BadRequest. */
export function badRequest(message: string): StatusError {
  return new StatusError(400, "BadRequest", message);
}

/** 403 Forbidden. */
export function forbidden(message: string, def?: ResourceDef, name?: string): StatusError {
  return new StatusError(403, "Forbidden", message, def ? groupKind(def, name ?? "") : undefined);
}

/** 410 Expired (too old resourceVersion or continue token). */
export function expired(message: string): StatusError {
  return new StatusError(410, "Expired", message);
}

/** 422 Invalid: `<Kind> "<name>" is invalid: <field>: <message>, ...`. */
export function invalid(def: ResourceDef, name: string, causes: StatusCause[]): StatusError {
  const list = causes.map((c) => `${c.field}: ${c.message}`).join(", ");
  const summary = causes.length > 1 ? `[${list}]` : list;
  const details: StatusDetails = def.group === ""
    ? { name, kind: def.kind, causes }
    : { name, group: def.group, kind: def.kind, causes };
  return new StatusError(422, "Invalid", `${def.kind} "${name}" is invalid: ${summary}`, details);
}

/** A field problem for `invalid()`: `Required value`, `Invalid value: "x": why`, `Forbidden: why`. */
export function fieldError(
  field: string,
  type: "Required" | "Invalid" | "Forbidden" | "NotSupported" | "Duplicate",
  detail?: string,
  value?: unknown,
): StatusCause {
  const reasons = {
    Required: ["FieldValueRequired", "Required value"],
    Invalid: ["FieldValueInvalid", "Invalid value"],
    Forbidden: ["FieldValueForbidden", "Forbidden"],
    NotSupported: ["FieldValueNotSupported", "Unsupported value"],
    Duplicate: ["FieldValueDuplicate", "Duplicate value"],
  } as const;
  const [reason, label] = reasons[type];
  let message: string = label;
  if (value !== undefined) message += `: ${JSON.stringify(value)}`;
  if (detail) message += `: ${detail}`;
  return { reason, message, field };
}
