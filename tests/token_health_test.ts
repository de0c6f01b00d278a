/** `--enable-token-health-checker`: a rejected token stops the CCM at start, and a revoked one stops it later. */
import assert from "node:assert/strict";
import { runCcm } from "../ccm.ts";
import { systemClock } from "../common/clock.ts";
import { parseConfig } from "../config/config.ts";
import { Registry } from "../common/metrics.ts";
import { startDemoWorld } from "../sim/demo_world.ts";
import { FAST_LEASE_FLAGS, LeaseHistory, runCcmToExit, waitFor } from "./process.ts";

const TOKEN = "tok-e2e-health-5c1e9a7f3b2d8c4e6a0f1b3d5e7c9a2b";

Deno.test("main() --enable-token-health-checker exits 1 at start when the token answers 401, naming its origin only", async () => {
  await using world = await startDemoWorld({ nodes: 1, services: 0, linodeToken: TOKEN });
  world.linode.setToken("the-real-token-is-another-one");
  const dir = world.kubeconfigPath.replace(/\/[^/]+$/, "");
  const result = await runCcmToExit(["--enable-token-health-checker", "--secure-port=0"], {
    env: { ...world.env },
    readDirs: [dir],
    name: "token-rejected",
  });
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    /the linode api token from LINODE_API_TOKEN is invalid: GET \/profile answered 401/,
  );
  assert.ok(!result.stderr.includes(TOKEN) && !result.stdout.includes(TOKEN), "the token was printed");
  assert.equal(world.linode.calls.count("GET /v4/profile"), 1);
  // Nothing was started: no Lease taken, no Linode listed.
  assert.equal(world.linode.calls.count("GET /v4/linode/instances"), 0);
  assert.equal(world.kube.store.get("leases", "cloud-controller-manager", "kube-system"), undefined);
});

Deno.test("runCcm() with the token health checker releases the Lease and ends token-invalid once the token is revoked", async () => {
  await using world = await startDemoWorld({ nodes: 2, services: 0, linodeToken: TOKEN });
  using lease = new LeaseHistory(world.kube);
  const parsed = parseConfig(
    ["--enable-token-health-checker", "--secure-port=0", ...FAST_LEASE_FLAGS],
    world.env,
  );
  if (parsed.kind !== "run") throw new Error(parsed.kind);
  const stop = new AbortController();
  const run = runCcm(parsed.config, {
    clock: systemClock,
    metrics: new Registry(),
    hostname: "token-test",
    tokenHealthPeriodMs: 100,
  }, stop.signal);
  try {
    await waitFor(() => lease.holder.startsWith("token-test_"), { what: "leadership" });
    const checksBefore = world.linode.calls.count("GET /v4/profile");
    await waitFor(() => world.linode.calls.count("GET /v4/profile") >= checksBefore + 2, {
      what: "periodic checks",
    });
    world.linode.setToken("rotated-by-the-operator");
    assert.equal(await run, "token-invalid");
    assert.equal(lease.holder, "", "the Lease is released so a replica with a valid token takes over");
  } finally {
    stop.abort();
    await run.catch(() => {});
  }
});
