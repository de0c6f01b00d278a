import assert from "node:assert/strict";
import { getNodeBalancers } from "@linode/api-v4";
import { FakeClock } from "../../common/clock.ts";
import { DOCUMENTED_RATE_LIMITS, isCollection } from "./rate_limit.ts";
import { startLinodeSim } from "./server.ts";
import { apiFetch, failure, withSim } from "./testdata/test_client.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

Deno.test("every API response carries X-RateLimit-Limit, -Remaining and -Reset, errors included", async () => {
  await using sim = await startLinodeSim({ clock: new FakeClock(T0) });
  const ok = await apiFetch(sim, "GET", "/nodebalancers");
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get("x-ratelimit-limit"), "1000000");
  assert.equal(ok.headers.get("x-ratelimit-remaining"), "999999");
  assert.equal(ok.headers.get("x-ratelimit-reset"), String((T0 + 60_000) / 1000));
  const missing = await apiFetch(sim, "GET", "/nodebalancers/1");
  assert.deepEqual([missing.status, missing.headers.get("x-ratelimit-remaining")], [404, "999998"]);
  const refused = await apiFetch(sim, "POST", "/nodebalancers", JSON.stringify({ label: "x" }));
  assert.deepEqual([refused.status, refused.headers.get("x-ratelimit-remaining")], [400, "999997"]);
  sim.faults.error(503, { count: 1 });
  const faulted = await apiFetch(sim, "GET", "/nodebalancers");
  assert.deepEqual([faulted.status, faulted.headers.get("x-ratelimit-remaining")], [503, "999996"]);
  const admin = await fetch(`${sim.origin}/__admin/calls`);
  await admin.body?.cancel();
  assert.equal(admin.headers.get("x-ratelimit-limit"), null, "the admin endpoint is not the API");
});

Deno.test("a configured limit answers 429 with Retry-After until its window resets on the sim's clock", async () => {
  const clock = new FakeClock(T0);
  await using sim = await startLinodeSim({ clock });
  sim.rateLimits.configure([{
    name: "nb-writes",
    method: "POST",
    route: "/nodebalancers*",
    limit: 2,
    windowMs: 30_000,
  }]);
  const post = () => apiFetch(sim, "POST", "/nodebalancers", JSON.stringify({ region: "us-east" }));
  assert.equal((await post()).headers.get("x-ratelimit-remaining"), "1");
  assert.equal((await post()).headers.get("x-ratelimit-remaining"), "0");
  clock.advance(10_000);
  const limited = await post();
  assert.equal(limited.status, 429);
  assert.deepEqual(limited.body, { errors: [{ reason: "Too many requests" }] });
  assert.equal(limited.headers.get("retry-after"), "20");
  assert.equal(limited.headers.get("x-ratelimit-remaining"), "0");
  assert.equal(limited.headers.get("x-ratelimit-reset"), String((T0 + 30_000) / 1000));
  assert.equal(sim.world.nodeBalancers().length, 2, "a refused request does nothing");
  const get = await apiFetch(sim, "GET", "/nodebalancers");
  assert.deepEqual(
    [get.status, get.headers.get("x-ratelimit-limit")],
    [200, null],
    "other routes are not limited",
  );
  assert.equal(
    sim.calls.log.filter((c) => c.fault === "rateLimited").length,
    1,
    "refusals are counted and marked",
  );
  clock.advance(20_000);
  const after = await post();
  assert.deepEqual([after.status, after.headers.get("x-ratelimit-remaining")], [200, "1"]);
});

Deno.test("api-v4 calls through the project's transport see the 429 and its Retry-After", async () => {
  await using sim = await startLinodeSim({ clock: new FakeClock(T0) });
  sim.rateLimits.configure([{ name: "lists", method: "GET", list: true, limit: 1, windowMs: 60_000 }]);
  assert.equal((await withSim(sim, () => getNodeBalancers())).results, 0);
  const limited = await failure(withSim(sim, () => getNodeBalancers()));
  assert.deepEqual(limited, { status: 429, errors: [{ reason: "Too many requests" }], retryAfter: "60" });
});

Deno.test("DOCUMENTED_RATE_LIMITS count per endpoint, lists apart, and report the limit closest to running out", async () => {
  const clock = new FakeClock(T0);
  await using sim = await startLinodeSim({ clock, rateLimits: DOCUMENTED_RATE_LIMITS });
  const list = await apiFetch(sim, "GET", "/nodebalancers");
  assert.deepEqual([list.headers.get("x-ratelimit-limit"), list.headers.get("x-ratelimit-remaining")], [
    "200",
    "199",
  ]);
  const one = await apiFetch(sim, "GET", "/nodebalancers/7");
  assert.deepEqual([one.headers.get("x-ratelimit-limit"), one.headers.get("x-ratelimit-remaining")], [
    "400",
    "399",
  ]);
  for (let i = 0; i < 10; i++) await apiFetch(sim, "POST", "/linode/instances", "{}");
  const eleventh = await apiFetch(sim, "POST", "/linode/instances", "{}");
  assert.deepEqual([eleventh.status, eleventh.headers.get("retry-after")], [429, "30"]);
  const general = await apiFetch(sim, "GET", "/profile");
  assert.deepEqual([general.headers.get("x-ratelimit-limit"), general.headers.get("x-ratelimit-remaining")], [
    "400",
    "399",
  ]);
});

Deno.test("/__admin/rate-limits shows and replaces the rules", async () => {
  await using sim = await startLinodeSim({ clock: new FakeClock(T0) });
  const put = async (body: unknown) => {
    const res = await fetch(`${sim.origin}/__admin/rate-limits`, {
      method: "PUT",
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  assert.equal((await put({ preset: "documented" })).body.data.length, DOCUMENTED_RATE_LIMITS.length);
  const custom = await put({ rules: [{ name: "tiny", limit: 1, windowMs: 1000, per: "all" }] });
  assert.deepEqual(custom.body.data, [{ name: "tiny", limit: 1, windowMs: 1000, per: "all" }]);
  await apiFetch(sim, "GET", "/profile");
  assert.equal((await apiFetch(sim, "GET", "/nodebalancers")).status, 429);
  assert.equal((await put({ rules: [{ name: "bad", limit: 0, windowMs: 1000 }] })).status, 400);
  assert.equal((await put({})).status, 400);
  await put({ preset: "generous" });
  assert.equal((await apiFetch(sim, "GET", "/nodebalancers")).status, 200);
});

Deno.test("isCollection() tells paginated lists from single objects by route template", () => {
  const cases: [string, string, boolean][] = [
    ["GET", "/v4/nodebalancers", true],
    ["GET", "/v4/nodebalancers/{id}/configs/{id}/nodes", true],
    ["GET", "/v4/networking/reserved/ips", true],
    ["GET", "/v4/nodebalancers/{id}", false],
    ["GET", "/v4/networking/reserved/ips/{address}", false],
    ["GET", "/v4/networking/firewalls/{id}/rules", false],
    ["GET", "/v4/linode/instances/{id}/ips", false],
    ["GET", "/v4/profile", false],
    ["POST", "/v4/nodebalancers", false],
  ];
  for (const [method, template, want] of cases) {
    assert.equal(isCollection(method, template), want, `${method} ${template}`);
  }
});
