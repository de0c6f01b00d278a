/** A value that never prints: the Linode token, a Sentry DSN. */

/** A secret string that prints as `***` everywhere (JSON, template strings, `Deno.inspect`). */
export class Secret {
  readonly #value: string;
  /** Wraps `value`. */
  constructor(value: string) {
    this.#value = value;
  }
  /** The secret itself: pass it straight to the client that needs it, never to a logger. */
  reveal(): string {
    return this.#value;
  }
  /** `***`. */
  toString(): string {
    return "***";
  }
  /** `***`. */
  toJSON(): string {
    return "***";
  }
  /** `***` for `Deno.inspect` and `console.log`. */
  [Symbol.for("Deno.customInspect")](): string {
    return "***";
  }
  /** `***` for `node:util` inspect. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "***";
  }
}
