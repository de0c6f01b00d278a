/** Response helpers and the Linode API error shape: `{"errors":[{"reason","field?"}]}`. */

/** One entry of a Linode API error body. */
export interface ApiErrorItem {
  reason: string;
  field?: string;
}

/** An error a handler throws to answer with the Linode error shape. */
export class ApiError extends Error {
  readonly status: number;
  readonly errors: readonly ApiErrorItem[];

  constructor(status: number, errors: readonly ApiErrorItem[]) {
    super(errors.map((e) => e.reason).join("; "));
    this.name = "ApiError";
    this.status = status;
    this.errors = errors;
  }
}

/** 404 with the API's exact body. */
export function notFound(): ApiError {
  return new ApiError(404, [{ reason: "Not found" }]);
}

/** 400 for one field, as the API reports validation failures. */
export function fieldError(field: string, reason: string): ApiError {
  return new ApiError(400, [{ field, reason }]);
}

/** A JSON response. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A Linode-shaped error response. */
export function errorResponse(
  status: number,
  errors: readonly ApiErrorItem[],
  headers: Record<string, string> = {},
): Response {
  return json({ errors }, status, headers);
}

/** A JSON object body from outside: every field is `unknown` until checked. */
export type Body = Record<string, unknown>;

/** True for a plain (non-array, non-null) object. */
export function isRecord(value: unknown): value is Body {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads a JSON object body; an empty body reads as `{}`; anything else is a 400. */
export async function readBody(req: Request): Promise<Body> {
  const text = await req.text();
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(400, [{ reason: "Request body must be valid JSON" }]);
  }
  if (!isRecord(parsed)) throw new ApiError(400, [{ reason: "Request body must be a JSON object" }]);
  return parsed;
}

/** An optional string field; wrong type is a 400 on that field. */
export function optString(body: Body, field: string, prefix = ""): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw fieldError(prefix + field, `${field} must be a string`);
  return value;
}

/** An optional integer field within [min, max]. */
export function optInt(body: Body, field: string, min: number, max: number, prefix = ""): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw fieldError(prefix + field, `Must be an integer between ${min} and ${max}`);
  }
  return value;
}

/** An optional boolean field. */
export function optBool(body: Body, field: string, prefix = ""): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw fieldError(prefix + field, `${field} must be a boolean`);
  return value;
}

/** An optional string enum field. */
export function optEnum<T extends string>(
  body: Body,
  field: string,
  allowed: readonly T[],
  prefix = "",
): T | undefined {
  const value = optString(body, field, prefix);
  if (value === undefined) return undefined;
  const found = allowed.find((a) => a === value);
  if (found === undefined) throw fieldError(prefix + field, `Must be one of ${allowed.join(", ")}`);
  return found;
}

/** An optional array of strings (tags, ip_ranges). */
export function optStrings(body: Body, field: string, prefix = ""): string[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw fieldError(prefix + field, `${field} must be an array of strings`);
  }
  return value;
}

/** A label as Linode validates them: 3–32 chars of letters, digits, `-`, `_`, `.`. */
export function checkLabel(label: string, field: string): string {
  if (label.length < 3 || label.length > 32) {
    throw fieldError(field, "Label must be between 3 and 32 characters");
  }
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(label)) {
    throw fieldError(
      field,
      "Label must begin with an alpha-numeric character and only contain [a-zA-Z0-9-_.]",
    );
  }
  return label;
}

/** The API's timestamp format: UTC, seconds precision, no zone suffix. */
export function apiTime(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 19);
}
