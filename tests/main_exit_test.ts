/** `main.ts` maps every way `runCcm` can end to an exit code and a last log line. */
import assert from "node:assert/strict";
import { captureLogs, componentLogger } from "../common/log.ts";
import { exitCodeOf } from "../main.ts";

const CASES = [
  { outcome: "stopped", code: 0, line: /^stopped$/ },
  { outcome: "lost", code: 1, line: /^leadership lost: exiting/ },
  { outcome: "failed", code: 1, line: /^the controllers failed \(the Lease was released\): exiting/ },
  { outcome: "token-invalid", code: 1, line: /^the linode api token was rejected: exiting/ },
] as const;

for (const c of CASES) {
  Deno.test(`exitCodeOf() exits ${c.code} after "${c.outcome}" and says why`, async () => {
    const logs = await captureLogs("info");
    assert.equal(exitCodeOf(c.outcome, componentLogger("main")), c.code);
    const messages = logs.lines.map((l) => String(JSON.parse(l).message));
    assert.equal(messages.length, 1, messages.join("\n"));
    assert.match(messages[0] ?? "", c.line);
  });
}
