/**
 * The README's configuration tables, generated from the flag table (`config/flag_table.ts`) and the
 * variables `config/env.ts` reads, so the README cannot drift from what the program accepts.
 * tests/readme_test.ts compares; `deno task readme` rewrites the marked block of README.md.
 */
import { ENV_VARS } from "../config/env.ts";
import { FLAG_GROUP_TITLES, type FlagGroup, FLAGS, type FlagSpec } from "../config/flag_table.ts";
import { formatGoDuration } from "../config/flags.ts";

/** Where the generated block sits in README.md. */
export const BEGIN = "<!-- generated:configuration begin (deno task readme) -->";
/** End of the generated block. */
export const END = "<!-- generated:configuration end -->";

const GROUPS: readonly FlagGroup[] = ["linode", "cloud", "leader", "serve", "log"];

function code(text: string): string {
  return text === "" ? "" : `\`${text}\``;
}

function defaultOf(spec: FlagSpec): string {
  if (spec.kind === "duration" && typeof spec.def === "number") return code(formatGoDuration(spec.def));
  if (Array.isArray(spec.def)) return code(spec.def.join(","));
  return code(String(spec.def));
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
    `${FLAG_GROUP_TITLES.ignored} (logged once at start): ${ignored}.`,
  ].join("\n\n");
}

/** Whitespace-insensitive form of a block (`deno fmt` may re-pad tables and re-wrap the last line). */
export function normalise(text: string): string {
  return text.replace(/-{3,}/g, "---").replace(/\s+/g, " ").trim();
}

/** The generated block of `readme`, between the markers; undefined when they are missing. */
export function generatedBlock(readme: string): string | undefined {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  return start < 0 || end < start ? undefined : readme.slice(start + BEGIN.length, end);
}

/** `readme` with its generated block replaced by a fresh one. */
export function withFreshBlock(readme: string): string {
  const block = generatedBlock(readme);
  if (block === undefined) throw new TypeError(`README.md has no ${BEGIN} … ${END} block`);
  return readme.replace(`${BEGIN}${block}${END}`, `${BEGIN}\n\n${configurationMarkdown()}\n\n${END}`);
}

if (import.meta.main) {
  const path = new URL("../README.md", import.meta.url);
  Deno.writeTextFileSync(path, withFreshBlock(Deno.readTextFileSync(path)));
}
