/**
 * SIGTERM and SIGINT as one stop request. A signal sent to a process group started by `deno task` (or Ctrl-C
 * in its terminal) reaches the CCM twice: directly, and forwarded by the task runner. A repeat within
 * `repeatWindowMs` therefore counts once; only a repeat after that window means "exit now".
 */
import type { Clock } from "./clock.ts";
import type { Logger } from "./log.ts";

/** Repeats closer together than this are one signal (the task runner forwards within milliseconds). */
export const REPEAT_WINDOW_MS = 2_000;

/** The signals that stop the CCM, and the exit code of a forced exit (128 + signal number). */
const STOP_SIGNALS = { SIGTERM: 143, SIGINT: 130 } as const;

/** A stop signal's name. */
export type StopSignal = keyof typeof STOP_SIGNALS;

/** What `stopOnSignals` needs from the process; `main.ts` passes `Deno`'s. */
export interface SignalDeps {
  /** Registers `handler` for `signal`; returns a function that removes it. */
  listen(signal: StopSignal, handler: () => void): () => void;
  /** Ends the process at once (a repeat after the window). */
  exit(code: number): void;
  clock: Clock;
  log: Logger;
  repeatWindowMs?: number;
}

/** The real process's signals and exit. */
export function processSignals(): Pick<SignalDeps, "listen" | "exit"> {
  return {
    listen(signal, handler) {
      Deno.addSignalListener(signal, handler);
      return () => Deno.removeSignalListener(signal, handler);
    },
    exit: (code) => Deno.exit(code),
  };
}

/**
 * Aborts the returned signal on the first SIGTERM or SIGINT (its reason says which). Repeats within the
 * window are logged and ignored; a repeat after it exits at once. Dispose it to remove the listeners.
 */
export function stopOnSignals(deps: SignalDeps): { signal: AbortSignal } & Disposable {
  const { clock, log } = deps;
  const windowMs = deps.repeatWindowMs ?? REPEAT_WINDOW_MS;
  const stop = new AbortController();
  let firstAtMs = 0;
  const onSignal = (name: StopSignal) => {
    const nowMs = clock.monotonic();
    if (!stop.signal.aborted) {
      firstAtMs = nowMs;
      log.info("received {signal}: stopping (the Lease is handed over first)", { signal: name });
      stop.abort(new DOMException(`received ${name}`, "AbortError"));
    } else if (nowMs - firstAtMs < windowMs) {
      log.info("received {signal} again within {windowMs} ms: counted once", { signal: name, windowMs });
    } else {
      log.warning("received {signal} again: exiting now, without waiting for the stop to finish", {
        signal: name,
      });
      deps.exit(STOP_SIGNALS[name]);
    }
  };
  const removers = (Object.keys(STOP_SIGNALS) as StopSignal[]).map((name) =>
    deps.listen(name, () => onSignal(name))
  );
  return { signal: stop.signal, [Symbol.dispose]: () => removers.forEach((remove) => remove()) };
}
