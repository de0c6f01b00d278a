/** README.md against the code it documents. */
import assert from "node:assert/strict";
import { FLAGS } from "../config/flag_table.ts";
import { ENV_VARS } from "../config/env.ts";
import { configurationMarkdown, generatedBlock, markdownTable, normalise } from "./readme_tables.ts";

const README = Deno.readTextFileSync(new URL("../README.md", import.meta.url));

Deno.test("README's configuration tables are the flag table's and the environment's (deno task readme rewrites them)", () => {
  const block = generatedBlock(README);
  assert.ok(block !== undefined, "README has the generated configuration block");
  assert.equal(normalise(block), normalise(configurationMarkdown()), "README drifted: run deno task readme");
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
