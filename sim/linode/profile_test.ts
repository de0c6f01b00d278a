import assert from "node:assert/strict";
import { getProfile } from "@linode/api-v4";
import { startLinodeSim } from "./server.ts";
import { failure, withSim } from "./testdata/test_client.ts";

Deno.test("getProfile() answers the token's user on /v4 and /v4beta, and 401 without the token", async () => {
  await using sim = await startLinodeSim();
  const profile = await withSim(sim, () => getProfile());
  assert.equal(profile.username, "sim-user");
  assert.equal(profile.restricted, false);
  const beta = await fetch(`${sim.origin}/v4beta/profile`, {
    headers: { authorization: `Bearer ${sim.token}` },
  });
  assert.equal((await beta.json()).uid, 1);
  assert.deepEqual(await failure(withSim(sim, () => getProfile(), { token: "wrong" })), {
    status: 401,
    errors: [{ reason: "Invalid Token" }],
  });
  assert.equal(sim.calls.count("GET /v4/profile"), 2);
});

Deno.test("setToken() and PUT /__admin/token rotate the accepted token: the old one answers 401", async () => {
  await using sim = await startLinodeSim({ token: "first" });
  sim.setToken("second");
  assert.equal(sim.token, "second");
  assert.equal((await failure(withSim(sim, () => getProfile(), { token: "first" }))).status, 401);
  assert.equal((await withSim(sim, () => getProfile())).username, "sim-user");
  const res = await fetch(`${sim.origin}/__admin/token`, {
    method: "PUT",
    body: JSON.stringify({ token: "third" }),
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  assert.equal(sim.token, "third");
  assert.equal((await failure(withSim(sim, () => getProfile(), { token: "second" }))).status, 401);
  const bad = await fetch(`${sim.origin}/__admin/token`, { method: "PUT", body: "{}" });
  assert.equal(bad.status, 400);
  assert.deepEqual((await bad.json()).errors, [{ field: "token", reason: "token is required" }]);
});
