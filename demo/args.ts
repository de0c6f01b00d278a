/** The demo's own command line (`deno task demo [flags]`). Pure. */

/** What the demo was asked to do. */
export interface DemoOptions {
  /** Stop once the story has played out. */
  readonly once: boolean;
  /** Stop after this many seconds (undefined: run until Ctrl-C). */
  readonly durationSec: number | undefined;
  /** Play the story four times faster, with CCM timings to match. */
  readonly fast: boolean;
  /** Plain periodic lines even on a terminal. */
  readonly plain: boolean;
  /** Folder for the kubeconfig (undefined: `.demo/` in the project folder). */
  readonly dir: string | undefined;
  /** The world to start on: the demo's own cluster, or one as the Go CCM leaves it. */
  readonly world: "demo" | "go-ccm";
}

/** Result of `parseDemoArgs`. */
export type DemoArgs = { readonly kind: "help" } | { readonly kind: "run"; readonly options: DemoOptions };

/** Usage text of `deno task demo`. */
export const DEMO_HELP =
  `Usage: deno task demo [--once] [--duration=<seconds>] [--fast] [--plain] [--dir=<folder>]
                      [--world=demo|go-ccm]

Starts the Linode and Kubernetes emulators with a small world, runs two CCM replicas against them
(one leads, one stands by) and shows a live view while a short story plays out.

  --once               exit 0 once the story has played out
  --duration=<s>       exit 0 after <s> seconds
  --fast               play the story four times faster (scenes every ~2.5 s instead of ~10 s)
  --plain              print plain status lines instead of the full-screen view (default when not a terminal)
  --dir=<folder>       where to write the kubeconfig (default .demo/ in the project folder)
  --world=<name>       demo (default): the story above; go-ccm: a cluster as the Go CCM leaves it, whose
                       Lease the Go CCM holds; it stops, a replica takes over and adopts its NodeBalancers
  -h, --help           show this text`;

function durationOf(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new RangeError(`--duration must be a positive number of seconds, got "${value}"`);
  }
  return n;
}

function worldOf(value: string): DemoOptions["world"] {
  if (value === "demo" || value === "go-ccm") return value;
  throw new RangeError(`--world must be demo or go-ccm, got "${value}"`);
}

/** Parses the demo's flags; throws `RangeError` naming the bad flag. */
export function parseDemoArgs(args: readonly string[]): DemoArgs {
  let once = false, fast = false, plain = false;
  let durationSec: number | undefined;
  let dir: string | undefined;
  let world: DemoOptions["world"] = "demo";
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    const eq = arg.indexOf("=");
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
    const value = (): string => {
      const v = inline ?? args[++i];
      if (v === undefined) throw new RangeError(`${name} needs a value`);
      return v;
    };
    if (name === "-h" || name === "--help") return { kind: "help" };
    else if (name === "--once" && inline === undefined) once = true;
    else if (name === "--fast" && inline === undefined) fast = true;
    else if (name === "--plain" && inline === undefined) plain = true;
    else if (name === "--duration") durationSec = durationOf(value());
    else if (name === "--dir") dir = value();
    else if (name === "--world") world = worldOf(value());
    else throw new RangeError(`Unknown demo flag ${arg} (see --help)`);
  }
  return { kind: "run", options: { once, durationSec, fast, plain, dir, world } };
}
