/**
 * What the monitoring files (alert rules, dashboard) may name, and the Prometheus tools that check them. The
 * metric names and labels are read from the code, never listed here: every `.counter(`, `.gauge(` and
 * `.histogram(` call in the modules `main.ts` loads (`deno info`), so a renamed metric or label fails the tests
 * that check the files against them. `tests/monitoring_prometheus_test.ts` checks this reading against what a
 * running CCM serves.
 */
import { fileURLToPath } from "node:url";

/** The repository root, as a file URL. */
export const ROOT = new URL("../", import.meta.url);

/** Labels every scraped series carries besides its own (the scrape's target labels). */
export const TARGET_LABELS: readonly string[] = ["job", "instance"];

/** The job the shipped rules and dashboard select (deploy/monitoring.yaml's ServiceMonitor gives it). */
export const JOB = "ccm-linode";

/** One metric family as the code declares it. */
export interface DeclaredMetric {
  readonly name: string;
  readonly type: "counter" | "gauge" | "histogram";
  readonly labels: readonly string[];
  /** Files that declare it (repository-relative). */
  readonly files: readonly string[];
}

/** Blanks comments out of TypeScript source, keeping string literals and offsets. */
function stripComments(src: string): string {
  let out = "";
  for (let i = 0; i < src.length;) {
    const c = src[i]!;
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < src.length && src[j] !== c) j += src[j] === "\\" ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j + 1;
    } else if (src.startsWith("//", i) || src.startsWith("/*", i)) {
      const end = src.startsWith("//", i) ? src.indexOf("\n", i) : src.indexOf("*/", i) + 2;
      const stop = end <= 1 ? src.length : end;
      out += src.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** The top-level, comma-separated arguments of the call whose `(` is at `open`. */
function callArguments(src: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < src.length && src[j] !== c) j += src[j] === "\\" ? 2 : 1;
      i = j;
    } else if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) {
      if (--depth === 0) {
        args.push(src.slice(start, i).trim());
        return args.filter((a) => a !== "");
      }
    } else if (c === "," && depth === 1) {
      args.push(src.slice(start, i).trim());
      start = i + 1;
    }
  }
  throw new SyntaxError(`Unclosed call at offset ${open}`);
}

const STRING = /^"([^"\\]*)"$/;

/** The local source files `main.ts` loads, by repository-relative path. */
async function programSources(): Promise<Map<string, string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: fileURLToPath(ROOT),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`deno info failed: ${new TextDecoder().decode(out.stderr)}`);
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: { specifier: string }[] };
  const sources = new Map<string, string>();
  for (const { specifier } of info.modules) {
    if (!specifier.startsWith(ROOT.href) || !specifier.endsWith(".ts")) continue;
    sources.set(
      specifier.slice(ROOT.href.length),
      stripComments(await Deno.readTextFile(new URL(specifier))),
    );
  }
  return sources;
}

/** The string value of a metric name argument: a literal, or a `const` of the program holding one. */
function resolveName(arg: string, sources: Map<string, string>, where: string): string {
  const literal = STRING.exec(arg);
  if (literal) return literal[1]!;
  if (!/^[A-Z_][A-Z0-9_]*$/.test(arg)) throw new TypeError(`${where}: metric name ${arg} is not a constant`);
  for (const src of sources.values()) {
    const found = new RegExp(`\\bconst ${arg}\\s*=\\s*"([^"]+)"`).exec(src);
    if (found) return found[1]!;
  }
  throw new TypeError(`${where}: cannot resolve the metric name ${arg}`);
}

/** The label names argument: an array literal of strings (absent: none). */
function resolveLabels(arg: string | undefined, where: string): string[] {
  if (arg === undefined) return [];
  const inner = /^\[([\s\S]*)\]$/.exec(arg);
  if (!inner) throw new TypeError(`${where}: labels ${arg} are not an array literal`);
  return inner[1]!.split(",").map((s) => s.trim()).filter((s) => s !== "").map((s) => {
    const m = STRING.exec(s);
    if (!m) throw new TypeError(`${where}: label ${s} is not a string literal`);
    return m[1]!;
  });
}

/**
 * Every metric family the CCM declares, by name. Throws on a declaration it cannot read, and on a name
 * declared twice with another type or other labels (the registry would keep the first silently).
 */
