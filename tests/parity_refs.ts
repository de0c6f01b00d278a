/**
 * What a row of docs/migration.md's tables cites as its backing, for `tests/parity_table_test.ts`: a test of
 * this repository (a code span ending in `_test.ts`), or a Go source it was read from: the Go CCM's own
 * (`cloud/…`, `sentry/…`, `main.go`, its chart under `deploy/chart/`) at the HEAD of its mirror, or an upstream
 * module the Go CCM pins (`k8s.io/<module>/…`, `github.com/linode/linodego/v2/…`) at the revision its go.mod
 * names. A function named in a code span right after a Go file's (`file.go` `name`, `other`) must be in that
 * file. The mirrors are the bare git repositories `tests/upstream_flags_gen.ts` reads.
 */

/** One row of a Markdown table of the page, with the heading it sits under. */
export interface TableRow {
  readonly heading: string;
  /** 1-based line number in the page. */
  readonly line: number;
  readonly text: string;
}

/** Where a cited Go file lives: the mirror, the revision the Go CCM builds with, the path inside. */
export interface GoSource {
  readonly mirror: string;
  readonly rev: string;
  readonly path: string;
}

/** A cited Go file and the functions (or other identifiers) named right after it. */
export interface GoRef {
  /** As written in the row, e.g. `k8s.io/cloud-provider/app/core.go`. */
  readonly cited: string;
  readonly source: GoSource;
  readonly names: readonly string[];
}

/** The upstream modules the Go CCM pins (its go.mod), by import path, with their mirrors. */
const UPSTREAM: readonly { prefix: string; mirror: string; rev: string }[] = [
  { prefix: "k8s.io/cloud-provider/", mirror: "kubernetes+cloud-provider", rev: "v0.35.4" },
  { prefix: "k8s.io/controller-manager/", mirror: "kubernetes+controller-manager", rev: "v0.35.4" },
  { prefix: "k8s.io/component-base/", mirror: "kubernetes+component-base", rev: "v0.35.4" },
  { prefix: "k8s.io/component-helpers/", mirror: "kubernetes+component-helpers", rev: "v0.35.4" },
  { prefix: "k8s.io/apiserver/", mirror: "kubernetes+apiserver", rev: "v0.35.4" },
  { prefix: "k8s.io/client-go/", mirror: "kubernetes+client-go", rev: "v0.35.4" },
  { prefix: "github.com/linode/linodego/v2/", mirror: "linode+linodego", rev: "v2.0.0" },
];

/** The Go CCM's own tree, at the HEAD of its mirror. */
const GO_CCM = { mirror: "linode+linode-cloud-controller-manager", rev: "HEAD" };

/** Paths of the Go CCM's repository the tables cite (its code and its Helm chart). */
const GO_CCM_PATH = /^(?:main\.go|(?:cloud|sentry)\/[\w/.-]+\.go|deploy\/chart\/[\w/.-]+)$/;

/** Folders of this repository whose files the tables name. */
const REPO_PATH =
  /^(?:bench|cache|common|config|controllers|deploy|docs|kube|lease|linode|lint|server|sim|tests|wiring)\/[\w/.-]+\.(?:ts|yaml|json|md)$/;

const SPAN = /`([^`]+)`/g;

/** Every row of every table on the page: header and separator rows left out. */
export function tableRows(page: string): TableRow[] {
  const lines = page.split("\n");
  const rows: TableRow[] = [];
  let heading = "";
  lines.forEach((text, i) => {
    if (text.startsWith("#")) heading = text.replace(/^#+\s*/, "");
    if (!text.startsWith("|") || /^\|[\s|:-]+\|$/.test(text)) return;
    const next = lines[i + 1] ?? "";
    if (/^\|[\s|:-]+\|$/.test(next)) return; // the header row sits above its separator
    rows.push({ heading, line: i + 1, text });
  });
  return rows;
}

function spans(text: string): { value: string; start: number; end: number }[] {
  return [...text.matchAll(SPAN)].map((m) => ({
    value: m[1] ?? "",
    start: m.index ?? 0,
    end: (m.index ?? 0) + m[0].length,
  }));
}

/** The tests of this repository a row names. */
export function citedTests(text: string): string[] {
  return spans(text).map((s) => s.value).filter((v) => /^[\w./-]+_test\.ts$/.test(v));
}

/** Where a cited Go path lives, or undefined when it is not a Go source the tables may cite. */
export function goSourceOf(cited: string): GoSource | undefined {
  const upstream = UPSTREAM.find((u) => cited.startsWith(u.prefix));
  if (upstream && cited.endsWith(".go")) {
    return { mirror: upstream.mirror, rev: upstream.rev, path: cited.slice(upstream.prefix.length) };
  }
  return GO_CCM_PATH.test(cited) ? { ...GO_CCM, path: cited } : undefined;
}

/** The Go sources a row names, each with the identifiers named right after it. */
export function citedGoSources(text: string): GoRef[] {
  const all = spans(text);
  const refs: GoRef[] = [];
  all.forEach((span, i) => {
    const source = goSourceOf(span.value);
    if (!source) return;
    const names: string[] = [];
    let end = span.end;
    for (const next of all.slice(i + 1)) {
      const between = text.slice(end, next.start);
      if (!/^(?:\s*,\s*|\s+and\s+|\s+)$/.test(between) || !/^[A-Za-z_]\w*$/.test(next.value)) break;
      names.push(next.value);
      end = next.end;
    }
    refs.push({ cited: span.value, source, names });
  });
  return refs;
}

/** Other files of this repository a row names (sources, manifests, pages). */
export function citedRepoFiles(text: string): string[] {
  return spans(text).map((s) => s.value)
    .filter((v) => REPO_PATH.test(v) && !v.endsWith("_test.ts") && !goSourceOf(v));
}

/** The text of a Go file at its revision, or undefined when the mirror does not hold it. */
export async function readGoSource(mirrors: string, source: GoSource): Promise<string | undefined> {
  const out = await new Deno.Command("git", {
    args: ["-C", `${mirrors}/${source.mirror}/repo`, "show", `${source.rev}:${source.path}`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return out.success ? new TextDecoder().decode(out.stdout) : undefined;
}

/** Whether the mirror a cited Go file lives in is on this machine. */
export function haveMirror(mirrors: string, source: GoSource): boolean {
  try {
    return Deno.statSync(`${mirrors}/${source.mirror}/repo`).isDirectory;
  } catch {
    return false;
  }
}

/** The path a flag's registering source is cited by: `main.go` for the Go CCM's own, else the module path. */
export function citedPathOf(from: string): string {
  const [module = "", path = ""] = from.split(" ");
  return module === "github.com/linode/linode-cloud-controller-manager" ? path : `${module}/${path}`;
}
