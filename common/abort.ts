/**
 * A signal that aborts when any of several does, and lets go of them when disposed. `AbortSignal.any` keeps a
 * record of every signal made from a long-lived one (a leadership term, a process stop) until that one aborts:
 * about 400 bytes per call, so one per request would grow the heap for as long as the term runs.
 */

/** Aborts with the reason of the first of `signals` to abort; dispose it once the work it guards is done. */
export function linkSignals(...signals: (AbortSignal | undefined)[]): { signal: AbortSignal } & Disposable {
  const sources = signals.filter((s) => s !== undefined);
  const link = new AbortController();
  const aborted = sources.find((s) => s.aborted);
  if (aborted) {
    link.abort(aborted.reason);
    return { signal: link.signal, [Symbol.dispose]: () => {} };
  }
  const listeners = sources.map((source) => {
    const onAbort = () => link.abort(source.reason);
    source.addEventListener("abort", onAbort, { once: true });
    return () => source.removeEventListener("abort", onAbort);
  });
  return {
    signal: link.signal,
    [Symbol.dispose]: () => listeners.forEach((remove) => remove()),
  };
}