export async function declaredMetrics(): Promise<Map<string, DeclaredMetric>> {
  const sources = await programSources();
  const found = new Map<string, DeclaredMetric>();
  for (const [file, src] of sources) {
    for (const call of src.matchAll(/\.(counter|gauge|histogram)\(/g)) {
      const type = call[1] as DeclaredMetric["type"];
      const open = call.index + call[0].length - 1;
      const where = `${file}:${src.slice(0, open).split("\n").length}`;
      const [nameArg, , labelsArg] = callArguments(src, open);
      if (nameArg === undefined) throw new TypeError(`${where}: .${type}() without a name`);
      const name = resolveName(nameArg, sources, where);
      const labels = resolveLabels(labelsArg, where);
      const known = found.get(name);
      if (known && (known.type !== type || known.labels.join() !== labels.join())) {
        throw new TypeError(
          `${where}: ${name} declared as ${type}[${labels}], elsewhere ${known.type}[${known.labels}]`,
        );
      }
      found.set(name, { name, type, labels, files: [...new Set([...(known?.files ?? []), file])] });
    }
  }
  return found;
}

/** The series names one family is exposed under (a histogram's `_bucket`, `_sum`, `_count`). */
export function exposedNames(metric: DeclaredMetric): string[] {
  if (metric.type !== "histogram") return [metric.name];
  return ["_bucket", "_sum", "_count"].map((s) => metric.name + s);
}

/** What a PromQL expression refers to. */
export interface PromqlRefs {
  /** Metric names of its selectors, with the label names each matcher names. */
  readonly selectors: { name: string; matchers: string[] }[];
  /** Label names of `by`, `without`, `on`, `ignoring`, `group_left`, `group_right` clauses. */
  readonly grouping: string[];
  /** Labels `label_join` / `label_replace` make. */
  readonly made: string[];
}

/** One PromQL token. */
interface Token {
  readonly kind: "str" | "range" | "ident" | "num" | "op";
  readonly text: string;
}

const KEYWORDS = new Set(
  "and or unless by without on ignoring group_left group_right offset bool inf nan atan2".split(" "),
);
const GROUPING = new Set("by without on ignoring group_left group_right".split(" "));
const AGGREGATIONS = new Set(
  "sum min max avg group stddev stdvar count count_values bottomk topk quantile".split(" "),
);
const TOKEN =
  /\s*(?:("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(\[[^\]]*\])|([a-zA-Z_:][a-zA-Z0-9_:]*)|(\d[\w.]*)|(=~|!~|!=|==|<=|>=|[-+*/%^(){},=<>@]))/y;

/** PromQL as tokens: strings, ranges (`[5m]`), identifiers, numbers and durations, operators. */
function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  const text = expr.trim();
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const m = TOKEN.exec(text);
    if (!m) throw new SyntaxError(`Cannot read PromQL at ${TOKEN.lastIndex}: ${text}`);
    const kind = m[1] ? "str" : m[2] ? "range" : m[3] ? "ident" : m[4] ? "num" : "op";
    tokens.push({ kind, text: m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5]! });
  }
  return tokens;
}

/** The first string argument of the call whose `(` is token `open` (label_join's destination label). */
function firstStringArgument(tokens: readonly Token[], open: number): string | undefined {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.text === "(" || t.text === "{") depth++;
    else if (t.text === ")" || t.text === "}") depth--;
    else if (t.kind === "str" && depth === 1) return t.text.slice(1, -1);
    if (depth === 0) return undefined;
  }
  return undefined;
}

/** The metric names, matcher labels and grouping labels of a PromQL expression (a small lexer, not a parser). */
export function promqlRefs(expr: string): PromqlRefs {
  const tokens = tokenize(expr);
  const refs = {
    selectors: [] as { name: string; matchers: string[] }[],
    grouping: [] as string[],
    made: [] as string[],
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const next = tokens[i + 1];
    if (t.kind !== "ident") continue;
    if (GROUPING.has(t.text) && next?.text === "(") {
      for (i += 2; i < tokens.length && tokens[i]!.text !== ")"; i++) {
        if (tokens[i]!.kind === "ident") refs.grouping.push(tokens[i]!.text);
      }
    } else if ((t.text === "label_join" || t.text === "label_replace") && next?.text === "(") {
      const dst = firstStringArgument(tokens, i + 1);
      if (dst) refs.made.push(dst);
    } else if (AGGREGATIONS.has(t.text) && (next?.text === "by" || next?.text === "without")) {
      continue;
    } else if (next?.text !== "(" && !KEYWORDS.has(t.text)) {
      const matchers: string[] = [];
      if (next?.text === "{") {
        for (i += 2; i < tokens.length && tokens[i]!.text !== "}"; i++) {
          if (tokens[i]!.kind === "ident") matchers.push(tokens[i]!.text);
        }
      }
      refs.selectors.push({ name: t.text, matchers });
    }
  }
  return refs;
}

