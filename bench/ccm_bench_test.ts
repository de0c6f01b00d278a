import assert from "node:assert/strict";
import { README_END, README_START, replaceReadmeBlock } from "./ccm_bench.ts";

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
