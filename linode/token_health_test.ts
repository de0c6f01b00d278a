import assert from "node:assert/strict";
import { systemClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { clientFor } from "./testdata/test_support.ts";
import { checkToken, watchTokenHealth } from "./token_health.ts";

const log = componentLogger("token-test");

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

Deno.test("checkToken() is valid on 200, invalid on 401, and throws on a 5xx (unknown is not invalid)", async () => {
  await using sim = await startLinodeSim();
  const { client } = clientFor(sim, { maxRetries: 0 });
  assert.equal(await checkToken(client), "valid");
  sim.faults.error(503, { route: "/profile", count: 1 });
  await assert.rejects(checkToken(client), { name: "LinodeApiError", status: 503 });
  sim.setToken("rotated");
  assert.equal(await checkToken(client), "invalid");
  assert.equal(sim.calls.count("GET /v4/profile"), 3);
});

Deno.test("watchTokenHealth() checks every period, rides out 5xx, and stops at the first 401", async () => {
  await using sim = await startLinodeSim();
  const { client } = clientFor(sim, { maxRetries: 0 });
  const metrics = new Registry();
  sim.faults.error(500, { route: "/profile", count: 2 });
  const stop = new AbortController();
  const watching = watchTokenHealth({ client, clock: systemClock, log, metrics, periodMs: 10 }, stop.signal);
  assert.match(metrics.render(), /^ccm_linode_token_check_errors_total 0$/m, "shown from 0");
  await until(() => sim.calls.count("GET /v4/profile") >= 4, "four checks");
  assert.equal(metrics.gauge("ccm_linode_token_valid", "").get(), 1);
  sim.setToken("rotated");
  assert.equal(await watching, "invalid");
  assert.equal(metrics.gauge("ccm_linode_token_valid", "").get(), 0);
  assert.equal(metrics.counter("ccm_linode_token_check_errors_total", "").get(), 2);
  stop.abort();
});

Deno.test("watchTokenHealth() returns stopped when aborted, without another call", async () => {
  await using sim = await startLinodeSim();
  const { client } = clientFor(sim);
  const stop = new AbortController();
  const watching = watchTokenHealth(
    { client, clock: systemClock, log, metrics: new Registry(), periodMs: 60_000 },
    stop.signal,
  );
  stop.abort();
  assert.equal(await watching, "stopped");
  assert.equal(sim.calls.total(), 0);
});
