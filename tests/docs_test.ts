/** README.md and docs/ against the code they document, and against each other (every link lands). */
import assert from "node:assert/strict";
import { FLAGS } from "../config/flag_table.ts";
import { ENV_VARS } from "../config/env.ts";
import { configurationMarkdown, generatedBlock, markdownTable, normalise } from "./docs_tables.ts";

const ROOT = new URL("../", import.meta.url);
const CONFIGURATION = Deno.readTextFileSync(new URL("docs/configuration.md", ROOT));

/** The README and every page under docs/, by their path from the repository root. */
function pages(): Map<string, string> {
  const out = new Map([["README.md", Deno.readTextFileSync(new URL("README.md", ROOT))]]);
  for (const e of Deno.readDirSync(new URL("docs/", ROOT))) {
    if (e.isFile && e.name.endsWith(".md")) {
      out.set(`docs/${e.name}`, Deno.readTextFileSync(new URL(`docs/${e.name}`, ROOT)));
    }
  }
  return out;
}

/** Markdown without fenced blocks and inline code, where a `[x](y)` is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = (m[1] ?? "").toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Every relative link of `markdown` (page `from`) whose file or heading does not exist. */
function brokenLinks(from: string, markdown: string, all: Map<string, string>): string[] {
  const broken: string[] = [];
  for (const m of prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1] ?? "";
    if (/^[a-z]+:/.test(target)) continue;
    const [file = "", anchor] = target.split("#");
    const path = file === "" ? from : new URL(file, new URL(from, ROOT)).pathname.slice(ROOT.pathname.length);
    let exists = true;
    try {
      Deno.statSync(new URL(path, ROOT));
    } catch {
      exists = false;
    }
    const page = all.get(path);
    if (!exists || (anchor !== undefined && (page === undefined || !anchors(page).has(anchor)))) {
      broken.push(`${from}: ${target}`);
    }
  }
  return broken;
}

Deno.test("docs/configuration.md's tables are the flag table's and the environment's (deno task docs rewrites them)", () => {
  const block = generatedBlock(CONFIGURATION);
  assert.ok(block !== undefined, "docs/configuration.md has the generated configuration block");
  assert.equal(normalise(block), normalise(configurationMarkdown()), "docs drifted: run deno task docs");
});

Deno.test("configurationMarkdown() has a row for every variable and every flag", () => {
  const text = configurationMarkdown();
  for (const v of ENV_VARS) assert.ok(text.includes(`| \`${v.name}\``), v.name);
  for (const f of FLAGS) assert.ok(text.includes(`\`--${f.name}\``), f.name);
});

Deno.test("markdownTable() pads every column to its widest cell and escapes pipes", () => {
  assert.equal(
    markdownTable(["a", "bb"], [["x|y", "z"]]),
    "| a    | bb  |\n| ---- | --- |\n| x\\|y | z   |",
  );
});

Deno.test("README stays a front door: under 200 lines, the two commands, every docs/ page one click away", () => {
  const all = pages();
  const readme = all.get("README.md") ?? "";
  assert.ok(readme.split("\n").length < 200, `README.md has ${readme.split("\n").length} lines`);
  assert.ok(readme.includes("npx -y deno@2.9.6 task demo"), "the demo command");
  assert.ok(readme.includes("npx -y deno@2.9.6 task test"), "the test command (.ci/run runs it)");
  for (const page of all.keys()) {
    if (page !== "README.md") assert.ok(readme.includes(`](${page})`), `README links ${page}`);
  }
});

Deno.test("every relative link of README.md and docs/ names a file that exists and a heading it has", () => {
  const all = pages();
  assert.deepEqual([...all].flatMap(([from, text]) => brokenLinks(from, text, all)), []);
});

Deno.test("anchors() follows GitHub: punctuation dropped, spaces as hyphens, repeats numbered", () => {
  const md = "# Take-over on SIGTERM (`bench/takeover.ts`)\n## The CCM's kubeconfig\n## A\n## A\n";
  assert.deepEqual([...anchors(md)], [
    "take-over-on-sigterm-benchtakeoverts",
    "the-ccms-kubeconfig",
    "a",
    "a-1",
  ]);
});
