/**
 * A controller's own writes, per key, until its informer shows them. A write's watch event (or any event
 * before it) re-queues the key, and the reconcile that follows would read the informer's older copy and act
 * again: write the same change a second time, or meet a 409 and re-read. client-go controllers have the same
 * lag and keep "expectations" for it; here the reconcile reads the object its last write answered with instead,
 * for as long as the informer shows a version known to precede that write. No resourceVersion is compared
 * for order (they are opaque): only versions seen before the write count as older.
 */

/** The metadata `OwnWrites` reads. */
export interface Versioned {
  metadata?: { resourceVersion?: string };
}

interface Written<T> {
  obj: T;
  /** resourceVersions this reconcile saw before `obj`: the informer's copy, earlier writes' answers. */
  older: ReadonlySet<string>;
}

/** The objects a controller wrote (or read fresh from the apiserver) and its informer has not shown yet. */
export class OwnWrites<T extends Versioned> {
  readonly #written = new Map<string, Written<T>>();

  /**
   * Remembers `obj` (a write's answer or a fresh read) as the newest state of `key`, after versions `older`.
   * A write that followed the one recorded before (its version is among `older`) keeps that one's older versions.
   */
  record(key: string, obj: T, older: Iterable<string | undefined>): void {
    const rv = obj.metadata?.resourceVersion;
    const versions = new Set<string>();
    for (const v of older) if (v !== undefined) versions.add(v);
    const before = this.#written.get(key);
    const beforeRv = before?.obj.metadata?.resourceVersion;
    if (before && beforeRv !== undefined && versions.has(beforeRv)) {
      for (const v of before.older) versions.add(v);
    }
    if (rv !== undefined) versions.delete(rv);
    this.#written.set(key, { obj, older: versions });
  }

  /**
   * The newest known state of `key`: the write's answer while `cached` (the informer's copy) is a version
   * known to precede it, else `cached`. Forgets the write once the informer has moved past those versions
   * (to the write itself, to someone else's later change, or to a deletion).
   */
  latest(key: string, cached: T | undefined): T | undefined {
    const written = this.#written.get(key);
    if (written === undefined) return cached;
    const rv = cached?.metadata?.resourceVersion;
    if (rv !== undefined && written.older.has(rv)) return written.obj;
    this.#written.delete(key);
    return cached;
  }

  /** Forgets `key` (its object was deleted). */
  forget(key: string): void {
    this.#written.delete(key);
  }

  /** Keys with a write the informer has not shown yet. */
  get size(): number {
    return this.#written.size;
  }
}
