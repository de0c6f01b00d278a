/**
 * Shadow mode (`--dry-run`) at the client layer: the Linode caller and the Kubernetes transport ask the guard
 * before every write, and in dry-run it refuses, loudly. Controllers record what they would do instead of
 * writing (`controllers/loop/plan.ts`); this guard is the safety net for a write path that forgot to, so a
 * new code path can never write in shadow mode.
 */
import type { Logger } from "./log.ts";
import type { Registry } from "../server/metrics.ts";

/** Which client refused: the Linode API or the Kubernetes API. */
export type GuardedClient = "linode" | "kubernetes";

/**
 * A write attempted in dry-run. Retrying cannot help (`permanent`): the key waits until its object changes,
 * so a forgotten write path shows as one error line per change, not a hot loop.
 */
export class DryRunWriteError extends Error {
  override name = "DryRunWriteError";
  readonly permanent = true;
  constructor(readonly client: GuardedClient, readonly call: string) {
    super(`Refusing to send ${call} to the ${client === "linode" ? "Linode" : "Kubernetes"} API: --dry-run`);
  }
}

/** Asked by a client immediately before it sends a write. */
export interface WriteGuard {
  /** Throws `DryRunWriteError` when writes are refused; `call` is `METHOD /route` (no body, no query). */
  assertWritable(client: GuardedClient, call: string): void;
}

/** The guard of `--dry-run`: refuses every write, logs it at error and counts it. */
export class DryRunGuard implements WriteGuard {
  readonly #log: Logger;
  readonly #metrics: Registry;

  constructor(options: { log: Logger; metrics: Registry }) {
    this.#log = options.log;
    this.#metrics = options.metrics;
  }

  assertWritable(client: GuardedClient, call: string): void {
    // A controller reached its client instead of recording the action: a bug worth a person's attention.
    this.#log.error("dry run: refused {client} write {call}: a write path did not record its action", {
      client,
      call,
    });
    this.#metrics.counter(
      "ccm_dry_run_refused_writes_total",
      "Writes refused by the --dry-run client guard (each one is a write path that did not record its action)",
      ["client"],
    ).inc({ client });
    throw new DryRunWriteError(client, call);
  }
}
