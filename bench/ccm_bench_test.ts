import assert from "node:assert/strict";
import { join } from "node:path";
import { DOC_END, DOC_START, replaceDocBlock, rewriteResults } from "./ccm_bench.ts";

const COMMITTED = new URL("./results/ccm.json", import.meta.url).pathname;

Deno.test("replaceDocBlock() replaces only the text between the markers", () => {
  const page = `# T\n\n${DOC_START}\n\nold table\n\n${DOC_END}\n\nafter\n`;
  assert.equal(
    replaceDocBlock(page, "| new |\n"),
    `# T\n\n${DOC_START}\n\n| new |\n\n${DOC_END}\n\nafter\n`,
  );
});

Deno.test("replaceDocBlock() refuses a page without the block", () => {
  assert.throws(() => replaceDocBlock("# T\n", "x"), RangeError);
  assert.throws(() => replaceDocBlock(`${DOC_END}\n${DOC_START}`, "x"), RangeError);
});

Deno.test("rewriteResults() rebuilds the table, Markdown and plot from the committed measurements", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ccm_results_" });
  try {
    await Deno.copyFile(COMMITTED, join(dir, "ccm.json"));
    const page = join(dir, "measurements.md");
    await Deno.writeTextFile(page, `# T\n\n${DOC_START}\n\n${DOC_END}\n`);
    const { report } = await rewriteResults(dir, page);
    const md = await Deno.readTextFile(join(dir, "ccm.md"));
    assert.equal(md.split("\n").filter((l) => l.startsWith("| ")).length, report.rows.length + 2);
    assert.ok((await Deno.readTextFile(page)).includes(md.trim()), "the page's block holds the table");
    assert.match(await Deno.readTextFile(join(dir, "calls_per_minute.svg")), /<polyline /);
    const saved = JSON.parse(await Deno.readTextFile(join(dir, "ccm.json")));
    assert.equal(saved.report.rows.length, report.rows.length);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
