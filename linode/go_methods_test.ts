import assert from "node:assert/strict";
import { startLinodeSim } from "../sim/linode/server.ts";
import { GO_CLIENT_METHODS, GO_CLIENT_METRIC } from "./go_methods.ts";
import { clientFor } from "./testdata/test_support.ts";

function goCalls(metrics: ReturnType<typeof clientFor>["metrics"]) {
  return metrics.counter(GO_CLIENT_METRIC, "", ["method", "result"]);
}

Deno.test("ccm_linode_client_requests_total counts a paged listing once, as the Go CCM's ListInstances", async () => {
  await using sim = await startLinodeSim();
  sim.world.addInstances(1234);
  const { client, metrics } = clientFor(sim);
  await client.instances.list();
  assert.equal(sim.calls.count("GET /v4/linode/instances"), 3);
  assert.equal(goCalls(metrics).get({ method: "ListInstances", result: "ok" }), 1);
  assert.match(
    metrics.render(),
    /^ccm_linode_client_requests_total\{method="ListInstances",result="ok"\} 1$/m,
  );
  // This project's per-request metric stays beside it.
  assert.match(
    metrics.render(),
    /^ccm_linode_requests_total\{method="GET",route="\/linode\/instances",status="200"\} 3$/m,
  );
});

Deno.test("ccm_linode_client_requests_total counts a retried call once, and a failed one as error", async () => {
  await using sim = await startLinodeSim();
  const linode = sim.world.addInstance({ label: "n1" });
  sim.faults.rateLimit(1, { route: "/linode/instances/{id}", count: 1 });
  const { client, metrics } = clientFor(sim);
  await client.instances.get(linode.id);
  await assert.rejects(client.instances.get(linode.id + 1000));
  assert.equal(sim.calls.count("GET /v4/linode/instances/{id}"), 3);
  assert.equal(goCalls(metrics).get({ method: "GetInstance", result: "ok" }), 1);
  assert.equal(goCalls(metrics).get({ method: "GetInstance", result: "error" }), 1);
  assert.equal(goCalls(metrics).total(), 2);
});

/** Every `spec("METHOD", route)` in linode/*.ts, the route given inline or as the `const route` above it. */
function routeTemplates(): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync(new URL(".", import.meta.url))) {
    if (!entry.name.endsWith(".ts") || entry.name.endsWith("_test.ts")) continue;
    const text = Deno.readTextFileSync(new URL(entry.name, import.meta.url));
    let route = "";
    for (
      const m of text.matchAll(
        /const route = "([^"]+)"|spec\(\s*"(GET|POST|PUT|DELETE)",\s*(?:"([^"]+)"|route)/g,
      )
    ) {
      if (m[1] !== undefined) route = m[1];
      else found.push(`${m[2]} ${m[3] ?? route}`);
    }
  }
  return found;
}

Deno.test("GO_CLIENT_METHODS names the linodego method of every request this client sends", () => {
  const templates = routeTemplates();
  assert.ok(templates.length > 30, templates.join("\n"));
  const missing = templates.filter((t) => !(t in GO_CLIENT_METHODS));
  assert.deepEqual(missing, []);
});
