/**
 * Parses the command line against the flag table (`flag_table.ts`) the way Go's pflag does, reads the parsed
 * values through the table's types (`readFlags`), and renders `--help` from the table.
 */
import { ENV_VARS, parseGoBool } from "./env.ts";
import {
  FLAG_GROUP_TITLES,
  FLAG_INDEX,
  type FlagKind,
  type FlagName,
  FLAGS,
  type FlagSpec,
  type FlagValue,
  type FlagValues,
  readValue,
} from "./flag_table.ts";

export { FLAG_INDEX, FLAGS, type FlagValue } from "./flag_table.ts";

/** What `parseArgs` found. */
export interface ParsedArgs {
  /** Values of the flags given on the command line (defaults not included). */
  readonly values: ReadonlyMap<string, FlagValue>;
  readonly help: boolean;
  /** `--version` (`true`), `--version=raw` (`raw`), or not asked (`false`). */
  readonly version: boolean | "raw";
  /** One line per problem, each naming the flag. */
  readonly problems: readonly string[];
}

/** Levenshtein distance, for "did you mean". */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** The closest known flag name to a mistyped one, if any is close enough to suggest. */
export function suggestFlag(name: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 4)) + 1;
  for (const candidate of [...FLAG_INDEX.keys(), "help", "version"]) {
    const d = candidate.startsWith(name) && name.length >= 4 ? 1 : editDistance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function unknownFlag(name: string): string {
  const hint = suggestFlag(name);
  return `--${name}: unknown flag (${hint ? `did you mean --${hint}?` : "see --help"})`;
}

const APPENDING: ReadonlySet<FlagKind> = new Set(["list", "intList", "array", "map"]);

function store(values: Map<string, FlagValue>, spec: FlagSpec, value: FlagValue): void {
  const previous = values.get(spec.name);
  // pflag slices: the first use replaces the default, later uses append.
  if (APPENDING.has(spec.kind) && Array.isArray(previous) && Array.isArray(value)) {
    values.set(spec.name, [...previous, ...value]);
  } else values.set(spec.name, value);
}

/** `--version`, `--version=raw`, `--version=false`; `--version=vX.Y.Z` only sets the reported version upstream. */
function versionValue(inline: string | undefined): boolean | "raw" | undefined {
  if (inline === undefined) return true;
  if (inline === "raw") return "raw";
  if (inline.startsWith("v")) return false;
  return parseGoBool(inline);
}

/**
 * Parses Go-style flags the way pflag (and Go's flag package for `-name`) does: `--name=value`,
 * `--name value`, bare `--bool` for true, `-name` with one dash, `_` read as `-`; each value read as its pflag
 * type (lists as CSV). A leading `--` (passed through by `deno task`) is skipped; a later `--` ends the flags.
 * Arguments are an error.
 */
export function parseArgs(args: readonly string[]): ParsedArgs {
  const values = new Map<string, FlagValue>();
  const problems: string[] = [];
  let help = false;
  let version: boolean | "raw" = false;
  const positional: string[] = [];
  let i = args[0] === "--" ? 1 : 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positional.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positional.push(arg);
      continue;
    }
    const body = arg.slice(arg.startsWith("--") ? 2 : 1);
    const eq = body.indexOf("=");
    const name = (eq < 0 ? body : body.slice(0, eq)).replaceAll("_", "-");
    const inline = eq < 0 ? undefined : body.slice(eq + 1);
    if (name === "" || name.startsWith("-")) {
      problems.push(`${arg}: bad flag syntax (use --name=value)`);
      continue;
    }
    if (name === "help" || name === "h") {
      help = inline === undefined || parseGoBool(inline) !== false;
      continue;
    }
    if (name === "version") {
      const v = versionValue(inline);
      if (v === undefined) problems.push(`--version: invalid value "${inline}" (use true, false or raw)`);
      else version = v;
      continue;
    }
    const spec = FLAG_INDEX.get(name);
    if (!spec) {
      problems.push(unknownFlag(name));
      // Most likely "--name value": swallow the value so it is not reported a second time.
      if (inline === undefined && i + 1 < args.length && !args[i + 1]!.startsWith("-")) i++;
      continue;
    }
    let text = inline;
    if (text === undefined) {
      if (spec.kind === "bool") text = "true";
      else if (i + 1 < args.length) text = args[++i]!;
      else {
        problems.push(`--${name}: needs a value (--${name}=VALUE)`);
        continue;
      }
    }
    const value = readValue(spec.kind, text);
    if (typeof value === "object" && "problem" in value) problems.push(`--${name}: ${value.problem}`);
    else store(values, spec, value);
  }
  for (const p of positional) {
    if (p === "") continue; // pflag ignores empty arguments, and so does the upstream command
    problems.push(`unexpected argument "${p}": no arguments are taken (write booleans as --flag=false)`);
  }
  return { values, help, version, problems };
}

