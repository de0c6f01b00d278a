/**
 * What lets a periodic pass skip: the inputs of the last pass that settled (had nothing left to do). Objects
 * without a generation of their own (Nodes, from their events) are tracked by a fingerprint of what the pass
 * reads of them; caches bring their generation. A pass over the same inputs would decide nothing new.
 */
export class SettledInputs {
  #version = 0;
  #settledAt: string | undefined;
  readonly #seen = new Map<string, string>();

  /** Records what a pass reads of `name` (undefined once it is gone); a change moves the version. */
  see(name: string, fingerprint: string | undefined): void {
    if (this.#seen.get(name) === fingerprint) return;
    if (fingerprint === undefined) this.#seen.delete(name);
    else this.#seen.set(name, fingerprint);
    this.#version++;
  }

  /** The version of what `see` tracks: read it when a pass starts, so changes during the pass count. */
  get version(): number {
    return this.#version;
  }

  /** The inputs of a pass: the tracked objects' version and the generations of the caches it read. */
  key(version: number, ...generations: readonly (number | undefined)[]): string {
    return [version, ...generations.map((g) => g ?? "-")].join("/");
  }

  /** Marks the pass over `key` as settled, or (undefined) leaves nothing settled. */
  settle(key: string | undefined): void {
    this.#settledAt = key;
  }

  /** True when the last pass settled over these very inputs. */
  isSettled(key: string): boolean {
    return this.#settledAt === key;
  }
}
