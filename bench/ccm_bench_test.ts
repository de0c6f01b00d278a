import assert from "node:assert/strict";
import { join } from "node:path";
import { README_END, README_START, replaceReadmeBlock, rewriteResults } from "./ccm_bench.ts";

const COMMITTED = new URL("./results/ccm.json", import.meta.url).pathname;

Deno.test("replaceReadmeBlock() replaces only the text between the markers", () => {
  const readme = `# T\n\n${README_START}\n\nold table\n\n${README_END}\n\nafter\n`;
  assert.equal(
    replaceReadmeBlock(readme, "| new |\n"),
    `# T\n\n${README_START}\n\n| new |\n\n${README_END}\n\nafter\n`,
  );
});

Deno.test("replaceReadmeBlock() refuses a README without the block", () => {
  assert.throws(() => replaceReadmeBlock("# T\n", "x"), RangeError);
  assert.throws(() => replaceReadmeBlock(`${README_END}\n${README_START}`, "x"), RangeError);
});

Deno.test("rewriteResults() rebuilds the table, Markdown and plot from the committed measurements", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ccm_results_" });
  try {
    await Deno.copyFile(COMMITTED, join(dir, "ccm.json"));
    const readme = join(dir, "README.md");
    await Deno.writeTextFile(readme, `# T\n\n${README_START}\n\n${README_END}\n`);
    const { report } = await rewriteResults(dir, readme);
    const md = await Deno.readTextFile(join(dir, "ccm.md"));
    assert.equal(md.split("\n").filter((l) => l.startsWith("| ")).length, report.rows.length + 2);
    assert.ok((await Deno.readTextFile(readme)).includes(md.trim()), "the README block holds the table");
    assert.match(await Deno.readTextFile(join(dir, "calls_per_minute.svg")), /<polyline /);
    const saved = JSON.parse(await Deno.readTextFile(join(dir, "ccm.json")));
    assert.equal(saved.report.rows.length, report.rows.length);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
