/** `main.ts` as a process with SENTRY_DSN: failed syncs reach a stand-in Sentry endpoint, scrubbed; start warnings. */
import assert from "node:assert/strict";
import { startDemoWorld } from "../sim/demo_world.ts";
import { spawnCcm, waitFor } from "./process.ts";
import { startSentryStandIn } from "./sentry_standin.ts";

const TOKEN = "tok-e2e-sentry-3c9d1e7a5b2f8064c1d9";

Deno.test("main() with SENTRY_DSN reports a failed Service sync to Sentry without the token, and warns about unimplemented flags", async () => {
  await using world = await startDemoWorld({ nodes: 1, services: 1, linodeToken: TOKEN });
  await using standIn = startSentryStandIn();
  world.linode.faults.error(500, { method: "POST", route: "/nodebalancers" });
  await using ccm = spawnCcm(
    ["--leader-elect=false", "--secure-port=0", "--load-balancer-type=cilium-bgp", "--kube-api-qps=5"],
    {
      env: {
        ...world.env,
        SENTRY_DSN: standIn.dsn,
        SENTRY_ENVIRONMENT: "e2e",
        SENTRY_RELEASE: "test-release",
      },
      readDirs: [world.kubeconfigPath.replace(/\/[^/]+$/, "")],
    },
  );
  const tagsOf = (e: Record<string, unknown>) => (e.tags ?? {}) as Record<string, string>;
  const failedCreate = (e: Record<string, unknown>) =>
    tagsOf(e).queue === "service" && JSON.stringify(e.exception).includes("HTTP 500");
  await waitFor(() => standIn.events().some(failedCreate), {
    what: "a Sentry event for the Service sync whose NodeBalancer creation failed",
  });
  const event = standIn.events().find(failedCreate) ?? {};
  assert.equal(event.environment, "e2e");
  assert.equal(event.release, "test-release");
  assert.equal(tagsOf(event).cluster_name, "kubernetes");
  assert.ok(tagsOf(event).service, JSON.stringify(event));
  // As the Go CCM warns at start about its deprecated flags (and this one about flags it does not implement).
  assert.equal(ccm.logs(/load-balancer-type=cilium-bgp is not implemented/).length, 1, ccm.output);
  assert.equal(ccm.logs(/--kube-api-qps.* is accepted for compatibility but not implemented/).length, 1);
  ccm.kill("SIGTERM");
  assert.equal((await ccm.exited(10_000)).code, 0, ccm.output);
  for (const e of standIn.envelopes) {
    assert.ok(!e.raw.includes(TOKEN), "the Linode token reached Sentry");
    assert.ok(!e.raw.includes(world.kube.token), "the kube token reached Sentry");
  }
  assert.ok(!ccm.output.includes(standIn.dsn), "the DSN was printed");
});