/** The implemented flags' values, typed by the table: `get("vpc-names")` is a `readonly string[]`. */
export interface Flags {
  /** The flag's value, or its default when not given. */
  get<N extends FlagName>(name: N): FlagValues[N];
  /** Whether the flag was on the command line. */
  given(name: FlagName): boolean;
}

/** Reads parsed flag values through the table's types, each with its default when not given. */
export function readFlags(values: ParsedArgs["values"]): Flags {
  return {
    get: <N extends FlagName>(name: N) => (values.get(name) ?? FLAG_INDEX.get(name)?.def) as FlagValues[N],
    given: (name) => values.has(name),
  };
}

/** Go's `time.Duration.String` for whole milliseconds: `10s`, `5m0s`, `12h0m0s`, `100ms`. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (Math.abs(ms) < 1000) return `${ms}ms`;
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(ms) / 1000;
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  const s = Number((rest - m * 60).toFixed(3));
  return `${sign}${h > 0 ? `${h}h` : ""}${h > 0 || m > 0 ? `${m}m` : ""}${s}s`;
}

/** A flag's default as `--help` and the docs print it: a Go duration, a comma-joined list, or the value. */
export function formatDefault(spec: FlagSpec): string {
  if (spec.kind === "duration" && typeof spec.def === "number") return formatGoDuration(spec.def);
  if (Array.isArray(spec.def)) return spec.def.join(",");
  return String(spec.def);
}

const VALUE_HINT: Readonly<Record<FlagKind, string>> = {
  bool: "",
  string: " string",
  int: " int",
  float: " float",
  duration: " duration",
  ip: " ip",
  list: " list",
  intList: " ints",
  array: " strings",
  map: " pairs",
  quantity: " quantity",
};

function helpLine(spec: FlagSpec): string {
  const left = `  --${spec.name}${VALUE_HINT[spec.kind]}`;
  const help = spec.group !== "ignored"
    ? spec.help
    : spec.help === ""
    ? "not implemented"
    : `not implemented: ${spec.help}`;
  const def = formatDefault(spec);
  return `${left.padEnd(48)} ${help} (default ${
    typeof spec.def === "string" || Array.isArray(spec.def) ? `"${def}"` : def
  })`;
}

/** The `--help` text: every flag with its default, then every environment variable. */
export function helpText(): string {
  const out = [
    "Usage: linode-cloud-controller-manager [flags]",
    "       linode-cloud-controller-manager lint [-f FILE]... [flags]   check Service annotations (lint --help)",
    "",
    "Kubernetes cloud controller manager for Linode; flags and environment as the Go CCM.",
    "Flags: --name=value or --name value; booleans --name or --name=false; -name works too.",
  ];
  for (const [group, title] of Object.entries(FLAG_GROUP_TITLES)) {
    out.push("", `${title}:`);
    for (const spec of FLAGS.filter((f) => f.group === group)) out.push(helpLine(spec));
  }
  out.push("", "Other flags:", `${"  -h, --help".padEnd(48)} print this help`);
  out.push(`${"  --version[=raw]".padEnd(48)} print the version`);
  out.push("", "Environment:");
  for (const v of ENV_VARS) {
    out.push(`${`  ${v.name}`.padEnd(48)} ${v.help}${v.def === "" ? "" : ` (default ${v.def})`}`);
  }
  return out.join("\n") + "\n";
}
