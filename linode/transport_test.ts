import assert from "node:assert/strict";
import { captureLogs } from "../common/log.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { LinodeApiError } from "./errors.ts";
import { fileToken } from "./token.ts";
import { clientFor } from "./testdata/test_support.ts";
import { FakeClock } from "../common/clock.ts";

const TOKEN = "tok-9f8e7d6c5b4a-never-print-me";

/** Everything an error exposes: message, JSON, inspection, and the same for every cause. */
function exposed(e: unknown): string {
  const parts: string[] = [];
  for (let cur = e, depth = 0; cur !== undefined && depth < 10; depth++) {
    parts.push(String(cur), JSON.stringify(cur) ?? "", Deno.inspect(cur, { depth: 10, showHidden: true }));
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return parts.join("\n");
}

Deno.test("LinodeClient() never lets the token into logs, errors or metrics", async () => {
  const logs = await captureLogs("debug");
  await using sim = await startLinodeSim({ token: TOKEN });
  const linode = sim.world.addInstance({ label: "n1" });
  // --linodego-debug on: every request is logged too.
  const { client, metrics } = clientFor(sim, { timeoutMs: 50, maxRetries: 1, logRequests: true });
  const failures: unknown[] = [];
  const attempt = async (call: () => Promise<unknown>) => {
    try {
      await call();
    } catch (e) {
      failures.push(e);
    }
  };
  await attempt(() => client.instances.get(linode.id));
  await attempt(() => client.instances.get(999_999));
  sim.faults.rateLimit(1, { route: "/linode/instances/{id}", count: 2 });
  await attempt(() => client.instances.get(linode.id));
  sim.faults.error(500, { route: "/linode/instances", count: 2 });
  await attempt(() => client.instances.list());
  const hang = sim.faults.hang({ route: "/vpcs" });
  await attempt(() => client.vpcs.list());
  sim.faults.remove(hang);
  await attempt(() => client.nodeBalancers.createConfigNode(1, 1, { label: "x", address: "8.8.8.8:80" }));
  const wrongToken = clientFor({ url: sim.url, token: `${TOKEN}-old` }).client;
  await attempt(() => wrongToken.instances.list());
  const missingFile = clientFor(sim, { token: fileToken("/nonexistent/token", { clock: new FakeClock() }) });
  await attempt(() => missingFile.client.instances.list());
  await sim.close();
  await attempt(() => client.instances.get(linode.id));

  const kinds: string[] = failures.map((e) => e instanceof LinodeApiError ? e.kind : "other");
  for (const kind of ["not_found", "rate_limited", "server", "timeout", "auth", "network"]) {
    assert.ok(kinds.includes(kind), `scenario produced a ${kind} error (got ${kinds.join(",")})`);
  }
  assert.ok(logs.lines.length > 0, "retries were logged");
  const everything = [logs.text(), metrics.render(), ...failures.map(exposed)].join("\n");
  assert.ok(everything.includes("/linode/instances/{id}"), "the haystack holds real output");
  assert.equal(everything.includes(TOKEN), false);
  assert.equal(everything.includes(TOKEN.slice(4, 20)), false);
  assert.equal(/Bearer/i.test(everything), false);
});

Deno.test("LinodeClient({ logRequests }) logs each request's method, route, status and duration, nothing more", async () => {
  const logs = await captureLogs("info");
  await using sim = await startLinodeSim({ token: TOKEN });
  const quiet = clientFor(sim).client;
  await quiet.instances.list();
  assert.equal(logs.lines.length, 0, "off by default");
  const { client } = clientFor(sim, { logRequests: true });
  await client.instances.list();
  await client.instances.get(404_404).catch(() => {});
  const records = logs.lines.map((l) => JSON.parse(l));
  assert.deepEqual(records.map((r) => [r.method, r.route, r.status]), [
    ["GET", "/linode/instances", "200"],
    ["GET", "/linode/instances/{id}", "404"],
  ]);
  assert.ok(records.every((r) => typeof r.ms === "number" && r.level === "INFO"));
  assert.equal(logs.text().includes(TOKEN), false);
});
