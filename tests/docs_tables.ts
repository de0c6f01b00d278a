/**
 * The configuration tables of docs/configuration.md, generated from the flag table (`config/flag_table.ts`)
 * and the variables `config/env.ts` reads, so the docs cannot drift from what the program accepts.
 * tests/docs_test.ts compares; `deno task docs` rewrites the marked block of docs/configuration.md.
 */
import { ENV_VARS } from "../config/env.ts";
import { FLAG_GROUP_TITLES, type FlagGroup, FLAGS, type FlagSpec } from "../config/flag_table.ts";
import { formatDefault } from "../config/flags.ts";

/** Where the generated block sits in docs/configuration.md. */
export const BEGIN = "<!-- generated:configuration begin (deno task docs) -->";
/** End of the generated block. */
export const END = "<!-- generated:configuration end -->";

const GROUPS: readonly FlagGroup[] = ["linode", "cloud", "leader", "serve", "log"];

function code(text: string): string {
  return text === "" ? "" : `\`${text}\``;
}

function defaultOf(spec: FlagSpec): string {
  return code(formatDefault(spec));
}

/** A Markdown table with every column padded to its widest cell, as `deno fmt` writes it. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [header, ...rows].map((r) => r.map((c) => c.replaceAll("|", "\\|")));
  const widths = header.map((_, i) => Math.max(3, ...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(widths[i] ?? 3)).join(" | ")} |`;
  return [
    line(cells[0] ?? []),
    `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`,
    ...cells.slice(1).map(line),
  ]
    .join("\n");
}

/** The whole generated block: the variables, one table per flag group, the accepted-but-ignored flags. */
export function configurationMarkdown(): string {
  const env = markdownTable(
    ["variable", "default", "meaning"],
    ENV_VARS.map((v) => [code(v.name), code(v.def), v.help]),
  );
  const groups = GROUPS.map((group) => {
    const rows = FLAGS.filter((f) => f.group === group).map((
      f,
    ) => [code(`--${f.name}`), defaultOf(f), f.help]);
    return `${FLAG_GROUP_TITLES[group]}:\n\n${markdownTable(["flag", "default", "meaning"], rows)}`;
  });
  const ignored = FLAGS.filter((f) => f.group === "ignored").map((f) => code(`--${f.name}`)).join(", ");
  return [
    "Environment (the Go CCM's names and defaults):",
    env,
    ...groups,
    `${FLAG_GROUP_TITLES.ignored}: ${ignored}.`,
  ].join("\n\n");
}

/** Whitespace-insensitive form of a block (`deno fmt` may re-pad tables and re-wrap the last line). */
export function normalise(text: string): string {
  return text.replace(/-{3,}/g, "---").replace(/\s+/g, " ").trim();
}

/** The generated block of `page`, between the markers; undefined when they are missing. */
export function generatedBlock(page: string): string | undefined {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  return start < 0 || end < start ? undefined : page.slice(start + BEGIN.length, end);
}

/** `page` with its generated block replaced by a fresh one. */
export function withFreshBlock(page: string): string {
  const block = generatedBlock(page);
  if (block === undefined) throw new TypeError(`docs/configuration.md has no ${BEGIN} … ${END} block`);
  return page.replace(`${BEGIN}${block}${END}`, `${BEGIN}\n\n${configurationMarkdown()}\n\n${END}`);
}

if (import.meta.main) {
  const path = new URL("../docs/configuration.md", import.meta.url);
  Deno.writeTextFileSync(path, withFreshBlock(Deno.readTextFileSync(path)));
  // Formatted with the project's settings, so the page passes `deno fmt --check` as written.
  const config = new URL("../deno.json", import.meta.url).pathname;
  const fmt = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", "--config", config, path.pathname],
  });
  if (!(await fmt.output()).success) throw new Error(`deno fmt failed on ${path.pathname}`);
}