/**
 * What is wrong with `expr` against the declared metrics: names the CCM does not export, matchers, grouping
 * or template labels (`extraLabels`: legend or `$labels`) no series of the expression carries. Empty when
 * nothing is.
 */
export function exprProblems(
  expr: string,
  metrics: ReadonlyMap<string, DeclaredMetric>,
  extraLabels: readonly string[] = [],
): string[] {
  const byExposed = new Map<string, { metric: DeclaredMetric; labels: string[] }>();
  for (const m of metrics.values()) {
    for (const n of exposedNames(m)) {
      byExposed.set(n, { metric: m, labels: [...m.labels, ...(n.endsWith("_bucket") ? ["le"] : [])] });
    }
  }
  const refs = promqlRefs(expr);
  const problems: string[] = [];
  const carried = new Set<string>([...TARGET_LABELS, ...refs.made]);
  for (const s of refs.selectors) {
    const found = byExposed.get(s.name);
    if (!found) {
      problems.push(`${s.name} is not a metric the CCM exports`);
      continue;
    }
    for (const l of found.labels) carried.add(l);
    for (const l of s.matchers) {
      if (!found.labels.includes(l) && !TARGET_LABELS.includes(l)) {
        problems.push(`${s.name} has no label ${l}`);
      }
    }
  }
  for (const l of new Set([...refs.grouping, ...extraLabels])) {
    if (!carried.has(l)) problems.push(`no series of the expression carries the label ${l}`);
  }
  return problems;
}

/** The labels an alert's Go template uses (`{{ $labels.<name> }}`). */
export function templateLabels(text: string): string[] {
  return [...new Set([...text.matchAll(/\$labels\.([a-zA-Z_]\w*)/g)].map((m) => m[1]!))];
}

/** The labels a Grafana legend format uses (`{{<name>}}`). */
export function legendLabels(text: string): string[] {
  return [...new Set([...text.matchAll(/\{\{\s*([a-zA-Z_]\w*)\s*\}\}/g)].map((m) => m[1]!))];
}

/** The path of `name` (promtool, prometheus) on PATH, if installed. */
export function findTool(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (Deno.statSync(`${dir}/${name}`).isFile) return `${dir}/${name}`;
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/**
 * Whether the tests needing `tools` are skipped: only when one is missing outside CI (`CI` set), with a loud
 * warning. In CI (.ci/run installs them) a missing tool fails the test instead of skipping it.
 */
export function skipWithout(...tools: string[]): boolean {
  const missing = tools.filter((t) => findTool(t) === undefined);
  if (missing.length === 0 || Deno.env.get("CI")) return false;
  console.warn(
    `SKIPPED: ${missing.join(", ")} not installed (apt-get install prometheus; .ci/run installs it)`,
  );
  return true;
}

/** Runs promtool with `args` in `cwd` (default the repository root). */
export async function promtool(
  args: readonly string[],
  options: { cwd?: string; stdin?: string } = {},
): Promise<{ code: number; output: string }> {
  const tool = findTool("promtool");
  if (!tool) throw new Error("promtool is not installed (apt-get install prometheus)");
  const child = new Deno.Command(tool, {
    args: [...args],
    cwd: options.cwd ?? fileURLToPath(ROOT),
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, output: text };
}

/** Checks PromQL expressions with promtool (as recording rules of a temporary rules file); returns its output. */
export async function checkPromql(exprs: readonly string[]): Promise<{ code: number; output: string }> {
  const dir = await Deno.makeTempDir({ prefix: "ccm-promql-" });
  try {
    const rules = exprs.map((e, i) => ({ record: `ccm:check:${i}`, expr: e }));
    await Deno.writeTextFile(`${dir}/rules.json`, JSON.stringify({ groups: [{ name: "check", rules }] }));
    return await promtool(["check", "rules", `${dir}/rules.json`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
