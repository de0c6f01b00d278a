/**
 * Short and long forms, and seeds. `deno task test` runs every chaos case in its short form; `deno task chaos`
 * sets `CHAOS=long`: bigger clusters, longer storms, more seeds and soak cycles. Randomised cases draw from a
 * seeded generator; the seed is printed when a case fails and `CHAOS_SEED=<n>` replays it.
 */

/** True under `deno task chaos`. */
export const LONG_FORM = Deno.env.get("CHAOS") === "long";

/** `short` in `deno task test`, `long` under `deno task chaos`. */
export function scaled<T>(short: T, long: T): T {
  return LONG_FORM ? long : short;
}

/** A small seeded generator (mulberry32): the same seed gives the same draws. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `CHAOS_SEED` when set (to replay a failure), else a new random seed. */
export function newSeed(): number {
  const given = Deno.env.get("CHAOS_SEED");
  return given !== undefined && /^\d+$/.test(given) ? Number(given) : Math.floor(Math.random() * 2 ** 31);
}

/** Runs `fn` with the seed; a failure is rethrown naming the seed and how to replay it. */
export async function withSeed<T>(seed: number, fn: (random: () => number) => Promise<T>): Promise<T> {
  try {
    return await fn(seededRandom(seed));
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new Error(`${message}\n(seed ${seed}: replay with CHAOS_SEED=${seed})`, { cause: e });
  }
}

/** Prints a case's measurements under `deno task chaos` (or with `CHAOS_REPORT=1`), for the table in docs/measurements.md. */
export function report(name: string, values: Readonly<Record<string, unknown>>): void {
  if (LONG_FORM || Deno.env.get("CHAOS_REPORT") === "1") {
    console.log(`chaos ${name}: ${JSON.stringify(values)}`);
  }
}
