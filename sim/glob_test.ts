import assert from "node:assert/strict";
import { globToRegExp } from "./glob.ts";

Deno.test("globToRegExp() matches * as any run and everything else literally, anchored", () => {
  const re = globToRegExp("/linode/instances/{id}/configs*");
  assert.ok(re.test("/linode/instances/{id}/configs"));
  assert.ok(re.test("/linode/instances/{id}/configs/{id}/interfaces/{id}"));
  assert.equal(re.test("/v4/linode/instances/{id}/configs"), false, "anchored at the start");
  assert.equal(globToRegExp("/a.b").test("/axb"), false, "a dot is literal");
  assert.equal(globToRegExp("/nodes").test("/nodes/x"), false, "anchored at the end");
});
